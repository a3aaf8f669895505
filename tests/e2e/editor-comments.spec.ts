/**
 * Comments from the editor, as two people working at once: one selects text,
 * Comment, writes it with `@` completing whom it mentions, and posts it; it
 * is saved at once — highlighted, beside the text and in the panel of the
 * other person's open page, with nobody committing — the mentioned person
 * has it in their inbox, and the commit stores its anchor with the text. A
 * comment may not overlap another; Ctrl/⌘+Alt+M opens the form; a reader
 * sees the panel and no Comment; a hidden section's comment never reaches the
 * panel of someone who may not see it. Threads: a reply, Resolve (the
 * highlight muted), Show resolved, Reopen, from the keyboard; replies and
 * resolutions reach the other page live; at 390 px the threads are in the
 * panel; a reader gets no reply box; a thread whose section is deleted leaves
 * the open panel; a failed reply says why and keeps the text; clicking a
 * thread's quote brings the highlighted span itself into view and focus, even
 * in a section whose editor had not mounted yet.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, openLiveDocument, signInPage } from "../helpers/browser";
import { NARROW, photograph, WIDE } from "../helpers/screenshots";
import { CROWD, startTestServer, type TestServer, type TestUser } from "../helpers/server";

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

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("a comment posted by one person is saved at once: highlighted, beside the text and in the panel of another person, with no commit; @ completes the member it mentions", async ({
  browser,
}) => {
  const moPage = await signedIn(browser, mo.email);
  await openDocument(moPage);
  await openDocument(olivePage);
  const goals = sectionOf(olivePage, 0);
  await selectNearEnd(olivePage, 0, 1, "spring".length);
  await goals.getByRole("button", { name: "Comment" }).click();
  const form = goals.getByRole("form", { name: "New comment" });
  const box = form.getByRole("combobox", { name: "Comment" });
  await expect(box).toBeFocused();
  await box.fill('Is "spring" firm? <ask finance>');
  await box.pressSequentially(" @m");
  // Typing after @ offers the members it matches, the first active; Escape closes the list, typing on opens it again.
  const list = form.getByRole("listbox", { name: "Mention someone" });
  await expect(list.getByRole("option")).toHaveText([/Mo Member/]);
  await expect(list.getByRole("option", { name: /Mo Member/ })).toHaveAttribute("aria-selected", "true");
  await expect(box).toHaveAttribute("aria-activedescendant", (await list.getByRole("option").getAttribute("id"))!);
  await olivePage.keyboard.press("Escape");
  await expect(list).toBeHidden();
  await box.pressSequentially("o");
  await expect(list.getByRole("option", { name: /Mo Member/ })).toBeVisible();
  await olivePage.keyboard.press("ArrowDown");
  await photograph(olivePage, "editor-comment-form");
  await box.focus();
  await olivePage.keyboard.press("Enter");
  await expect(list).toBeHidden();
  await expect(box).toHaveValue('Is "spring" firm? <ask finance> @Mo Member ');
  await form.getByRole("button", { name: "Post comment" }).click();
  await expect(form).toHaveCount(0);
  await expect(goals.locator(".cm-comment-mark")).toHaveText("spring");
  // The tags stay hidden in the editor.
  await expect(goals.getByTestId("editor-prose")).toHaveText("We launch in spring.");

  // Mo's page, open all along, shows the comment highlighted and its thread beside it: nobody committed anything.
  const moMark = sectionOf(moPage, 0).locator(".cm-comment-mark");
  await expect(moMark).toHaveText("spring");
  const beside = moPage.getByTestId("comment-margin-thread");
  await expect(beside).toContainText('Is "spring" firm? <ask finance> @Mo Member');
  await expect(beside).toContainText("Olive Owner");
  const [markBox, threadBox, textBox] = await Promise.all([
    moMark.boundingBox(),
    beside.boundingBox(),
    sectionOf(moPage, 0).getByTestId("editor-prose").boundingBox(),
  ]);
  expect(threadBox!.x).toBeGreaterThanOrEqual(textBox!.x + textBox!.width);
  expect(Math.abs(threadBox!.y - markBox!.y)).toBeLessThan(24);
  await moPage.getByRole("button", { name: /^Comments/ }).click();
  await expect(moPage.getByRole("complementary", { name: "Comments" }).getByTestId("comment-thread")).toContainText('Is "spring" firm?');

  const head = (await server.callTool("read", olive.userId, { documentId, sectionIds: [sectionIds[0]!] })).sections[0]!;
  expect(head.content).toEqual([text("We launch in spring.")]);
  const [posted] = (await server.callTool("comments", mo.userId, { action: "list", documentId })).threads;
  expect(posted).toMatchObject({
    body: 'Is "spring" firm? <ask finance> @Mo Member',
    authorId: olive.userId,
    mentions: [mo.userId],
    anchored: true,
  });
  const inbox = await server.callTool("notifications", mo.userId, { action: "list" });
  expect(inbox.notifications).toMatchObject([{ kind: "mention", title: expect.stringContaining("Goals") }]);

  // The commit stores the anchor with the text; the thread stays where it was.
  const bar = olivePage.getByTestId("commit-bar");
  await expect(bar).toBeVisible({ timeout: 10_000 });
  await bar.getByRole("button", { name: "Commit" }).click();
  await expect(bar).toHaveCount(0);
  const committed = (await server.callTool("read", olive.userId, { documentId, sectionIds: [sectionIds[0]!] })).sections[0]!;
  expect(committed.content).toEqual([text(`We launch in <svc:comment id="${posted!.commentId}">spring</svc:comment>.`)]);
  await expect(olivePage.getByTestId("comment-margin-thread")).toHaveCount(1);
  await photograph(olivePage, "editor-comments-margin");

  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  const thread = olivePage.getByTestId("comment-thread");
  await expect(thread).toHaveCount(1);
  await expect(thread.getByRole("button", { name: /^spring/ })).toBeVisible();
  await expect(thread.getByRole("link", { name: "Goals" })).toHaveAttribute("href", `#section-${sectionIds[0]}`);
  await photograph(olivePage, "editor-comments-panel");
  await moPage.context().close();
});

test("a comment may not overlap another, and Ctrl+Alt+M opens the form from the keyboard", async () => {
  const goals = sectionOf(olivePage, 0);
  // "in spring": across the start of the existing comment.
  await selectNearEnd(olivePage, 0, 1, "in spring".length);
  await olivePage.keyboard.press("Control+Alt+M");
  const form = goals.getByRole("form", { name: "New comment" });
  await expect(form.getByLabel("Comment")).toBeFocused();
  await form.getByLabel("Comment").fill("Overlapping");
  await form.getByRole("button", { name: "Post comment" }).click();
  await expect(form.getByRole("alert")).toContainText("cannot overlap another comment");
  await form.getByRole("button", { name: "Cancel" }).click();
  const draft = await server.callTool("read", olive.userId, { documentId, includeDraft: true, sectionIds: [sectionIds[0]!] });
  expect(draft.sections[0]!.comments).toHaveLength(1);
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

test("a page opened in another time zone than the server's hydrates without an error", async ({ browser }) => {
  const context = await browser.newContext({ viewport: WIDE, timezoneId: "Pacific/Auckland" });
  const page = await signInPage(context, server.url, { email: rex.email, password: PASSWORD });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await openDocument(page);
  await page.getByRole("button", { name: /^Comments/ }).click();
  await expect(page.getByTestId("comment-thread")).toContainText('Is "spring" firm?');
  expect(errors.filter((e) => /hydrat|#418|#425/i.test(e))).toEqual([]);
  await context.close();
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

/** The comment on "spring" in Goals, committed by the first test. */
async function springComment(): Promise<string> {
  const goals = (await server.callTool("read", olive.userId, { documentId, sectionIds: [sectionIds[0]!] })).sections[0]!;
  return goals.comments[0]!.commentId;
}

