/**
 * Managing a document in a real Chromium against the built app: a mistyped
 * document is renamed and moved on its settings page; deleting it opens a
 * merge request, which is merged; it is listed under Deleted and restored;
 * the merged branch is deleted from the merge request page; required
 * approvals set on the settings page gate Merge; a member who does not manage
 * the document sees the rule read only. Photographed at 1280 and 390 px.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const text = (t: string) => [{ blockType: "text" as const, text: t }];

let server: TestServer;
let browser: Browser;
let olive: TestUser;
let mo: TestUser;
let owner: Page;
let documentId: string;
let sectionId: string;
let deletionRequestUrl: string;

async function signedIn(email: string): Promise<Page> {
  return signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email, password: PASSWORD });
}

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  mo = await server.createUser("mo@example.test", "Mo Member", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "bad path with spaces??",
    sections: [{ name: "Welcome", content: text("First day: laptops, badges, coffee.") }],
  });
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
  browser = sharedBrowser;
  owner = await signedIn(olive.email);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("a mistyped document is renamed and moved from its settings page", async () => {
  await owner.goto(`${server.url}/documents/${documentId}`);
  await owner.getByTestId("settings-button").click();
  await owner.waitForURL(`**/documents/${documentId}/settings`);
  const form = owner.getByRole("form", { name: "Name and path" });
  await expect(form.getByLabel("Name")).toHaveValue("bad path with spaces??");
  await expect(owner.getByTestId("protection")).toHaveAttribute("data-protected", "false");

  // A refusal is shown with its code, inline, and changes nothing.
  await form.getByLabel("Path").fill("   ");
  await form.getByLabel("Path").press("Enter");
  await expect(form.locator(".coded-error")).toContainText("VALIDATION_FAILED");

  await form.getByLabel("Name").fill("Onboarding");
  await form.getByLabel("Path").fill("handbook/onboarding");
  // Keyboard only: Enter submits.
  await form.getByLabel("Path").press("Enter");
  await expect(form.getByRole("status")).toHaveText("Saved.");
  await expect(owner.locator(".manage-doc-path")).toHaveText("handbook/onboarding");
  await expect(owner.locator(".manage-doc-name")).toHaveText("Onboarding");
  const log = await server.callTool("documents", olive.userId, { action: "log", documentId, limit: 1 });
  expect(log.commits[0]!.message).toBe('Move to "handbook/onboarding", rename to "Onboarding"');
  await photograph(owner, "document-settings");
});

test("delete opens a merge request; merged, the document is listed under Deleted and restored", async () => {
  await owner.getByRole("button", { name: "Delete document…" }).click();
  await expect(owner.locator(".confirm-question")).toContainText("Open a merge request that deletes handbook/onboarding from main?");
  await owner.getByRole("button", { name: "Delete through a merge request" }).click();
  await owner.waitForURL(/\/merge-requests\/[0-9a-f-]{36}$/);
  deletionRequestUrl = owner.url();
  await expect(owner.getByRole("heading", { name: "Delete handbook/onboarding" })).toBeVisible();
  await owner.getByRole("button", { name: "Fast-forward merge" }).click();
  await expect(owner.getByTestId("final-state")).toContainText("Merged");

  await owner.goto(`${server.url}/`);
  await expect(owner.getByTestId("document-list")).toHaveCount(0);
  await owner.getByRole("link", { name: "Deleted" }).click();
  const row = owner.getByTestId("deleted-row").filter({ hasText: "handbook/onboarding" });
  await expect(row).toContainText("You");
  await photograph(owner, "documents-deleted");
  // Meanwhile another document took the path: the server says PATH_TAKEN and the row asks for another path.
  await server.callTool("documents", olive.userId, { action: "create", path: "handbook/onboarding", name: "Newer onboarding" });
  await row.getByRole("button", { name: "Restore handbook/onboarding" }).click();
  await expect(row.locator(".coded-error")).toContainText("PATH_TAKEN");
  const elsewhere = row.getByLabel("Restore under another path");
  await expect(elsewhere).toHaveValue("handbook/onboarding-restored");
  await elsewhere.fill("handbook/onboarding-2025");
  await elsewhere.press("Enter");
  // Restored at once (main is not protected): it leaves the Deleted list.
  await expect(row).toHaveCount(0);
  await owner.goto(`${server.url}/`);
  await expect(owner.getByTestId("document-list")).toContainText("handbook/onboarding-2025");
});

test("after the merge, the merge request page offers to delete its source branch", async () => {
  await owner.goto(deletionRequestUrl);
  const offer = owner.getByTestId("delete-source-branch");
  const button = offer.getByRole("button", { name: /^Delete branch delete-/ });
  await expect(button).toBeVisible();
  const branchName = (await button.textContent())!.replace("Delete branch ", "");
  await photograph(owner, "merge-request-delete-branch");
  await button.focus();
  await owner.keyboard.press("Enter");
  await expect(offer.locator(".confirm-question")).toContainText(`Delete branch ${branchName}?`);
  await offer.getByRole("button", { name: "Delete branch", exact: true }).click();
  await expect(owner.getByTestId("source-branch-gone")).toContainText(`Branch ${branchName} has been deleted.`);
  const branches = await server.callTool("documents", olive.userId, { action: "list_branches", documentId });
  expect(branches.branches.map((b) => b.name)).toEqual(["main"]);
});

test("required approvals set on the settings page protect main and gate Merge; branches with an open request cannot be deleted", async () => {
  await owner.goto(`${server.url}/documents/${documentId}/settings`);
  const rule = owner.getByRole("form", { name: "Required approvals" });
  await rule.getByLabel("Required approvals").fill("1");
  await rule.getByRole("button", { name: "Save" }).click();
  await expect(owner.getByTestId("protection")).toHaveAttribute("data-protected", "true");
  await expect(owner.getByTestId("protection")).toContainText("main takes no direct writes");

  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "coffee" });
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId,
    branchName: "coffee",
    sectionId,
    newContent: text("First day: laptops, badges, good coffee."),
  });
  const request = await server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId,
    sourceBranch: "coffee",
    targetBranch: "main",
    title: "Better coffee",
  });
  await owner.reload();
  const branchRow = (name: string) => owner.locator(`[data-testid="branch-row"][data-branch="${name}"]`);
  const coffee = branchRow("coffee");
  await expect(coffee.getByRole("button", { name: "Delete" })).toBeDisabled();
  await expect(coffee).toContainText("Open merge request: Better coffee");
  await expect(branchRow("main").getByRole("button", { name: "Delete" })).toBeDisabled();
  await expect(branchRow("main")).toContainText("The default branch cannot be deleted.");

  await owner.goto(`${server.url}/merge-requests/${request.mergeRequestId}`);
  await expect(owner.getByTestId("approvals-missing")).toContainText("requires 1 approval");
  await expect(owner.getByRole("button", { name: /merge$/i })).toBeDisabled();
});

test("a member who does not manage the document sees the rule read only, with the reason", async () => {
  const member = await signedIn(mo.email);
  await member.goto(`${server.url}/documents/${documentId}/settings`);
  await expect(member.getByTestId("approvals-read-only")).toContainText("Required approvals: 1");
  await expect(member.getByTestId("approvals-read-only")).toContainText("Only the document's creator and workspace owners and admins");
  await expect(member.getByRole("form", { name: "Required approvals" })).toHaveCount(0);
  // The member may edit, so renaming is offered — through a merge request, since main is protected.
  await expect(member.getByRole("button", { name: "Propose in a merge request" })).toBeVisible();
  await photograph(member, "document-settings-member");
});
