/**
 * The editor's blocks and section structure in a real Chromium: the Insert
 * block menu adds every block kind (a CSV shows its first rows, a bad
 * database id is refused in place), also with keys only; a section is added
 * in the middle; a deleted section comes back with Undo, same id, same
 * place; a section dragged by its handle is marked where it will land and
 * keeps its new place after a reload;
 * a block from the menu or a pasted image goes after the block the writer is
 * in, while a peer's typing in the section is kept; a CSV block is moved
 * (↑, drag), removed (⋯, Delete) and brought back with Undo, each commit
 * storing what the page shows; an image gets alt text and a caption.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { text } from "../helpers/blocks";
import { closeBrowserContexts, openLiveDocument, sectionAction, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

let server: TestServer;
let olive: TestUser;
let documentId: string;
let sectionIds: string[];
let page: Page;

const section = (id: string) => page.locator(`[data-section-id="${id}"]`);
const names = () => page.locator('[data-testid="live-section"] h2');

const openDocument = () => openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]! });

async function headContent(sectionId: string, ofDocument = documentId) {
  const read = await server.callTool("read", olive.userId, { documentId: ofDocument, sectionIds: [sectionId] });
  return read.sections[0]!.content;
}

/** Chooses a file kind from the section's menu and hands the file chooser a file. */
async function insertFile(sectionId: string, item: string, file: { name: string; mimeType: string; buffer: Buffer }) {
  await section(sectionId).getByRole("button", { name: "+ Insert block" }).click();
  const chooser = page.waitForEvent("filechooser");
  await section(sectionId).getByRole("menuitem", { name: item }).click();
  await (await chooser).setFiles(file);
}

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/blocks",
    name: "Blocks plan",
    sections: [
      { name: "Goals", content: [text("We launch in spring.")] },
      { name: "Risks", content: [text("Suppliers may be late.")] },
      { name: "Budget", content: [text("Ten thousand euros.")] },
    ],
  });
  documentId = created.documentId;
  sectionIds = created.sectionIds;
  const context = await browser.newContext({ viewport: WIDE });
  page = await signInPage(context, server.url, { email: olive.email, password: PASSWORD });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("the Insert block menu adds each block kind to the section, one commit each, and shows it", async () => {
  await openDocument();
  const goals = sectionIds[0]!;
  await section(goals).getByRole("button", { name: "+ Insert block" }).click();
  await expect(section(goals).getByRole("menu", { name: "Insert block" })).toBeVisible();
  await photograph(page, "editor-block-menu");
  await section(goals).getByRole("menuitem", { name: "Text" }).click();
  await expect(section(goals).getByTestId("editor-prose")).toHaveCount(2);

  await insertFile(goals, "Image…", { name: "dot.png", mimeType: "image/png", buffer: PNG });
  await expect(section(goals).locator("figure.block-image img")).toBeVisible();

  await insertFile(goals, "File…", { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("plain notes") });
  await expect(section(goals).getByRole("link", { name: "notes.txt" })).toBeVisible();

  const csv = 'city,people\nLyon,"522,000"\nGhent,265000\nPorto,232000\n';
  await insertFile(goals, "CSV table…", { name: "cities.csv", mimeType: "text/csv", buffer: Buffer.from(csv) });
  const preview = section(goals).getByTestId("csv-preview");
  await expect(preview.locator("th")).toHaveText(["city", "people"]);
  await expect(preview.locator("tbody tr").first().locator("td")).toHaveText(["Lyon", "522,000"]);
  await expect(preview.locator("tbody tr")).toHaveCount(3);

  await section(goals).getByRole("button", { name: "+ Insert block" }).click();
  await section(goals).getByRole("menuitem", { name: "Document link…" }).click();
  await section(goals).getByLabel("Document URL").fill("https://example.org/report.pdf");
  await section(goals).getByLabel("Name shown").fill("Annual report");
  await section(goals).getByRole("button", { name: "Add block" }).click();
  await expect(section(goals).getByRole("link", { name: "Annual report" })).toBeVisible();

  await section(goals).getByRole("button", { name: "+ Insert block" }).click();
  await section(goals).getByRole("menuitem", { name: "Database embed…" }).click();
  await section(goals).getByLabel("Database id").fill("not-a-uuid");
  await section(goals).getByRole("button", { name: "Add block" }).click();
  await expect(section(goals).getByRole("alert")).toContainText(/uuid|id/i);
  const databaseId = "2f1c7a52-6d1b-4f55-9d5e-1f5b0c3a7e11";
  await section(goals).getByLabel("Database id").fill(databaseId);
  await section(goals).getByRole("button", { name: "Add block" }).click();
  await expect(section(goals).getByText(databaseId)).toBeVisible();

  const content = await headContent(goals);
  expect(content.map((b) => b.blockType)).toEqual(["text", "text", "image", "file", "csv", "document", "database_embed"]);
  expect(content[4]).toMatchObject({ filename: "cities.csv", headers: ["city", "people"], rowCount: 3 });
});

