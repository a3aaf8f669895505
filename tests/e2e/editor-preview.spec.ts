/**
 * The editor's live preview, as a writer meets it: markdown reads as the
 * document (no `**`, headings at their size, links, a table, an image, lists
 * with bullets) and the marks show where the caret is; viewing never changes
 * the stored markdown; list keys (Enter continues, Enter on an empty item ends
 * the list, Tab indents); links in a table's cells and reference-style links
 * open like any link, a definition line faint until the caret is on it; the
 * document-wide switch to the markdown source, remembered on reload; spell
 * check on; a definition line at full size while the caret is on it; before
 * its editor mounts a section reads as the editor will show it, and mounting
 * moves nothing.
 */
import type { Locator, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, openLiveDocument, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
let server: TestServer;
let olive: TestUser;
let documentId: string;
let sectionIds: string[];
let page: Page;
let source: string;
const linksSource = [
  "| Tool | Where |",
  "|---|---|",
  "| Wiki | [the wiki](https://example.test/wiki) |",
  "",
  "Read the [style guide][style] and the [FAQ][].",
  "",
  "[style]: https://example.test/style",
  "[faq]: https://example.test/faq",
].join("\n");

const text = (t: string) => ({ blockType: "text" as const, text: t });

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  source = [
    "# Onboarding",
    "",
    "Welcome to **Acme**, read the [handbook](https://example.test/handbook) first.",
    "",
    "| Name | Role |",
    "|---|---|",
    "| Ada | Engineer |",
    "",
    `![Team photo](${server.url}/icon.svg)`,
    "",
    "> Ask anyone.",
  ].join("\n");
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/onboarding",
    name: "Onboarding",
    sections: [
      { name: "First day", content: [text(source)] },
      { name: "Checklist", content: [text("- laptop")] },
      { name: "Links", content: [text(linksSource)] },
    ],
  });
  documentId = created.documentId;
  sectionIds = created.sectionIds;
  page = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: olive.email, password: PASSWORD });
  await openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]! });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

const editorOf = (index: number): Locator =>
  page.locator(`[data-section-id="${sectionIds[index]}"] [data-testid="editor-prose"] .cm-content`);

/** The section's text as stored in the live draft (what a commit would store). */
const storedText = async (index: number): Promise<string> => {
  const read = await server.callTool("read", olive.userId, { documentId, includeDraft: true, sectionIds: [sectionIds[index]!] });
  const block = read.sections[0]!.content[0]!;
  return block.blockType === "text" ? block.text : `(a ${block.blockType} block)`;
};

const fontSize = (locator: Locator) => locator.evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));

const leaveEditors = () => page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

test("markdown reads as the document, marks show only at the caret, and viewing changes nothing stored", async () => {
  const editor = editorOf(0);
  await expect(editor).toContainText("Welcome to Acme, read the handbook");
  await expect(editor).not.toContainText("**");
  await expect(editor).not.toContainText("](");
  await expect(editor).not.toContainText("# Onboarding");
  await expect(editor).not.toContainText("> Ask anyone");

  const acme = editor.getByText("Acme", { exact: true });
  expect(Number(await acme.evaluate((el) => getComputedStyle(el).fontWeight))).toBeGreaterThanOrEqual(700);
  const heading = editor.getByText("Onboarding", { exact: true });
  const paragraph = editor.getByText(/^Welcome to/);
  const size = (locator: Locator) => locator.evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
  expect(await size(heading)).toBeGreaterThan((await size(paragraph)) * 1.2);

  const link = editor.getByRole("link", { name: "Open link https://example.test/handbook" });
  await expect(link).toHaveAttribute("href", "https://example.test/handbook");
  await expect(editor.locator(".cm-lp-link", { hasText: "handbook" })).toHaveAttribute("data-href", "https://example.test/handbook");

  await expect(editor.getByRole("table").getByRole("cell", { name: "Engineer" })).toBeVisible();
  await expect(editor.getByRole("columnheader", { name: "Role" })).toBeVisible();
  await expect(editor.getByRole("img", { name: "Team photo" })).toBeVisible();

  // The caret in the bold word shows its marks; the heading's line keeps its hidden.
  await acme.click();
  await expect(editor).toContainText("Welcome to **Acme**, read");
  await expect(editor).not.toContainText("# Onboarding");
  await heading.click();
  await expect(editor).toContainText("# Onboarding");
  await expect(editor).not.toContainText("**Acme**");

  // The image on its own line shows its markdown once clicked, the image still below it.
  await editor.getByRole("img", { name: "Team photo" }).click();
  await expect(editor).toContainText(`![Team photo](${server.url}/icon.svg)`);
  await expect(editor.getByRole("img", { name: "Team photo" })).toBeVisible();

  await leaveEditors();
  await expect(editor).not.toContainText("# Onboarding");
  await expect(editor).not.toContainText("![Team photo]");
  await photograph(page, "editor-preview");
  expect(await storedText(0)).toBe(source);
});