test("a thread is answered, resolved (its highlight muted), shown under Show resolved and reopened, all from the keyboard", async () => {
  const commentId = await springComment();
  await openDocument(olivePage);
  const mark = sectionOf(olivePage, 0).locator(`[data-comment-id="${commentId}"]`);
  await expect(mark).toHaveText("spring");
  await expect(mark).not.toHaveClass(/cm-comment-mark-resolved/);
  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  const panel = olivePage.getByRole("complementary", { name: "Comments" });
  const thread = panel.getByTestId("comment-thread");
  await expect(thread).toHaveCount(1);

  await thread.getByRole("combobox", { name: "Reply" }).focus();
  await olivePage.keyboard.type("Finance confirmed: May.");
  await olivePage.keyboard.press("Tab");
  await expect(thread.getByRole("button", { name: "Reply" })).toBeFocused();
  await olivePage.keyboard.press("Enter");
  const reply = thread.getByTestId("comment-reply");
  await expect(reply).toHaveCount(1);
  await expect(reply).toContainText("Finance confirmed: May.");
  await expect(reply).toContainText("Olive Owner");
  await expect(thread.getByRole("combobox", { name: "Reply" })).toHaveValue("");
  await photograph(olivePage, "editor-comment-thread");

  await thread.getByRole("button", { name: "Resolve" }).focus();
  await olivePage.keyboard.press("Enter");
  const toggle = panel.getByRole("button", { name: "Show resolved (1)" });
  await expect(toggle).toBeFocused();
  await expect(thread).toHaveCount(0);
  await expect(olivePage.getByRole("button", { name: "Comments (0)" })).toBeVisible();
  await expect(mark).toHaveClass(/cm-comment-mark-resolved/);
  let listed = await server.callTool("comments", olive.userId, { action: "list", documentId });
  expect(listed.threads[0]).toMatchObject({
    status: "resolved",
    resolvedByName: "Olive Owner",
    replies: [{ body: "Finance confirmed: May." }],
  });

  await olivePage.keyboard.press("Enter");
  await expect(panel.getByRole("button", { name: "Hide resolved (1)" })).toHaveAttribute("aria-expanded", "true");
  const resolved = panel.getByRole("list", { name: "Resolved threads" }).getByTestId("comment-thread");
  await expect(resolved).toContainText("Resolved by Olive Owner");
  await expect(resolved.getByTestId("comment-reply")).toContainText("Finance confirmed: May.");
  await expect(resolved.getByRole("combobox", { name: "Reply" })).toHaveCount(0);
  await photograph(olivePage, "editor-comment-thread-resolved");

  await resolved.getByRole("button", { name: "Reopen" }).focus();
  await olivePage.keyboard.press("Enter");
  await expect(panel.getByTestId("comment-thread")).toHaveCount(1);
  await expect(panel.getByRole("button", { name: /resolved \(/ })).toHaveCount(0);
  await expect(mark).not.toHaveClass(/cm-comment-mark-resolved/);
  listed = await server.callTool("comments", olive.userId, { action: "list", documentId });
  expect(listed.threads[0]).toMatchObject({ status: "open", resolvedAt: null });

  // A resolved comment opens muted on a fresh page too.
  await server.callTool("comments", olive.userId, { action: "resolve", documentId, commentId });
  await openDocument(olivePage);
  await expect(sectionOf(olivePage, 0).locator(`[data-comment-id="${commentId}"]`)).toHaveClass(/cm-comment-mark-resolved/);
  await server.callTool("comments", olive.userId, { action: "reopen", documentId, commentId });
});

test("a reader sees the replies but is offered no reply box, Resolve or Reopen; the quote takes them to the rendered highlight", async ({
  browser,
}) => {
  const page = await signedIn(browser, rex.email);
  await openDocument(page);
  await page.getByRole("button", { name: /^Comments/ }).click();
  const thread = page.getByTestId("comment-thread");
  await expect(thread.getByTestId("comment-reply")).toContainText("Finance confirmed: May.");
  await expect(thread.getByRole("combobox", { name: "Reply" })).toHaveCount(0);
  await expect(thread.getByRole("button", { name: /^(Resolve|Reopen)$/ })).toHaveCount(0);
  await thread.getByRole("button", { name: /^spring/ }).click();
  const mark = sectionOf(page, 0).locator("mark.comment-mark");
  await expect(mark).toBeFocused();
  await expect(mark).toHaveClass(/comment-flash/);
  await page.context().close();
});

test("a thread whose section goes leaves the open panel; a failed reply says why and keeps what was typed", async () => {
  await openDocument(olivePage);
  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  const thread = olivePage.getByTestId("comment-thread");
  await expect(thread).toHaveCount(1);
  // The comment's section is deleted on the branch while the panel shows its thread: the panel follows the branch.
  const branch = "threads-gone";
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: branch, sourceBranch: "main" });
  await openDocument(olivePage, branch);
  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  await expect(thread).toHaveCount(1);
  await server.callTool("sections", olive.userId, { action: "delete", documentId, branchName: branch, sectionId: sectionIds[0]! });
  await expect(thread).toHaveCount(0);

  // A reply that cannot reach the server (the connection drops) says so, and what was typed stays.
  await openDocument(olivePage);
  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  await expect(thread).toHaveCount(1);
  const isCommentsCall = (url: URL) => /^\/api\/trpc\/(.*,)?comments(,|$)/.test(url.pathname);
  await olivePage.route(isCommentsCall, (route) => route.abort("internetdisconnected"));
  await thread.getByRole("combobox", { name: "Reply" }).fill("Too late");
  await thread.getByRole("button", { name: "Reply" }).click();
  await expect(thread.getByRole("alert")).not.toBeEmpty();
  await expect(thread.getByRole("combobox", { name: "Reply" })).toHaveValue("Too late");
  await olivePage.unroute(isCommentsCall);
});

