/**
 * Changesets in a real Chromium against the built app: the author opens a
 * changeset from a branch name across documents (the page shows the documents
 * it gathers), a reviewer approves it once, the author resolves a conflict in
 * one document, the Merge button waits for that choice and lists what is
 * missing, the merge takes every document at once, and main shows each
 * changed. The pages are photographed at 1280 and 390 px.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { CROWD, startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const text = (t: string) => [{ blockType: "text" as const, text: t }];

let server: TestServer;
let browser: Browser;
let olive: TestUser;
let rita: TestUser;
let author: Page;
let changesetUrl: string;
const documents: Array<{ documentId: string; path: string; sectionIds: string[] }> = [];

async function signedIn(email: string): Promise<Page> {
  return signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email, password: PASSWORD });
}

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  rita = await server.createUser("rita@example.test", "Rita Reviewer", PASSWORD);
  for (const [path, name] of [
    ["handbook/onboarding", "Onboarding"],
    ["handbook/pricing", "Pricing"],
    ["handbook/support", "Support"],
  ] as const) {
    const created = await server.callTool("documents", olive.userId, {
      action: "create",
      path,
      name,
      sections: [
        { name: "Product", content: text(`${name} for Widget users.`) },
        { name: "Contact", content: text("Write to us by email.") },
      ],
    });
    await server.callTool("documents", olive.userId, {
      action: "create_branch",
      documentId: created.documentId,
      branchName: "rename-gadget",
    });
    await server.callTool("sections", olive.userId, {
      action: "update",
      documentId: created.documentId,
      branchName: "rename-gadget",
      sectionId: created.sectionIds[0]!,
      newContent: text(`${name} for Gadget users.`),
    });
    documents.push({ documentId: created.documentId, path, sectionIds: created.sectionIds });
  }
  // Pricing's product line also changed on main: a conflict to resolve.
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId: documents[1]!.documentId,
    branchName: "main",
    sectionId: documents[1]!.sectionIds[0]!,
    newContent: text("Pricing for Widget users, per seat."),
  });
  // Support requires one approval before anything merges into its main.
  await server.callTool("merge_requests", olive.userId, {
    action: "set_required_approvals",
    documentId: documents[2]!.documentId,
    requiredApprovals: 1,
  });
  browser = sharedBrowser;
  author = await signedIn(olive.email);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("the author opens a changeset from a branch name: the page shows the documents it gathers", async () => {
  await author.goto(`${server.url}/changesets`);
  await expect(author.getByTestId("changeset-list-empty")).toBeVisible();
  await author.getByRole("link", { name: "Open a changeset" }).first().click();
  const find = author.getByRole("form", { name: "Find documents" });
  await find.getByLabel("Source branch").fill("rename-gadget");
  await find.getByLabel("Path prefix").fill("handbook/");
  await find.getByRole("button", { name: "Find documents" }).click();
  const preview = author.getByTestId("changeset-preview");
  await expect(preview.locator("li")).toHaveCount(3);
  await expect(preview).toContainText("handbook/support");
  await photograph(author, "changeset-new");

  const form = author.getByRole("form", { name: "Open the changeset" });
  await form.getByLabel("Title").fill("Rename Widget to Gadget");
  await form.getByLabel("Reviewers").fill("rit");
  await form.getByRole("button", { name: /Add Rita Reviewer/ }).click();
  await expect(form.getByRole("list", { name: "Chosen reviewers" })).toContainText("Rita Reviewer");
  await form.getByRole("button", { name: "Open changeset" }).click();
  await expect(author.getByTestId("changeset-title")).toHaveText("Rename Widget to Gadget");
  changesetUrl = author.url();
  await expect(author.getByTestId("changeset-item")).toHaveCount(3);
});

test("Merge waits for every conflict's choice and the required approval, listing what is missing", async () => {
  const merge = author.getByRole("button", { name: "Merge 3 documents" });
  await expect(merge).toBeDisabled();
  await expect(author.getByTestId("missing-choices")).toContainText("handbook/pricing: section “Product”");
  await expect(author.getByTestId("approvals-missing")).toContainText("handbook/support");
  await expect(author.getByTestId("conflict")).toHaveCount(1);
  await photograph(author, "changeset");

  // The reviewer approves the changeset once.
  const reviewer = await signedIn(rita.email);
  await reviewer.goto(changesetUrl);
  await reviewer.getByRole("button", { name: "Approve" }).click();
  await expect(reviewer.getByTestId("approvals-missing")).toHaveCount(0);
  await reviewer.context().close();

  await author.reload();
  await expect(author.getByTestId("approvals-missing")).toHaveCount(0);
  await author.getByTestId("conflict").getByLabel("Keep source").check();
  await expect(author.getByTestId("missing-choices")).toHaveCount(0);
  await expect(merge).toBeEnabled();
});

test("one merge takes every document; main shows each changed", async () => {
  await author.getByRole("button", { name: "Merge 3 documents" }).click();
  await expect(author.getByTestId("final-state")).toContainText("Merged");
  for (const doc of documents) {
    const main = await server.callTool("read", olive.userId, { documentId: doc.documentId, branchName: "main" });
    const product = main.sections.find((s) => s.sectionId === doc.sectionIds[0])!;
    expect(JSON.stringify(product.content)).toContain("Gadget users");
    await author.goto(`${server.url}/documents/${doc.documentId}`);
    await expect(author.getByText(/for Gadget users/).first()).toBeVisible();
  }
  await author.goto(`${server.url}/changesets?status=merged`);
  await expect(author.getByTestId("changeset-row")).toHaveCount(1);
  await photograph(author, "changesets");
});

test("in a workspace of more than 200 people, the last by name is found by typing and becomes a reviewer", async () => {
  const [last] = await server.addMembers(olive, ["Zz Last Person", ...CROWD]);
  const support = documents[2]!;
  await server.callTool("documents", olive.userId, {
    action: "create_branch",
    documentId: support.documentId,
    branchName: "opening-hours",
  });
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId: support.documentId,
    branchName: "opening-hours",
    sectionId: support.sectionIds[1]!,
    newContent: text("Write to us by email, any weekday."),
  });

  await author.goto(`${server.url}/changesets/new?source=opening-hours&prefix=handbook/support`);
  const form = author.getByRole("form", { name: "Open the changeset" });
  await form.getByLabel("Reviewers").fill("zz");
  await form.getByRole("button", { name: /Add Zz Last Person/ }).click();
  await expect(form.getByRole("list", { name: "Chosen reviewers" })).toContainText("Zz Last Person");
  await form.getByRole("button", { name: "Open changeset" }).click();
  await expect(author.getByTestId("changeset-item")).toHaveCount(1);

  const changesetId = author.url().split("/").pop()!;
  const opened = await server.callTool("changesets", olive.userId, { action: "get", changesetId });
  expect(opened.items.map((item) => item.mergeRequest.reviewers.map((r) => r.userId))).toEqual([[last]]);
});