test("the menu opens and inserts with keys only", async () => {
  await openDocument();
  const risks = sectionIds[1]!;
  const toggle = section(risks).getByRole("button", { name: "+ Insert block" });
  await toggle.focus();
  await page.keyboard.press("Enter");
  await expect(section(risks).getByRole("menuitem", { name: "Text" })).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await expect(section(risks).getByRole("menuitem", { name: "Image…" })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(toggle).toBeFocused();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  await expect(section(risks).getByRole("menuitem", { name: "Link to a Quire document…" })).toBeFocused();
  await page.keyboard.press("Home");
  await page.keyboard.press("Enter");
  await expect(section(risks).getByTestId("editor-prose")).toHaveCount(2);
  expect((await headContent(risks)).length).toBe(2);
});

test("a section is added in the middle with Add section below", async () => {
  await openDocument();
  await sectionAction(section(sectionIds[0]!), "Add section below");
  await page.getByLabel("New section name").fill("Timeline");
  await page.getByRole("button", { name: "Add section", exact: true }).click();
  await expect(names()).toHaveText(["Goals", "Timeline", "Risks", "Budget"]);
});

test("a deleted section comes back with Undo at its place with its id, name and content", async () => {
  await openDocument();
  const risks = sectionIds[1]!;
  await sectionAction(section(risks), "Delete section");
  await expect(names()).toHaveText(["Goals", "Timeline", "Budget"]);
  const toast = page.getByTestId("toast");
  await expect(toast).toContainText("Section deleted");
  await photograph(page, "editor-block-menu-undo");
  await toast.getByRole("button", { name: "Undo" }).click();
  await expect(names()).toHaveText(["Goals", "Timeline", "Risks", "Budget"]);
  await expect(section(risks)).toBeVisible();
  const content = await headContent(risks);
  expect(content[0]).toEqual(text("Suppliers may be late."));
});

test("a section dragged by its handle to a new place keeps it after a reload", async () => {
  await openDocument();
  const budget = section(sectionIds[2]!);
  const timeline = page.locator('[data-testid="live-section"]').nth(1);
  await expect(timeline.locator("h2")).toHaveText("Timeline");
  await budget.scrollIntoViewIfNeeded();
  await expect(budget).toHaveAttribute("data-synced", "true");
  // Its upper half: the drop lands before Timeline, and a line at Timeline's top says so while dragging.
  await budget.getByTestId("drag-handle").hover();
  await page.mouse.down();
  const box = (await timeline.boundingBox())!;
  await page.mouse.move(box.x + 40, box.y + 10, { steps: 5 });
  await expect(timeline).toHaveAttribute("data-drop", "before");
  await expect(page.locator("[data-drop]")).toHaveCount(1);
  await page.mouse.up();
  await expect(names()).toHaveText(["Goals", "Budget", "Timeline", "Risks"]);
  await expect(page.locator("[data-drop]")).toHaveCount(0);
  await expect(page.getByTestId("structure-status")).toHaveText("Moved “Budget” before “Timeline”.");
  await page.reload();
  await expect(names()).toHaveText(["Goals", "Budget", "Timeline", "Risks"]);
});

test("a block from the menu, or a pasted image, goes after the block the writer is in, and a peer's typing meanwhile is kept", async ({
  browser,
}) => {
  const mo = await server.createUser("mo.blocks@example.test", "Mo Member", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/places",
    name: "Places",
    sections: [{ name: "Plan", content: [text("First paragraph."), text("Last paragraph.")] }],
  });
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId: created.documentId,
    grants: [{ userId: mo.userId, permission: "edit" }],
  });
  const plan = created.sectionIds[0]!;
  const peer = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: mo.email, password: PASSWORD });
  await openLiveDocument(peer, server.url, { documentId: created.documentId, firstSectionId: plan });
  await openLiveDocument(page, server.url, { documentId: created.documentId, firstSectionId: plan });
  const prose = (p: Page) => p.locator(`[data-section-id="${plan}"] [data-testid="editor-prose"] .cm-content`);

  // Mo types at the end of the last paragraph while Olive adds a text block after the first.
  await prose(peer).last().click();
  await peer.keyboard.press("End");
  await peer.keyboard.type(" Mo was here.");
  await prose(page).first().click();
  await section(plan).getByRole("button", { name: "+ Insert block" }).click();
  await section(plan).getByRole("menuitem", { name: "Text" }).click();
  await expect(prose(page)).toHaveCount(3);
  expect((await headContent(plan, created.documentId)).map((b) => (b.blockType === "text" ? b.text : b.blockType))).toEqual([
    "First paragraph.",
    "",
    "Last paragraph.",
  ]);
  // (Contains: the other person's caret label is drawn inside the text.)
  await expect(prose(peer).last()).toContainText("Last paragraph. Mo was here.");
  await expect(prose(page).last()).toContainText("Last paragraph. Mo was here.");
  await expect(prose(page).nth(1)).not.toContainText("Mo was here.");

  // An image pasted into the first paragraph lands right after it.
  await prose(page).first().click();
  await prose(page)
    .first()
    .evaluate(
      (editor, bytes) => {
        const data = new DataTransfer();
        data.items.add(new File([new Uint8Array(bytes)], "pasted.png", { type: "image/png" }));
        editor.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
      },
      [...PNG],
    );
  await expect
    .poll(async () => (await headContent(plan, created.documentId)).map((b) => b.blockType))
    .toEqual(["text", "image", "text", "text"]);
  await peer.context().close();
});