test("clicking a thread's quote brings the highlighted text itself into view and focus, in a section whose editor was not mounted", async ({
  browser,
}) => {
  const filler = Array.from({ length: 40 }, (_, i) => `Paragraph ${i + 1} of a long section, long enough to fill the screen.`).join("\n\n");
  const long = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/long",
    sections: [
      ...Array.from({ length: 12 }, (_, i) => ({ name: `Part ${i + 1}`, content: [text(filler)] })),
      { name: "Appendix", content: [text(`${filler}\n\nThe <svc:comment-new body="Check this">very last line</svc:comment-new> of it.`)] },
    ],
  });
  const last = long.sectionIds.at(-1)!;
  const commentId = (await server.callTool("read", olive.userId, { documentId: long.documentId, sectionIds: [last] })).sections[0]!
    .comments[0]!.commentId;
  const page = await signedIn(browser, mo.email);
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId: long.documentId,
    grants: [{ userId: mo.userId, permission: "edit" }],
  });
  await openLiveDocument(page, server.url, { documentId: long.documentId, firstSectionId: long.sectionIds[0]! });
  const appendix = page.locator(`[data-section-id="${last}"]`);
  await expect(appendix).toHaveAttribute("data-synced", "false");
  await page.getByRole("button", { name: /^Comments/ }).click();
  await page
    .getByTestId("comment-thread")
    .getByRole("button", { name: /very last line/ })
    .click();
  const mark = appendix.locator(`[data-comment-id="${commentId}"]`);
  await expect(mark).toHaveClass(/comment-flash/);
  await expect(mark).toBeInViewport();
  await expect(appendix.getByTestId("editor-prose").locator(".cm-content")).toBeFocused();
  await page.context().close();
});

