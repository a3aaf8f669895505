/**
 * Comments from the editor: select text, Comment, write it and whom it
 * mentions; it shows highlighted at once and in the comments panel as not yet
 * committed; Commit stores it as a comment with its author and mentions. A
 * comment may not overlap another; Ctrl/⌘+Alt+M opens the form; a reader
 * sees the panel and no Comment; a hidden section's comment never reaches the
 * panel of someone who may not see it.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { signInPage, openLiveDocument } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";

let server: TestServer;
let olive: TestUser;
let mo: TestUser;
let rex: TestUser;
let documentId: string;
let sectionIds: string[];
let olivePage: Page;

const text = (t: string) => ({ blockType: "text" as const, text: t });

async function signedIn(browser: Browser, email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: WIDE });
  return signInPage(context, server.url, { email, password: PASSWORD });
}

const openDocument = (page: Page, branch = "main") =>
  openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]!, branch });

const sectionOf = (page: Page, index: number) => page.locator(`[data-section-id="${sectionIds[index]}"]`);

/** Selects the last `length` characters before the end of the section's text minus `skip` (keyboard only). */
async function selectNearEnd(page: Page, index: number, skip: number, length: number): Promise<void> {
  await sectionOf(page, index).getByTestId("editor-prose").locator(".cm-content").click();
  await page.keyboard.press("End");
  for (let i = 0; i < skip; i++) await page.keyboard.press("ArrowLeft");
  for (let i = 0; i < length; i++) await page.keyboard.press("Shift+ArrowLeft");
}

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  mo = await server.createUser("mo@example.test", "Mo Member", PASSWORD);
  rex = await server.createUser("rex@example.test", "Rex Reader", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/comments",
    name: "Launch plan",
    sections: [
      { name: "Goals", content: [text("We launch in spring.")] },
      { name: "Salaries", content: [text("Confidential figures.")] },
    ],
  });
  documentId = created.documentId;
  sectionIds = created.sectionIds;
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId,
    grants: [
      { userId: rex.userId, permission: "read" },
      { userId: mo.userId, permission: "edit" },
    ],
  });
  olivePage = await signedIn(browser, olive.email);
});

test.afterAll(async () => {
  await server?.close();
});

test("a comment on a selection shows at once, is listed as not committed, and Commit stores it with its author and mentions", async () => {
  await openDocument(olivePage);
  const goals = sectionOf(olivePage, 0);
  await selectNearEnd(olivePage, 0, 1, "spring".length);
  await goals.getByRole("button", { name: "Comment" }).click();
  const form = goals.getByRole("form", { name: "New comment" });
  await form.getByLabel("Comment").fill('Is "spring" firm? <ask finance>');
  await form.getByLabel("Mo Member").check();
  await photograph(olivePage, "editor-comment-form");
  await form.getByRole("button", { name: "Add comment" }).click();
  await expect(form).toHaveCount(0);
  await expect(goals.locator(".cm-comment-mark")).toHaveText("spring");
  // The tags stay hidden in the editor.
  await expect(goals.getByTestId("editor-prose")).toHaveText("We launch in spring.");

  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  const thread = olivePage.getByTestId("comment-thread");
  await expect(thread).toHaveCount(1);
  await expect(thread).toContainText('Is "spring" firm? <ask finance>');
  await expect(thread).toContainText("Not committed yet");
  await expect(thread.locator("blockquote")).toHaveText("spring");

  const bar = olivePage.getByTestId("commit-bar");
  await expect(bar).toBeVisible({ timeout: 10_000 });
  await bar.getByRole("button", { name: "Commit" }).click();
  await expect(bar).toHaveCount(0);

  const goalsRead = (await server.callTool("read", olive.userId, { documentId, sectionIds: [sectionIds[0]!] })).sections[0]!;
  const comment = goalsRead.comments[0]!;
  expect(comment).toMatchObject({ body: 'Is "spring" firm? <ask finance>', authorId: olive.userId, mentions: [mo.userId] });
  expect(goalsRead.content).toEqual([text(`We launch in <svc:comment id="${comment.commentId}">spring</svc:comment>.`)]);

  await olivePage.getByRole("button", { name: "Refresh" }).click();
  await expect(thread).not.toContainText("Not committed yet");
  await expect(thread).toContainText("Olive Owner");
  await expect(thread.getByRole("link", { name: "Goals" })).toHaveAttribute("href", `#section-${sectionIds[0]}`);
  await photograph(olivePage, "editor-comments-panel");
});

test("a comment may not overlap another, and Ctrl+Alt+M opens the form from the keyboard", async () => {
  const goals = sectionOf(olivePage, 0);
  // "in spring": across the start of the existing comment.
  await selectNearEnd(olivePage, 0, 1, "in spring".length);
  await olivePage.keyboard.press("Control+Alt+M");
  const form = goals.getByRole("form", { name: "New comment" });
  await expect(form.getByLabel("Comment")).toBeFocused();
  await form.getByLabel("Comment").fill("Overlapping");
  await form.getByRole("button", { name: "Add comment" }).click();
  await expect(form.getByRole("alert")).toContainText("cannot overlap another comment");
  await form.getByRole("button", { name: "Cancel" }).click();
  const draft = await server.callTool("read", olive.userId, { documentId, includeDraft: true, sectionIds: [sectionIds[0]!] });
  expect(JSON.stringify(draft.sections[0]!.content)).not.toContain("comment-new");
});

test("a reader sees the comments and is offered no Comment", async ({ browser }) => {
  const page = await signedIn(browser, rex.email);
  await openDocument(page);
  await page.getByRole("button", { name: /^Comments/ }).click();
  await expect(page.getByTestId("comment-thread")).toHaveCount(1);
  await expect(page.getByTestId("comment-thread")).toContainText('Is "spring" firm?');
  await expect(page.getByRole("button", { name: "Comment", exact: true })).toHaveCount(0);
  await expect(page.getByTestId("editor-prose")).toHaveCount(0);
  await page.context().close();
});

test("a comment in a section hidden from someone never reaches their comment panel", async ({ browser }) => {
  // Section overrides are set on a branch (the default branch takes them by merge request).
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "private", sourceBranch: "main" });
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId,
    branchName: "private",
    sectionId: sectionIds[1]!,
    newContent: [text('<svc:comment-new body="Cut these">Confidential</svc:comment-new> figures.')],
    defaultPermission: "none",
  });
  const page = await signedIn(browser, mo.email);
  const answers: string[] = [];
  page.on("response", async (response) => {
    if (response.request().method() === "POST") answers.push(await response.text().catch(() => ""));
  });
  await openDocument(page, "private");
  await page.getByRole("button", { name: /^Comments/ }).click();
  await expect(page.getByTestId("comment-thread")).toHaveCount(1);
  await expect(page.getByTestId("comment-thread")).toContainText('Is "spring" firm?');
  expect(answers.join("")).not.toContain("Cut these");
  // Olive, who may see the section, has both.
  await openDocument(olivePage, "private");
  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  await expect(olivePage.getByTestId("comment-thread")).toHaveCount(2);
  await expect(olivePage.getByTestId("comment-thread").nth(1)).toContainText("Cut these");
  await page.context().close();
});
