/**
 * What a second person sees change without reloading, through the typed
 * API's subscriptions: Olive types, and Mo's commit bar appears naming her
 * and the section; she commits, and it goes. Mo's open comments panel shows
 * a comment committed by someone else, then its reply and its resolution.
 * The page is never reloaded (a mark set on its window survives) and polls
 * nothing (no draft-status request is made after the first).
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, openLiveDocument, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";

let server: TestServer;
let olive: TestUser;
let mo: TestUser;
let documentId: string;
let sectionIds: string[];
let olivePage: Page;
let moPage: Page;
/** The tRPC requests Mo's page makes, by path. */
const moRequests: string[] = [];

const text = (t: string) => ({ blockType: "text" as const, text: t });

async function signedIn(browser: Browser, email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: WIDE });
  return signInPage(context, server.url, { email, password: PASSWORD });
}

const sectionOf = (page: Page, index: number) => page.locator(`[data-section-id="${sectionIds[index]}"]`);

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  mo = await server.createUser("mo@example.test", "Mo Member", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/live",
    name: "Launch plan",
    sections: [
      { name: "Goals", content: [text("We launch in spring.")] },
      { name: "Budget", content: [text("Ten thousand.")] },
    ],
  });
  documentId = created.documentId;
  sectionIds = created.sectionIds;
  olivePage = await signedIn(browser, olive.email);
  moPage = await signedIn(browser, mo.email);
  moPage.on("request", (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith("/api/trpc/")) moRequests.push(url.pathname);
  });
  for (const page of [olivePage, moPage]) await openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]! });
  await moPage.evaluate(() => Object.assign(window, { quireNotReloaded: true }));
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("Olive's edits and commit reach Mo's commit bar without a reload or a poll", async () => {
  const moBar = moPage.getByTestId("commit-bar");
  await expect(moBar).toHaveCount(0);

  await sectionOf(olivePage, 1).getByTestId("editor-prose").locator(".cm-content").click();
  await olivePage.keyboard.press("End");
  await olivePage.keyboard.type(" Maybe twelve.");
  await expect(moBar).toBeVisible({ timeout: 10_000 });
  await expect(moBar).toContainText("Budget");
  await expect(moBar.getByTestId("commit-bar-editors")).toContainText("Olive Owner");
  await photograph(moPage, "editor-live-commit-bar");

  const oliveBar = olivePage.getByTestId("commit-bar");
  await oliveBar.getByRole("button", { name: "Commit" }).click();
  await expect(oliveBar).toHaveCount(0);
  await expect(moBar).toHaveCount(0, { timeout: 10_000 });
  await expect(sectionOf(moPage, 1).getByTestId("editor-prose")).toContainText("Maybe twelve.");

  expect(await moPage.evaluate(() => "quireNotReloaded" in window)).toBe(true);
  // One subscription, opened once: nothing asked for the draft status again and again.
  expect(moRequests.filter((p) => p.includes("draftStatus"))).toEqual(["/api/trpc/draftStatus"]);
});

test("Mo's open comments panel follows a comment committed elsewhere, its reply and its resolution", async () => {
  await moPage.getByRole("button", { name: /^Comments/ }).click();
  const panel = moPage.getByRole("complementary", { name: "Comments" });
  await expect(panel).toContainText("No comments on this branch yet");

  const goals = (await server.callTool("read", olive.userId, { documentId, sectionIds: [sectionIds[0]!] })).sections[0]!;
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId,
    branchName: "main",
    sectionId: goals.sectionId,
    expectedContentHash: goals.contentHash,
    newContent: [text('We launch in <svc:comment-new body="Which week?">spring</svc:comment-new>.')],
  });
  const thread = panel.getByTestId("comment-thread");
  await expect(thread).toHaveCount(1, { timeout: 10_000 });
  await expect(thread).toContainText("Which week?");
  await expect(moPage.getByRole("button", { name: "Comments (1)" })).toBeVisible();

  const commentId = (await server.callTool("comments", olive.userId, { action: "list", documentId })).threads[0]!.commentId;
  await server.callTool("comments", olive.userId, { action: "reply", documentId, commentId, body: "The second week of May." });
  await expect(thread.getByTestId("comment-reply")).toContainText("The second week of May.");
  await photograph(moPage, "editor-live-comments");

  await server.callTool("comments", olive.userId, { action: "resolve", documentId, commentId });
  await expect(moPage.getByRole("button", { name: "Comments (0)" })).toBeVisible();
  await expect(panel.getByRole("button", { name: "Show resolved (1)" })).toBeVisible();
  expect(await moPage.evaluate(() => "quireNotReloaded" in window)).toBe(true);
});

test("after the outline's connection drops and comes back, each section is listed once, and one added meanwhile shows", async ({
  browser,
}) => {
  const page = await signedIn(browser, mo.email);
  const outlineConnections: Array<{ close(): Promise<void> }> = [];
  await page.routeWebSocket(
    (url) => url.pathname === `/collab/${documentId}/main`,
    (socket) => {
      const toServer = socket.connectToServer();
      outlineConnections.push({ close: async () => Promise.all([socket.close(), toServer.close()]).then(() => undefined) });
    },
  );
  await openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]! });
  const listed = page.locator('[data-testid="live-section"]');
  await expect.poll(() => outlineConnections.length).toBe(1);
  await expect(listed).toHaveCount(sectionIds.length);
  // The connection drops (a network blip); a section is added while it is down.
  await outlineConnections[0]!.close();
  const added = await server.callTool("sections", olive.userId, {
    action: "create",
    documentId,
    branchName: "main",
    name: "Risks",
    content: [text("Late snow.")],
  });
  await expect.poll(() => outlineConnections.length).toBe(2);
  await expect(page.locator(`[data-section-id="${added.sectionId}"]`)).toHaveCount(1);
  await expect(listed).toHaveCount(sectionIds.length + 1);
  for (const sectionId of sectionIds) await expect(page.locator(`[data-section-id="${sectionId}"]`)).toHaveCount(1);
  await page.context().close();
});