test("replies and resolutions reach another open page live; at 390 px the threads are in the panel, not beside the text", async ({
  browser,
}) => {
  const doc = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/live-threads",
    sections: [{ name: "Budget", content: [text("We spend less in summer.")] }],
  });
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId: doc.documentId,
    grants: [{ userId: mo.userId, permission: "edit" }],
  });
  const posted = await server.callTool("comments", olive.userId, {
    action: "post",
    documentId: doc.documentId,
    sectionId: doc.sectionIds[0]!,
    blockIndex: 0,
    quote: "summer",
    body: "Which months?",
  });
  const moPage = await signedIn(browser, mo.email);
  const open = (page: Page) => openLiveDocument(page, server.url, { documentId: doc.documentId, firstSectionId: doc.sectionIds[0]! });
  await open(moPage);
  await open(olivePage);
  const oliveThread = olivePage.getByTestId("comment-margin-thread");
  await expect(oliveThread).toContainText("Which months?");

  const moThread = moPage.getByTestId("comment-margin-thread");
  const reply = moThread.getByRole("combobox", { name: "Reply" });
  await reply.fill("July and August, @");
  await expect(moThread.getByRole("option")).toHaveCount(3);
  await reply.pressSequentially("oli");
  // The options are the server's answer for "oli": Enter picks once they are shown.
  await expect(moThread.getByRole("option")).toHaveText([/Olive Owner/]);
  await moPage.keyboard.press("Enter");
  await expect(reply).toHaveValue("July and August, @Olive Owner ");
  await moThread.getByRole("button", { name: "Reply", exact: true }).click();
  await expect(oliveThread.getByTestId("comment-reply")).toContainText("July and August, @Olive Owner");
  const listed = await server.callTool("comments", olive.userId, { action: "list", documentId: doc.documentId });
  expect(listed.threads[0]!.replies[0]!.mentions).toEqual([olive.userId]);

  await moThread.getByRole("button", { name: "Resolve" }).click();
  await expect(oliveThread).toHaveCount(0);
  await expect(olivePage.locator(`#section-${doc.sectionIds[0]} [data-comment-id="${posted.commentId}"]`)).toHaveClass(
    /cm-comment-mark-resolved/,
  );
  await server.callTool("comments", olive.userId, { action: "reopen", documentId: doc.documentId, commentId: posted.commentId });
  await expect(oliveThread).toHaveCount(1);

  await olivePage.setViewportSize(NARROW);
  await expect(oliveThread).toBeHidden();
  await olivePage.getByRole("button", { name: /^Comments/ }).click();
  await expect(olivePage.getByRole("complementary", { name: "Comments" }).getByTestId("comment-thread")).toContainText("Which months?");
  await olivePage.setViewportSize(WIDE);
  await moPage.context().close();
});

test("in a workspace of more than 200 people, @ finds the last by name through the server's search", async () => {
  const [last] = await server.addMembers(olive, ["Zz Last Person", ...CROWD]);
  await openDocument(olivePage);
  const salaries = sectionOf(olivePage, 1);
  await selectNearEnd(olivePage, 1, 1, "figures".length);
  await salaries.getByRole("button", { name: "Comment" }).click();
  const form = salaries.getByRole("form", { name: "New comment" });
  const box = form.getByRole("combobox", { name: "Comment" });
  await box.fill("Who checks these? ");
  await box.pressSequentially("@zz");
  const list = form.getByRole("listbox", { name: "Mention someone" });
  await expect(list.getByRole("option")).toHaveText([/Zz Last Person/]);
  await olivePage.keyboard.press("Enter");
  await expect(box).toHaveValue("Who checks these? @Zz Last Person ");
  await form.getByRole("button", { name: "Post comment" }).click();
  await expect(form).toHaveCount(0);

  const { threads } = await server.callTool("comments", olive.userId, { action: "list", documentId });
  expect(threads.find((t) => t.body.startsWith("Who checks these?"))?.mentions).toEqual([last]);
});
