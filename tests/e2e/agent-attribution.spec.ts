/**
 * Agents named in history, in a real Chromium: a commit and a merge request made with an API token labelled
 * "Claude" show "Claude via Olivia Owner" on the history page and the merge request page; the person's own commit
 * names her alone. And the webhooks settings page: adding a hook shows its secret once and lists it.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { issueApiToken } from "@/server/auth/accounts";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph } from "../helpers/screenshots";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
let server: TestServer;
let olivia: TestUser;
let page: Page;
let documentId: string;
let mergeRequestId: string;

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olivia = await server.createUser("olivia@example.test", "Olivia Owner", PASSWORD);
  const { token } = await issueApiToken(server.db, { email: olivia.email, label: "Claude" }, new Date());
  const claude = await server.mcpClient(token);
  const created = await callMcp<{ documentId: string; sectionIds: string[] }>(claude, "documents", {
    action: "create",
    path: "agents/plan",
    sections: [{ name: "Plan", content: [{ blockType: "text", text: "Ship in May." }] }],
  });
  documentId = created.documentId;
  await server.callTool("sections", olivia.userId, {
    action: "update",
    documentId,
    branchName: "main",
    sectionId: created.sectionIds[0]!,
    newContent: [{ blockType: "text", text: "Ship in June." }],
    commitMessage: "Olivia moves the date",
  });
  await callMcp(claude, "documents", { action: "create_branch", documentId, branchName: "autumn" });
  await callMcp(claude, "sections", {
    action: "update",
    documentId,
    branchName: "autumn",
    sectionId: created.sectionIds[0]!,
    newContent: [{ blockType: "text", text: "Ship in October." }],
    commitMessage: "Claude proposes autumn",
  });
  mergeRequestId = (
    await callMcp<{ mergeRequestId: string }>(claude, "merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "autumn",
      targetBranch: "main",
      title: "Autumn",
    })
  ).mergeRequestId;
  await claude.close();
  page = await signInPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url, {
    email: olivia.email,
    password: PASSWORD,
  });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("the history page names the agent beside the person, and the person alone for her own commit", async () => {
  await page.goto(`${server.url}/documents/${documentId}/history`);
  const log = page.getByTestId("commit-log");
  const rows = log.locator("li");
  await expect(rows.filter({ hasText: "Olivia moves the date" }).getByTestId("commit-made-by")).toHaveText("Olivia Owner");
  await expect(rows.filter({ hasText: "Create document" }).getByTestId("commit-made-by")).toHaveText("Claude via Olivia Owner");
  await photograph(page, "history-agent-attribution");
});

test("the merge request page says who opened it: Claude via Olivia Owner", async () => {
  await page.goto(`${server.url}/merge-requests/${mergeRequestId}`);
  await expect(page.locator(".mr-row-meta")).toContainText("opened by Claude via Olivia Owner");
});

test("the webhooks page adds a hook, shows its secret once and lists it", async () => {
  await page.goto(`${server.url}/settings/webhooks`);
  await page.getByLabel("URL").fill("https://93.184.216.34/quire");
  await page.getByRole("button", { name: "Add webhook" }).click();
  await expect(page.getByTestId("new-webhook-secret")).toHaveValue(/^whsec_/);
  await expect(page.getByTestId("webhook")).toContainText("https://93.184.216.34/quire");
  await photograph(page, "settings-webhooks");
});
