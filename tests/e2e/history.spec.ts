/**
 * The history page in a real Chromium: a branch's commits, what the selected
 * one changed per section, the document as it left it, and Revert with its
 * confirmation, made only on the head the page showed (a reader is not
 * offered it).
 */
import type { Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
let server: TestServer;
let owner: TestUser;
let reader: TestUser;
let page: Page;
let documentId: string;
let firstCommitId: string;
let sectionIds: string[];

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  owner = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  reader = await server.createUser("rex@example.test", "Rex Reader", PASSWORD);
  const created = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "handbook/pricing",
    name: "Pricing",
    sections: [
      { name: "Plans", content: [{ blockType: "text", text: "Plans start at 10 euros a month." }] },
      { name: "Terms", content: [{ blockType: "text", text: "Contracts renew yearly." }] },
    ],
  });
  documentId = created.documentId;
  firstCommitId = created.commitId;
  sectionIds = created.sectionIds;
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId, branchName: "spring" });
  await server.callTool("sections", owner.userId, {
    action: "update",
    documentId,
    branchName: "spring",
    sectionId: sectionIds[0]!,
    newContent: [{ blockType: "text", text: "Plans start at 12 euros a month." }],
    commitMessage: "Raise the price",
  });
  await server.callTool("documents", owner.userId, {
    action: "set_permissions",
    documentId,
    grants: [{ userId: reader.userId, permission: "read" }],
  });
  page = await signInPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url, {
    email: owner.email,
    password: PASSWORD,
  });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("the history lists the branch's commits and shows what the newest changed", async () => {
  await page.goto(`${server.url}/documents/${documentId}`);
  await page.getByRole("link", { name: "Full history with changes" }).click();
  await page.waitForURL((url) => url.pathname === `/documents/${documentId}/history`);
  await page.locator("#history-branch").selectOption("spring");
  await page.getByRole("button", { name: "Switch" }).click();
  await page.waitForURL((url) => url.searchParams.get("branch") === "spring");
  const log = page.getByTestId("commit-log");
  await expect(log).toContainText("Raise the price");
  await expect(log).toContainText('Create document "handbook/pricing"');
  const details = page.getByTestId("commit-details");
  await expect(details.locator(".history-message")).toHaveText("Raise the price");
  await expect(details.getByTestId("section-change")).toHaveCount(1);
  await expect(details.getByTestId("section-change")).toContainText("Modified Plans");
  await expect(details.locator(".diff-word-removed")).toHaveText("10");
  await expect(details.locator(".diff-word-added")).toHaveText("12");
});

test("the first commit shows every section as added, and links to the document as it was", async () => {
  await page.getByRole("link", { name: firstCommitId.slice(0, 8) }).click();
  await page.waitForURL((url) => url.searchParams.get("commit") === firstCommitId);
  const details = page.getByTestId("commit-details");
  await expect(details.getByTestId("section-change")).toHaveCount(2);
  await expect(details.getByRole("heading", { name: "2 sections changed" })).toBeVisible();
  await details.getByRole("link", { name: "View the document at this commit" }).click();
  await page.waitForURL((url) => url.pathname === `/documents/${documentId}` && url.searchParams.get("commit") === firstCommitId);
  await expect(page.getByTestId("commit-banner")).toBeVisible();
  await page.goBack();
});

test("Revert asks first, then commits the old state on the branch", async () => {
  await page.goto(`${server.url}/documents/${documentId}/history?branch=spring&commit=${firstCommitId}`);
  await page.getByRole("button", { name: "Revert to this commit" }).click();
  await expect(page.getByText("Make a new commit on spring that restores the document as this commit left it?")).toBeVisible();
  await page.getByRole("button", { name: "Revert", exact: true }).click();
  await page.waitForURL((url) => url.searchParams.get("commit") !== firstCommitId);
  const details = page.getByTestId("commit-details");
  await expect(details.locator(".history-message")).toContainText("Revert to");
  await expect(details.locator(".badge", { hasText: "revert" })).toBeVisible();
  await expect(details.locator(".diff-word-added")).toHaveText("10");
  const read = await server.callTool("read", owner.userId, { documentId, branchName: "spring" });
  expect(read.sections[0]!.content).toEqual([{ blockType: "text", text: "Plans start at 10 euros a month." }]);
  await photograph(page, "history");
});

test("a commit made after the page was loaded is never reverted unseen: Revert answers that the branch moved, and nothing changes", async () => {
  await page.goto(`${server.url}/documents/${documentId}/history?branch=spring&commit=${firstCommitId}`);
  const theirs = await server.callTool("sections", owner.userId, {
    action: "update",
    documentId,
    branchName: "spring",
    sectionId: sectionIds[1]!,
    newContent: [{ blockType: "text", text: "Contracts renew monthly." }],
    commitMessage: "Monthly contracts",
  });
  await page.getByRole("button", { name: "Revert to this commit" }).click();
  await page.getByRole("button", { name: "Revert", exact: true }).click();
  await expect(page.getByRole("alert").filter({ hasText: "The branch has moved" })).toBeVisible();
  const log = await server.callTool("documents", owner.userId, { action: "log", documentId, branchName: "spring", limit: 1 });
  expect(log.commits[0]!.commitId).toBe(theirs.commitId);
  const read = await server.callTool("read", owner.userId, { documentId, branchName: "spring" });
  expect(read.sections[1]!.content).toEqual([{ blockType: "text", text: "Contracts renew monthly." }]);
});

test("a reader sees the history but is not offered Revert", async ({ browser }) => {
  const readerPage = await signInPage(await browser.newContext(), server.url, { email: reader.email, password: PASSWORD });
  await readerPage.goto(`${server.url}/documents/${documentId}/history?branch=spring`);
  await expect(readerPage.getByTestId("commit-details").getByTestId("section-change").first()).toBeVisible();
  await expect(readerPage.getByRole("button", { name: "Revert to this commit" })).toHaveCount(0);
});
