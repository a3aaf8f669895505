/**
 * The review flow in a real Chromium against the built app: the author opens
 * a merge request from a branch, a reviewer reads the diffs and requests
 * changes, the author commits again (the reviewer's page notices), the
 * approval rules hold (required approvals; an agent's approval is shown and
 * does not count; an approval covers the sections it saw, so a section changed
 * since needs a review the page lists, and it goes stale on one it saw), every conflict is
 * resolved with a different choice (one with a proposed merge), the request is
 * merged and main shows the result; another request is closed. The pages are
 * photographed at 1280 and 390 px into docs/screenshots/.
 */
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { CROWD, callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

// The tests of this file tell one story on one server, in order.
test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";

const PRICING_BASE = [
  "Plans start at 10 euros a month.",
  "Teams pay per seat.",
  "Invoices go out monthly.",
  "Refunds within 30 days.",
  "Support is by email.",
].join("\n");

let server: TestServer;
let browser: Browser;
let olive: TestUser;
let rita: TestUser;
let author: Page;
let reviewer: Page;
let documentId: string;
let mergeRequestUrl: string;
const ids: Record<"intro" | "pricing" | "terms" | "glossary" | "appendix", string> = {
  intro: "",
  pricing: "",
  terms: "",
  glossary: "",
  appendix: "",
};

const text = (t: string) => [{ blockType: "text" as const, text: t }];

async function commit(branchName: string, section: keyof typeof ids, content: string): Promise<void> {
  await server.callTool("sections", olive.userId, {
    action: "update",
    documentId,
    branchName,
    sectionId: ids[section],
    newContent: text(content),
  });
}

async function signedIn(email: string): Promise<Page> {
  return signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email, password: PASSWORD });
}

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  rita = await server.createUser("rita@example.test", "Rita Reviewer", PASSWORD);
  await server.createUser("ray@example.test", "Ray Bystander", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/pricing",
    name: "Pricing handbook",
    sections: [
      { name: "Intro", content: text("How we charge, and why.") },
      { name: "Pricing", content: text(PRICING_BASE) },
      { name: "Terms", content: text("Contracts renew yearly.") },
      { name: "Glossary", content: text("Seat: one person who signs in.") },
      { name: "Appendix", content: text("Old price lists live in the archive.") },
    ],
  });
  documentId = created.documentId;
  [ids.intro, ids.pricing, ids.terms, ids.glossary, ids.appendix] = created.sectionIds as [string, string, string, string, string];
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "spring-prices" });
  await commit("spring-prices", "pricing", PRICING_BASE.replace("10 euros", "12 euros").replace("by email.", "by email and phone."));
  await commit("spring-prices", "intro", "How we charge, and why it changes in spring.");
  await commit("spring-prices", "terms", "Contracts renew yearly; cancel any time before renewal.");
  await commit("spring-prices", "glossary", "Seat: one person who signs in at least once a month.");
  // Meanwhile on main: changes to the same sections, so the merge has conflicts of every kind of choice.
  await commit("main", "pricing", PRICING_BASE.replace("monthly", "on the first of the month").replace("by email.", "by email and chat."));
  await commit("main", "terms", "Contracts renew yearly unless cancelled.");
  await commit("main", "glossary", "Seat: a named person with an account.");

  browser = sharedBrowser;
  author = await signedIn(olive.email);
  reviewer = await signedIn(rita.email);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("the author opens a merge request from the branch on the document page, with a suggested title and a reviewer found by typing, never the author", async () => {
  await author.goto(`${server.url}/documents/${documentId}?branch=spring-prices`);
  const panel = author.getByTestId("merge-requests-panel");
  await expect(panel).toContainText("No open merge requests");
  await panel.getByRole("link", { name: "Open a merge request from spring-prices" }).click();

  const form = author.getByRole("form", { name: "New merge request" });
  await expect(form.getByLabel("Source branch")).toHaveValue("spring-prices");
  await expect(form.getByLabel("Target branch")).toHaveValue("main");
  await expect(form.getByText("4 commits on spring-prices that main does not have")).toBeVisible();
  // The oldest commit the branch brings suggests the title.
  await expect(form.getByLabel("Title")).toHaveValue('Update section "Pricing" (+3 more)');
  await form.getByLabel("Title").fill("Spring prices");
  await form.getByLabel("Description (markdown)").fill("New prices from April, and clearer terms.");

  // An empty request explains why it cannot be opened.
  await form.getByLabel("Source branch").selectOption("main");
  await expect(author.getByTestId("empty-request")).toContainText("same branch");
  await expect(author.getByRole("button", { name: "Open merge request" })).toBeDisabled();
  await author.getByRole("form", { name: "New merge request" }).getByLabel("Source branch").selectOption("spring-prices");
  await expect(author.getByTestId("empty-request")).toHaveCount(0);

  const again = author.getByRole("form", { name: "New merge request" });
  await again.getByLabel("Title").fill("Spring prices");
  await again.getByLabel("Description (markdown)").fill("New prices from April, and clearer terms.");
  // The author is never offered as their own request's reviewer.
  await again.getByLabel("Reviewers").fill("Olive");
  await expect(again.getByRole("status").filter({ hasText: "That is you: nobody reviews their own request." })).toBeVisible();
  await expect(again.getByRole("button", { name: /Add Olive Owner/ })).toHaveCount(0);
  await again.getByLabel("Reviewers").fill("Rit");
  await again.getByRole("button", { name: /Add Rita Reviewer/ }).click();
  await expect(again.getByRole("list", { name: "Chosen reviewers" })).toContainText("Rita Reviewer");
  await again.getByRole("button", { name: "Open merge request" }).click();

  await author.waitForURL(/\/merge-requests\/[0-9a-f-]{36}$/);
  mergeRequestUrl = author.url();
  await expect(author.getByRole("heading", { level: 1 })).toHaveText("Spring prices");
  await expect(author.getByText("New prices from April, and clearer terms.")).toBeVisible();
  await expect(author.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Pending");
});

test("the reviewer finds it waiting for her review, reads split and unified diffs with word highlights, and requests changes", async () => {
  await reviewer.goto(`${server.url}/merge-requests?waiting=1`);
  const row = reviewer.getByTestId("merge-request-row");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("spring-prices → main");
  await expect(row).toContainText("Olive Owner");
  await expect(row.getByTestId("conflicts-flag")).toBeVisible();
  await photograph(reviewer, "merge-request-list");

  await row.getByRole("link", { name: "Spring prices" }).click();
  await reviewer.waitForURL(mergeRequestUrl);
  const changes = reviewer.getByTestId("change");
  await expect(changes).toHaveCount(4);
  await expect(reviewer.locator('[data-testid=change][data-status="modified"]')).toContainText("Intro");
  await expect(reviewer.locator('[data-testid=change][data-status="conflict"]')).toHaveCount(3);
  // The navigator jumps to a change.
  await reviewer.getByRole("navigation", { name: "Changed sections" }).getByRole("link", { name: /Intro/ }).click();
  expect(new URL(reviewer.url()).hash).toBe(`#change-${ids.intro}`);

  const pricing = reviewer.locator(`#change-${ids.pricing}`);
  await expect(pricing.locator("mark.diff-word-removed").first()).toHaveText("10");
  await expect(pricing.locator("mark.diff-word-added").first()).toHaveText("12");
  await expect(pricing.locator(".diff-split").first()).toBeVisible();
  await reviewer.getByText("Unified", { exact: true }).click();
  await expect(pricing.locator(".diff-unified").first()).toBeVisible();
  await expect(pricing.locator(".diff-split")).toHaveCount(0);
  await reviewer.getByText("Split", { exact: true }).click();
  await photograph(reviewer, "merge-request-diffs");

  await reviewer.getByRole("button", { name: "Request changes" }).click();
  await expect(reviewer.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Changes requested");
});

test("an open request page follows the branch heads by one subscription and sends nothing while idle (no polling)", async () => {
  const sent: string[] = [];
  const record = (request: { method(): string; url(): string }) => sent.push(`${request.method()} ${new URL(request.url()).pathname}`);
  reviewer.on("request", record);
  await reviewer.goto(mergeRequestUrl);
  await expect(reviewer.getByRole("button", { name: "Approve" })).toBeVisible();
  // Longer than the 4 s the page used to poll at: an idle page asks the server nothing more.
  await reviewer.waitForTimeout(6_000);
  reviewer.off("request", record);
  const calls = sent.filter((line) => line.startsWith("POST") || line.includes("/api/trpc/"));
  // The page's one subscription, and the header's inbox badge's (every signed-in page has it).
  expect(calls.sort()).toEqual(["GET /api/trpc/branchHeads", "GET /api/trpc/inbox"]);
});

test("the author commits again: the reviewer's open page says the branch moved and shows the fresh analysis", async () => {
  await commit("spring-prices", "intro", "How we charge, and why prices change in spring.");
  const notice = reviewer.getByTestId("branch-moved");
  await expect(notice).toContainText("spring-prices");
  await notice.getByRole("button", { name: "Show the fresh analysis" }).click();
  await expect(reviewer.locator(`#change-${ids.intro}`)).toContainText("prices change in spring");
  await expect(notice).toHaveCount(0);
});

test("the page lists the changed sections still needing a review and marks an agent's approval as not counting", async () => {
  await server.callTool("merge_requests", olive.userId, { action: "set_required_approvals", documentId, requiredApprovals: 1 });
  await author.goto(mergeRequestUrl);
  await expect(author.getByTestId("approval-rule")).toContainText("0 of 1 required approval");
  await expect(author.getByTestId("approvals-missing")).toContainText("Still needing a review: “Intro”, “Pricing”, “Terms”, “Glossary”.");
  await expect(author.getByTestId("needs-review")).toHaveCount(4);

  // Rita's API token makes her an agent: her approval is shown, marked, and counts for nothing.
  const ritaAgent = await server.mcpClient(rita.token);
  const mergeRequestId = mergeRequestUrl.split("/").pop()!;
  await callMcp(ritaAgent, "merge_requests", { action: "approve", mergeRequestId });
  await ritaAgent.close();
  await author.reload();
  await expect(author.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Approved by test (does not count)");
  await expect(author.getByTestId("approval-rule")).toContainText("0 of 1 required approval");
  await expect(author.getByTestId("needs-review")).toHaveCount(4);
  await photograph(author, "merge-request-reviews");

  // Signed in, Rita may approve again, and her approval covers every section she saw.
  await reviewer.reload();
  await reviewer.getByRole("button", { name: "Approve" }).click();
  await expect(reviewer.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Approved");
  await expect(reviewer.getByTestId("needs-review")).toHaveCount(0);
  await expect(reviewer.getByTestId("reviewed-by")).toHaveCount(4);
  await expect(reviewer.getByTestId("approval-rule")).toContainText("1 of 1 required approval");

  // A section changed after her approval, which she never saw, needs its own review; her approval stands for the rest.
  await commit("spring-prices", "appendix", "Old price lists live in the archive, by year.");
  await reviewer.reload();
  await expect(reviewer.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Approved");
  await expect(reviewer.getByTestId("approval-rule")).toContainText("0 of 1 required approval");
  await expect(reviewer.getByTestId("needs-review")).toHaveCount(1);
  await expect(reviewer.locator(`#change-${ids.appendix}`).getByTestId("needs-review")).toBeVisible();
  await expect(reviewer.getByTestId("approvals-missing")).toContainText("Still needing a review: “Appendix”.");
});

test("approval rules: required approvals gate the merge; an approval goes stale on a section it saw, and approving again covers everything", async () => {
  await commit("spring-prices", "intro", "How we charge, and why prices change every spring.");
  await reviewer.reload();
  await expect(reviewer.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Approval stale");
  await author.reload();
  await expect(author.getByTestId("approvals-missing")).toContainText("Still needing a review: “Intro”, “Appendix”.");
  await expect(author.getByRole("button", { name: "Merge", exact: true })).toBeDisabled();

  // Withdrawing and approving again: the fresh approval counts.
  await reviewer.getByRole("button", { name: "Withdraw review" }).click();
  await expect(reviewer.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Pending");
  await reviewer.getByRole("button", { name: "Approve" }).click();
  await expect(reviewer.getByTestId("reviewer-state")).toHaveText("Rita Reviewer Approved");
});

test("every conflict gets a choice (keep source, keep target, a proposed merge edited by hand); merge; main shows the result", async () => {
  await author.goto(mergeRequestUrl);
  await expect(author.getByTestId("approvals-missing")).toHaveCount(0);
  const mergeButton = author.getByRole("button", { name: "Merge", exact: true });
  await expect(mergeButton).toBeDisabled();
  await expect(author.getByTestId("missing-choices")).toContainText("Pricing");

  const conflict = (name: string) => author.getByTestId("conflict").filter({ has: author.locator("legend", { hasText: name }) });
  await expect(conflict("Terms")).toContainText("cancel any time before renewal");
  await expect(conflict("Terms")).toContainText("unless cancelled");
  await conflict("Terms").getByLabel("Keep source").check();
  await conflict("Glossary").getByLabel("Keep target").check();
  await conflict("Pricing")
    .getByLabel(/Write a merge/)
    .check();
  const editor = author.getByLabel("Merged text of Pricing");
  // Clean hunks from both sides are applied; the one both changed is marked.
  await expect(editor).toHaveValue(
    [
      "Plans start at 12 euros a month.",
      "Teams pay per seat.",
      "Invoices go out on the first of the month.",
      "Refunds within 30 days.",
      "<<<<<<< source",
      "Support is by email and phone.",
      "=======",
      "Support is by email and chat.",
      ">>>>>>> target",
    ].join("\n"),
  );
  await photograph(author, "merge-request-conflicts");
  const merged = [
    "Plans start at 12 euros a month.",
    "Teams pay per seat.",
    "Invoices go out on the first of the month.",
    "Refunds within 30 days.",
    "Support is by email, phone and chat.",
  ].join("\n");
  await editor.fill(merged);
  await expect(author.getByTestId("missing-choices")).toHaveCount(0);

  const message = author.getByLabel("Commit message");
  await expect(message).toHaveValue(/^Merge branch 'spring-prices' into 'main'/);
  await message.fill("x".repeat(1001));
  await expect(author.getByTestId("message-rule")).toContainText("at most 1,000 characters");
  await expect(mergeButton).toBeDisabled();
  await message.fill("Spring prices: 12 euros, support by phone and chat");
  await expect(mergeButton).toBeEnabled();
  await mergeButton.click();
  await expect(author.getByTestId("final-state")).toContainText("Merged");

  await author.goto(`${server.url}/documents/${documentId}`);
  await expect(author.locator(`#section-${ids.pricing}`)).toContainText("Support is by email, phone and chat.");
  await expect(author.locator(`#section-${ids.terms}`)).toContainText("cancel any time before renewal");
  await expect(author.locator(`#section-${ids.glossary}`)).toContainText("a named person with an account");
  await expect(author.getByTestId("commit-log")).toContainText("Spring prices: 12 euros");
});

test("another request is closed after a confirmation; a fast-forward is shown as such", async () => {
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "typo" });
  await commit("typo", "appendix", "Old price lists live in the archive.");
  const opened = await server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId,
    sourceBranch: "typo",
    targetBranch: "main",
    title: "Fix a typo",
  });
  await author.goto(`${server.url}/merge-requests/${opened.mergeRequestId}`);
  await expect(author.getByTestId("fast-forward")).toContainText("Fast-forward");
  await author.getByRole("button", { name: "Close request" }).click();
  await author.getByRole("button", { name: "Close it" }).click();
  await expect(author.getByTestId("final-state")).toContainText("Closed");

  await author.goto(`${server.url}/merge-requests?status=closed`);
  await expect(author.getByTestId("merge-request-row")).toContainText("Fix a typo");
});

test("the new-request page says when it could not read a branch's history, never that there is nothing to merge", async () => {
  await author.goto(`${server.url}/merge-requests/new?documentId=${documentId}&source=no-such-branch&target=main`);
  const form = author.getByRole("form", { name: "New merge request" });
  await expect(form.getByTestId("incoming-unread")).toContainText("Could not read the history of no-such-branch");
  await expect(form.getByTestId("incoming-unread")).toContainText("NOT_FOUND");
  await expect(form.getByTestId("empty-request")).toHaveCount(0);
  // A branch that can be read and brings nothing is still told apart: it is empty, not unread.
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName: "idle" });
  await author.goto(`${server.url}/merge-requests/new?documentId=${documentId}&source=idle&target=main`);
  await expect(form.getByTestId("empty-request")).toContainText("Nothing to merge");
  await expect(form.getByTestId("incoming-unread")).toHaveCount(0);
});

test("in a workspace of more than 200 people, the Author filter finds the last by name by typing, and then shows whom it filters by", async () => {
  const [last] = await server.addMembers(olive, ["Zz Last Person", ...CROWD]);
  await server.callTool("documents", last!, { action: "create_branch", documentId, branchName: "last-notes" });
  await server.callTool("sections", last!, {
    action: "update",
    documentId,
    branchName: "last-notes",
    sectionId: ids.appendix,
    newContent: text("Old price lists live in the archive, with notes."),
  });
  await server.callTool("merge_requests", last!, {
    action: "create",
    documentId,
    sourceBranch: "last-notes",
    targetBranch: "main",
    title: "Notes on old prices",
  });

  await author.goto(`${server.url}/merge-requests`);
  const filters = author.getByRole("form", { name: "Filter merge requests" });
  const whose = filters.getByRole("combobox", { name: /^Author/ });
  await whose.selectOption({ label: "Someone else…" });
  const search = filters.getByLabel("Find the author");
  await expect(search).toBeFocused();
  await search.fill("zz");
  await filters.getByRole("button", { name: /Choose Zz Last Person/ }).click();
  await expect(whose.locator("option:checked")).toHaveText("Zz Last Person");
  await filters.getByRole("button", { name: "Filter" }).click();

  await author.waitForURL((url) => url.searchParams.get("author") === last);
  await expect(author.getByTestId("merge-request-row")).toHaveCount(1);
  await expect(author.getByTestId("merge-request-row")).toContainText("Notes on old prices");
  await expect(author.getByTestId("merge-request-row")).toContainText("by Zz Last Person");
  await expect(whose.locator("option:checked")).toHaveText("Zz Last Person");
});