test("Link to a Quire document finds only documents the writer may see, adds it to See also, and an editor removes it", async ({
  browser,
}) => {
  const ana = await server.createUser("ana.links@example.test", "Ana Links", PASSWORD);
  const own = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/links",
    name: "Links plan",
    sections: [{ name: "Partners", content: [text("Who we work with.")] }],
  });
  await server.callTool("documents", olive.userId, {
    action: "create",
    path: "legal/supplier-contracts",
    name: "Supplier contracts",
  });
  const secret = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "legal/supplier-salaries",
    name: "Supplier salaries",
  });
  await server.callTool("documents", olive.userId, { action: "set_permissions", documentId: secret.documentId, defaultPermission: "none" });
  const anaPage = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: ana.email, password: PASSWORD });
  const partners = own.sectionIds[0]!;
  await openLiveDocument(anaPage, server.url, { documentId: own.documentId, firstSectionId: partners });
  const inSection = anaPage.locator(`[data-section-id="${partners}"]`);
  await inSection.getByRole("button", { name: "+ Insert block" }).click();
  await inSection.getByRole("menuitem", { name: "Link to a Quire document…" }).click();
  await anaPage.getByLabel("Find a document by name or path").fill("supplier");
  const results = inSection.getByRole("list", { name: "Matching documents" }).getByRole("button");
  await expect(results).toHaveCount(1);
  await expect(results).toContainText("Supplier contracts");
  await photograph(anaPage, "editor-document-link-picker");
  // The keyboard way: down from the field to the result, Enter.
  await anaPage.keyboard.press("ArrowDown");
  await expect(results.first()).toBeFocused();
  await anaPage.keyboard.press("Enter");
  const seeAlso = inSection.locator(".references");
  await expect(seeAlso.getByRole("link", { name: "Supplier contracts" })).toBeVisible();
  const read = await server.callTool("read", olive.userId, { documentId: own.documentId });
  expect(read.sections[0]!.references).toMatchObject([{ displayTitle: "Supplier contracts", targetSectionId: null }]);

  await seeAlso.getByRole("button", { name: "Remove the link to Supplier contracts" }).click();
  await expect(seeAlso).toHaveCount(0);
  expect((await server.callTool("read", olive.userId, { documentId: own.documentId })).sections[0]!.references).toEqual([]);
  await anaPage.context().close();
});