test("a table turns into its text when the caret enters it, and is edited as text", async () => {
  const editor = editorOf(0);
  await editor.getByRole("cell", { name: "Engineer" }).click();
  await expect(editor.getByRole("table")).toHaveCount(0);
  await expect(editor).toContainText("| Ada | Engineer |");
  // The caret is at the table's start: down to Ada's row, before its closing bar.
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("End");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.press("ArrowLeft");
  await page.keyboard.type(" lead");
  await editor.getByText("Ask anyone.").click();
  await expect(editor.getByRole("cell", { name: "Engineer lead" })).toBeVisible();
  await expect.poll(() => storedText(0)).toBe(source.replace("| Ada | Engineer |", "| Ada | Engineer lead |"));
});

test("a link in a table cell opens with its ↗ or Ctrl+click, and reference links render as links", async () => {
  const context = page.context();
  await context.route("https://example.test/**", (route) => route.fulfill({ contentType: "text/html", body: "<title>Elsewhere</title>" }));
  const editor = editorOf(2);
  const table = editor.getByRole("table");
  const cell = table.getByRole("cell", { name: /the wiki/ });
  await expect(cell.getByRole("link", { name: "Open link https://example.test/wiki" })).toHaveAttribute(
    "href",
    "https://example.test/wiki",
  );
  await expect(cell).not.toContainText("](");

  // The ↗ opens the page in a new tab and leaves the table rendered.
  const [byButton] = await Promise.all([
    context.waitForEvent("page"),
    cell.getByRole("link", { name: "Open link https://example.test/wiki" }).click(),
  ]);
  expect(byButton.url()).toBe("https://example.test/wiki");
  await byButton.close();
  await expect(table).toBeVisible();
  // Ctrl+click on the link's text opens it too.
  const [byText] = await Promise.all([context.waitForEvent("page"), cell.getByText("the wiki").click({ modifiers: ["Control"] })]);
  expect(byText.url()).toBe("https://example.test/wiki");
  await byText.close();
  await expect(table).toBeVisible();
  // A plain click edits the table as text, as before.
  await cell.getByText("the wiki").click();
  await expect(editor.getByRole("table")).toHaveCount(0);
  await expect(editor).toContainText("|---|---|");
  await leaveEditors();

  // `[text][ref]` and `[ref][]` take their URL from the definitions below them.
  const paragraph = editor.locator(".cm-line", { hasText: "Read the" });
  await expect(paragraph).toContainText("Read the style guide");
  await expect(paragraph).not.toContainText("[style]");
  await expect(paragraph).not.toContainText("[]");
  await expect(paragraph.getByRole("link", { name: "Open link https://example.test/style" })).toHaveAttribute(
    "href",
    "https://example.test/style",
  );
  await expect(paragraph.getByRole("link", { name: "Open link https://example.test/faq" })).toBeVisible();
  const [byReference] = await Promise.all([
    context.waitForEvent("page"),
    paragraph.getByText("style guide").click({ modifiers: ["Control"] }),
  ]);
  expect(byReference.url()).toBe("https://example.test/style");
  await byReference.close();

  // The definition lines are small and faint while the caret is elsewhere.
  const definition = editor.locator(".cm-line", { hasText: "[style]: https://example.test/style" });
  await expect(definition).toHaveClass(/cm-lp-link-definition/);
  const size = (locator: Locator) => locator.evaluate((el) => Number.parseFloat(getComputedStyle(el).fontSize));
  expect(await size(definition)).toBeLessThan(await size(paragraph));
  await photograph(page, "editor-preview-links");
  expect(await storedText(2)).toBe(linksSource);
  await context.unroute("https://example.test/**");
});

