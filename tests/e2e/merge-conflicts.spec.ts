/**
 * The conflict panel of a merge request in a real Chromium, when one of the
 * conflicts is a section deleted on the source: every side shows what its
 * branch holds. (The page once read the conflicting sections of a branch in
 * one batch, which the deleted section failed as a whole, and every source
 * side then read "(deleted on this branch)".) Photographed at 1280 and 390 px
 * into docs/screenshots/.
 */
import { expect, type Page, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

const PASSWORD = "correct horse battery";
const text = (t: string) => [{ blockType: "text" as const, text: t }];

let server: TestServer;
let olive: TestUser;
let page: Page;
let mergeRequestId: string;

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/travel",
    name: "Travel policy",
    sections: [
      { name: "Booking", content: text("Book trains at least a week ahead.") },
      { name: "Hotels", content: text("Hotels up to 120 euros a night.") },
      { name: "Per diem", content: text("A per diem of 40 euros.") },
    ],
  });
  const { documentId } = created;
  const [booking, hotels, perDiem] = created.sectionIds as [string, string, string];
  const update = (branchName: string, sectionId: string, content: string) =>
    server.callTool("sections", olive.userId, { action: "update", documentId, branchName, sectionId, newContent: text(content) });

  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "lean-travel" });
  await update("lean-travel", hotels, "Hotels up to 100 euros a night.");
  await update("lean-travel", booking, "Book trains at least two weeks ahead.");
  await server.callTool("sections", olive.userId, { action: "delete", documentId, branchName: "lean-travel", sectionId: perDiem });
  // Meanwhile on main: the same sections change, the deleted one included (a modify/delete conflict).
  await update("main", hotels, "Hotels up to 150 euros a night in capitals.");
  await update("main", booking, "Book trains or flights at least a week ahead.");
  await update("main", perDiem, "A per diem of 45 euros, 60 abroad.");

  const request = await server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId,
    sourceBranch: "lean-travel",
    targetBranch: "main",
    title: "Leaner travel",
  });
  mergeRequestId = request.mergeRequestId;
  page = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: olive.email, password: PASSWORD });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("with a section deleted on the source among the conflicts, each side of every conflict shows what its branch holds", async () => {
  await page.goto(`${server.url}/merge-requests/${mergeRequestId}`);
  const conflict = (name: string) => page.getByTestId("conflict").filter({ has: page.locator("legend", { hasText: name }) });
  const side = (name: string, which: "source" | "target") =>
    conflict(name)
      .locator(".mr-side")
      .filter({ hasText: `(${which})` });
  await expect(page.getByTestId("conflict")).toHaveCount(3);

  await expect(side("Booking", "source")).toContainText("Book trains at least two weeks ahead.");
  await expect(side("Booking", "target")).toContainText("Book trains or flights at least a week ahead.");
  await expect(side("Hotels", "source")).toContainText("Hotels up to 100 euros a night.");
  await expect(side("Hotels", "target")).toContainText("Hotels up to 150 euros a night in capitals.");
  // Deleted on the source only: the target side still shows main's text.
  await expect(side("Per diem", "source")).toContainText("(deleted on this branch)");
  await expect(side("Per diem", "target")).toContainText("A per diem of 45 euros, 60 abroad.");
  await expect(page.getByText("(deleted on this branch)")).toHaveCount(1);
  await expect(page.getByTestId("conflict-side-unread")).toHaveCount(0);

  await photograph(page, "merge-request-conflict-deleted");
});