test("a CSV block is moved up, dragged back down, removed, brought back with Undo and removed again; each commit stores it", async () => {
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/handles",
    name: "Handles plan",
    sections: [{ name: "Data", content: [text("Before the table."), text("After the table.")] }],
  });
  const data = created.sectionIds[0]!;
  const inSection = page.locator(`[data-section-id="${data}"]`);
  const stored = async () => (await headContent(data, created.documentId)).map((b) => (b.blockType === "text" ? b.text : b.blockType));
  const commit = async () => {
    const bar = page.getByTestId("commit-bar");
    await bar.getByRole("button", { name: "Commit" }).click();
    await expect(bar).toHaveCount(0);
  };
  await openLiveDocument(page, server.url, { documentId: created.documentId, firstSectionId: data });
  await insertFile(data, "CSV table…", { name: "team.csv", mimeType: "text/csv", buffer: Buffer.from("name,role\nAda,lead\n") });
  const table = inSection.getByRole("group", { name: "CSV table block" });
  await expect(table).toBeVisible();
  expect(await stored()).toEqual(["Before the table.", "After the table.", "csv"]);
  const order = () =>
    inSection.locator(".live-blocks > [data-block-index]").evaluateAll((blocks) => blocks.map((b) => b.getAttribute("data-testid")));

  // ↑ moves it above the text before it; the move is a draft edit, kept by Commit.
  await table.getByRole("button", { name: "Move block up" }).click();
  await expect.poll(order).toEqual(["editor-prose", "block-frame", "editor-prose"]);
  await expect(table.getByRole("button", { name: "Move block up" })).toBeFocused();
  await photograph(page, "editor-blocks");
  await commit();
  expect(await stored()).toEqual(["Before the table.", "csv", "After the table."]);

  // Dragged by its grip onto the lower half of the last text block, it goes after it.
  const last = inSection.getByTestId("editor-prose").nth(1);
  await table.locator(".drag-handle").dragTo(last, { targetPosition: { x: 20, y: ((await last.boundingBox())?.height ?? 20) - 4 } });
  await expect.poll(order).toEqual(["editor-prose", "editor-prose", "block-frame"]);
  await commit();
  expect(await stored()).toEqual(["Before the table.", "After the table.", "csv"]);

  // Removed from its ⋯ menu; Undo in the notice puts it back in its place.
  await table.getByRole("button", { name: "More actions for this csv table" }).click();
  await inSection.getByRole("menuitem", { name: "Remove block" }).click();
  await expect(table).toHaveCount(0);
  const toast = page.getByTestId("toast");
  await expect(toast).toContainText("CSV table removed");
  await toast.getByRole("button", { name: "Undo" }).click();
  await expect(table).toBeVisible();
  await expect.poll(order).toEqual(["editor-prose", "editor-prose", "block-frame"]);

  // Selected (focused) and Delete: gone, and the commit stores its absence.
  await table.focus();
  await page.keyboard.press("Delete");
  await expect(table).toHaveCount(0);
  await commit();
  expect(await stored()).toEqual(["Before the table.", "After the table."]);
});

test("an image gets alt text and a caption: saved in its block, shown under it and read by the screen reader", async () => {
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/pictures",
    name: "Pictures plan",
    sections: [{ name: "Team", content: [text("Our team.")] }],
  });
  const team = created.sectionIds[0]!;
  const inSection = page.locator(`[data-section-id="${team}"]`);
  await openLiveDocument(page, server.url, { documentId: created.documentId, firstSectionId: team });
  await insertFile(team, "Image…", { name: "dot.png", mimeType: "image/png", buffer: PNG });
  const image = inSection.getByRole("group", { name: "Image block" });
  await expect(image.locator("img")).toBeVisible();
  await image.getByRole("button", { name: "More actions for this image" }).click();
  await inSection.getByRole("menuitem", { name: "Alt text and caption…" }).click();
  const form = image.getByRole("form", { name: "Image description" });
  await form.getByLabel("Alt text").fill("A single blue dot");
  await form.getByLabel("Caption").fill("The smallest team photo");
  await photograph(page, "editor-blocks-image");
  await form.getByRole("button", { name: "Save" }).click();
  await expect(image.getByRole("img", { name: "A single blue dot" })).toBeVisible();
  await expect(image.locator("figcaption")).toHaveText("The smallest team photo");
  await page.getByTestId("commit-bar").getByRole("button", { name: "Commit" }).click();
  await expect(page.getByTestId("commit-bar")).toHaveCount(0);
  const [, block] = await headContent(team, created.documentId);
  expect(block).toMatchObject({ blockType: "image", type: "storage", alt: "A single blue dot", caption: "The smallest team photo" });
  // After a reload the page renders it from the stored block.
  await page.reload();
  await expect(inSection.getByRole("img", { name: "A single blue dot" })).toBeVisible();
  await expect(inSection.locator("figcaption")).toHaveText("The smallest team photo");
});