test("lists: bullets drawn, Enter continues, Tab indents, Enter on empty items ends the list cleanly", async () => {
  const editor = editorOf(1);
  await expect(editor).toContainText("• laptop");
  await editor.getByText("laptop").click();
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("badge");
  await page.keyboard.press("Tab");
  await expect.poll(() => storedText(1)).toBe("- laptop\n  - badge");
  // The nested bullet is drawn as the second level's.
  await expect(editor).toContainText("◦");
  await page.keyboard.press("Enter");
  await page.keyboard.press("Enter");
  await expect.poll(() => storedText(1)).toBe("- laptop\n  - badge\n- ");
  await page.keyboard.press("Enter");
  await page.keyboard.type("Then meet the team.");
  await expect.poll(() => storedText(1)).toBe("- laptop\n  - badge\n\nThen meet the team.");
  await expect(editor.locator(".cm-line").last()).toHaveText("Then meet the team.");
  await expect(editor).toHaveAttribute("spellcheck", "true");
});

test("the source switch shows the markdown in every section, and is remembered for the document", async () => {
  const toggle = page.getByRole("button", { name: "Markdown source" });
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  const editor = editorOf(0);
  await expect(editor).toContainText("# Onboarding");
  await expect(editor).toContainText("Welcome to **Acme**, read the [handbook](https://example.test/handbook) first.");
  await expect(editor).toContainText("| Ada | Engineer lead |");
  await expect(editorOf(1)).toContainText("- laptop");
  await photograph(page, "editor-preview-source");

  await openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]! });
  await expect(page.getByRole("button", { name: "Markdown source" })).toHaveAttribute("aria-pressed", "true");
  await expect(editorOf(0)).toContainText("Welcome to **Acme**");
  await page.getByRole("button", { name: "Markdown source" }).click();
  await expect(editorOf(0)).not.toContainText("**");
});

test("a link definition line is shown at full size while the caret is on it, as any line being edited", async () => {
  const editor = editorOf(2);
  const definition = editor.locator(".cm-line", { hasText: "[style]: https://example.test/style" });
  const paragraph = editor.locator(".cm-line", { hasText: "Read the" });
  await expect(definition).toHaveClass(/cm-lp-link-definition/);
  expect(await fontSize(definition)).toBeLessThan(await fontSize(paragraph));
  // Below a rendered table: the click lands on the line under the pointer (the editor knows the table's full height).
  await definition.click();
  await expect(definition).not.toHaveClass(/cm-lp-link-definition/);
  expect(await fontSize(definition)).toBe(await fontSize(paragraph));
  // The other definition, without the caret, stays the small note it is.
  await expect(editor.locator(".cm-line", { hasText: "[faq]: https://example.test/faq" })).toHaveClass(/cm-lp-link-definition/);
  await leaveEditors();
  await expect(definition).toHaveClass(/cm-lp-link-definition/);
  expect(await storedText(2)).toBe(linksSource);
});

