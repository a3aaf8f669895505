/**
 * Section permission overrides from the live page: on a branch an editor
 * changes a section's team and AI overrides and the new badges show (and the
 * server stores them); on the default branch the form is read only and says
 * why; a reader gets no control at all. The page offers an editor exactly
 * where the server lets the person edit (`read`'s yourPermission): a member
 * whose section override is edit on a read-default document edits that
 * section, and the live room takes the edit.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, openLiveDocument, sectionAction, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";

let server: TestServer;
let olive: TestUser;
let rex: TestUser;
let documentId: string;
let sectionIds: string[];

const text = (t: string) => ({ blockType: "text" as const, text: t });

async function signedIn(browser: Browser, email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: WIDE });
  return signInPage(context, server.url, { email, password: PASSWORD });
}

const openDocument = (page: Page, branch: string) =>
  openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[0]!, branch });

const sectionOf = (page: Page, index: number) => page.locator(`[data-section-id="${sectionIds[index]}"]`);

test.beforeAll(async () => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  rex = await server.createUser("rex@example.test", "Rex Reader", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/launch",
    name: "Launch plan",
    sections: [
      { name: "Goals", content: [text("We launch in spring.")] },
      { name: "Risks", content: [text("Suppliers may be late.")] },
    ],
  });
  documentId = created.documentId;
  sectionIds = created.sectionIds;
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId,
    grants: [{ userId: rex.userId, permission: "read" }],
  });
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "tighten", sourceBranch: "main" });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("on a branch an editor changes a section's team and AI overrides and the new badges show", async ({ browser }) => {
  const page = await signedIn(browser, olive.email);
  await openDocument(page, "tighten");
  const risks = sectionOf(page, 1);
  await sectionAction(risks, "Permissions…");
  const form = risks.getByRole("form", { name: "Section permissions" });
  await expect(form.getByLabel("Team")).toHaveValue("");
  await expect(form.getByLabel("AI")).toHaveValue("");
  await form.getByLabel("Team").selectOption("read");
  await form.getByLabel("AI").selectOption("none");
  await photograph(page, "section-permissions");
  await form.getByRole("button", { name: "Save permissions" }).click();
  await expect(form).toBeHidden();
  await expect(risks.locator(".badge", { hasText: "Team: read" })).toBeVisible();
  await expect(risks.locator(".badge", { hasText: "AI: none" })).toBeVisible();

  const read = await server.callTool("read", olive.userId, { documentId, branchName: "tighten", sectionIds: [sectionIds[1]!] });
  expect(read.sections[0]).toMatchObject({ defaultPermission: "read", aiAccess: "none" });

  // Opened again, the form shows the stored values; back to inherit clears the badges.
  await sectionAction(risks, "Permissions…");
  await expect(form.getByLabel("Team")).toHaveValue("read");
  await form.getByLabel("Team").selectOption("");
  await form.getByLabel("AI").selectOption("");
  await form.getByRole("button", { name: "Save permissions" }).click();
  await expect(form).toBeHidden();
  await expect(risks.locator(".badge")).toHaveCount(0);
  await page.context().close();
});

test("on the default branch the form is read only and gives the spec's reason; nothing is stored", async ({ browser }) => {
  const page = await signedIn(browser, olive.email);
  await openDocument(page, "main");
  const goals = sectionOf(page, 0);
  await sectionAction(goals, "Permissions…");
  const form = goals.getByRole("form", { name: "Section permissions" });
  await expect(form.getByLabel("Team")).toBeDisabled();
  await expect(form.getByLabel("AI")).toBeDisabled();
  await expect(form).toContainText('cannot be changed directly on the default branch "main"');
  await expect(form.getByRole("button", { name: "Save permissions" })).toHaveCount(0);
  await photograph(page, "section-permissions-main");
  const read = await server.callTool("read", olive.userId, { documentId, branchName: "main" });
  expect(read.sections.map((s) => [s.defaultPermission, s.aiAccess])).toEqual([
    [null, null],
    [null, null],
  ]);
  await page.context().close();
});

test("a reader gets no permissions control", async ({ browser }) => {
  const page = await signedIn(browser, rex.email);
  await openDocument(page, "tighten");
  await expect(sectionOf(page, 0).getByRole("heading", { name: "Goals" })).toBeVisible();
  await expect(page.getByRole("button", { name: "More section actions" })).toHaveCount(0);
  await page.context().close();
});

test("a member whose section override is edit on a read-default document gets that section's editor, and only that one", async ({
  browser,
}) => {
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/open-notes",
    name: "Open notes",
    sections: [
      { name: "Ideas", content: [text("Anyone on the team adds ideas here.")] },
      { name: "Decisions", content: [text("Only the owners decide.")] },
    ],
  });
  const [ideas, decisions] = created.sectionIds as [string, string];
  // The override reaches main through review; then the team default drops to read.
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId: created.documentId, branchName: "open-up" });
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId: created.documentId,
    branchName: "open-up",
    sectionId: ideas,
    defaultPermission: "edit",
  });
  const request = await server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId: created.documentId,
    sourceBranch: "open-up",
    targetBranch: "main",
    title: "Open the ideas to the team",
  });
  await server.callTool("merge_requests", olive.userId, { action: "execute", mergeRequestId: request.mergeRequestId });
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId: created.documentId,
    defaultPermission: "read",
  });
  const mo = await server.createUser("mo@example.test", "Mo Member", PASSWORD);

  const page = await signedIn(browser, mo.email);
  await openLiveDocument(page, server.url, { documentId: created.documentId, firstSectionId: ideas });
  const prose = (sectionId: string) => page.locator(`[data-section-id="${sectionId}"] [data-testid="editor-prose"] .cm-content`);
  await expect(prose(ideas)).toHaveAttribute("contenteditable", "true");
  await expect(page.locator(`[data-section-id="${decisions}"]`).getByRole("heading", { name: "Decisions" })).toBeVisible();
  await expect(page.locator(`[data-section-id="${decisions}"] .cm-content`)).toHaveCount(0);
  await expect(page.locator(`[data-section-id="${decisions}"] [contenteditable]`)).toHaveCount(0);

  // The live room agrees: Mo's typing reaches the branch's draft.
  await prose(ideas).click();
  await page.keyboard.press("End");
  await page.keyboard.type(" Mo was here.");
  await expect
    .poll(async () => {
      const draft = await server.callTool("read", olive.userId, {
        documentId: created.documentId,
        branchName: "main",
        sectionIds: [ideas],
        includeDraft: true,
      });
      return JSON.stringify(draft.sections[0]!.content);
    })
    .toContain("Mo was here.");
  await page.context().close();
});