test("before its editor mounts a section reads as the editor will show it, and nothing moves when the editor arrives", async ({
  browser,
}) => {
  // A document of its own: the page renders the text as committed, which the tests above have since edited in the draft.
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/first-day",
    name: "First day",
    sections: [{ name: "First day", content: [text(source)] }],
  });
  const sectionId = created.sectionIds[0]!;
  const viewer = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: olive.email, password: PASSWORD });
  // The section's room is held back until the placeholder has been looked at.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  await viewer.routeWebSocket(
    (url) => url.pathname.endsWith(`/~${sectionId}`),
    async (socket) => {
      await held;
      socket.connectToServer();
    },
  );
  await viewer.goto(`${server.url}/documents/${created.documentId}?branch=main`);
  const section = viewer.locator(`[data-section-id="${sectionId}"]`);
  const placeholder = section.locator(".live-text-placeholder");
  await expect(placeholder).toContainText("Welcome to Acme, read the handbook");
  await expect(section).toHaveAttribute("data-synced", "false");
  await expect(placeholder).not.toContainText("**");
  await expect(placeholder).not.toContainText("](");
  await expect(placeholder).not.toContainText("# Onboarding");
  await expect(placeholder).not.toContainText("> Ask anyone");
  await expect(placeholder.getByRole("cell", { name: /Engineer/ })).toBeVisible();
  await expect(placeholder.getByRole("link", { name: "Open link https://example.test/handbook" })).toBeVisible();
  const image = placeholder.getByRole("img", { name: "Team photo" });
  await expect(image).toBeVisible();
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  expect(await fontSize(placeholder.getByText("Onboarding", { exact: true }))).toBeGreaterThan(
    (await fontSize(placeholder.getByText(/^Welcome to/))) * 1.2,
  );

  /** Where the section's pieces are drawn: words by their own text ranges, the table and image by their boxes, and the section. */
  const layout = () =>
    section.evaluate((root) => {
      const box = (r: DOMRect) => [r.x, r.y, r.width, r.height].map(Math.round);
      const words = (needle: string) => {
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent?.indexOf(needle) ?? -1;
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + needle.length);
          return box(range.getBoundingClientRect());
        }
        return null;
      };
      return {
        section: box(root.getBoundingClientRect()),
        heading: words("Onboarding"),
        bold: words("Acme"),
        link: words("handbook"),
        quote: words("Ask anyone."),
        table: box(root.querySelector("table")!.getBoundingClientRect()),
        image: box(root.querySelector('img[alt="Team photo"]')!.getBoundingClientRect()),
      };
    });
  const before = await layout();
  expect(before.heading).not.toBeNull();
  await viewer.evaluate(() => {
    const page = window as { shifted?: number };
    page.shifted = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as Array<PerformanceEntry & { value: number }>) page.shifted! += entry.value;
    }).observe({ type: "layout-shift" });
  });
  release();
  await expect(section).toHaveAttribute("data-synced", "true");
  await expect(section.locator('[data-testid="editor-prose"] .cm-content')).toHaveAttribute("contenteditable", "true");
  await expect(section.locator(".live-text-placeholder")).toHaveCount(0);
  await viewer.waitForTimeout(300);
  const after = await layout();
  // Within a pixel (rounding of sub-pixel positions): the heading keeps its size, the words their places, the section its height.
  for (const [what, box] of Object.entries(before)) {
    const now = after[what as keyof typeof after]!;
    box!.forEach((value, i) => {
      expect(
        Math.abs(now[i]! - value),
        `${what} [x, y, width, height] ${JSON.stringify(box)} → ${JSON.stringify(now)}`,
      ).toBeLessThanOrEqual(1);
    });
  }
  // Nothing ends up moved (above). On the way, the lines under an image may move once by the difference between its
  // estimated and drawn height, when CodeMirror lays the widget out before measuring it: a shift of 0.0018 was seen
  // on a loaded box (the line under the image, 32 px, and back), none on a quiet one (bench/README.md, the editor).
  expect(await viewer.evaluate(() => (window as { shifted?: number }).shifted)).toBeLessThan(0.005);
  await viewer.context().close();
});
