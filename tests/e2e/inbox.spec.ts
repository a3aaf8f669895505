/**
 * The inbox in a real Chromium against the built app: Rex's header badge goes from 0 to 1 while Olive, in another
 * browser context, requests his review, with no reload (the `inbox` subscription); his inbox lists the item and
 * links to the merge request (opening it marks it read); mark all read clears the badge; the inbox, the
 * notification settings and the unsubscribe page are photographed at 1280 and 390 px.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const text = (t: string) => [{ blockType: "text" as const, text: t }];

let server: TestServer;
let olive: TestUser;
let rex: TestUser;
let olivePage: Page;
let rexPage: Page;
let documentId: string;
let sectionId: string;

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  rex = await server.createUser("rex@example.test", "Rex Reviewer", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/travel",
    name: "Travel policy",
    sections: [{ name: "Trains", content: text("Second class on trips under four hours.") }],
  });
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
  for (const branchName of ["first-class", "night-trains"]) {
    await server.callTool("documents", olive.userId, { action: "create_branch", documentId, branchName });
    await server.callTool("sections", olive.userId, {
      action: "update",
      documentId,
      branchName,
      sectionId: created.sectionIds[0]!,
      newContent: text(`Changed on ${branchName}.`),
    });
  }
  olivePage = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: olive.email, password: PASSWORD });
  rexPage = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: rex.email, password: PASSWORD });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("Rex's badge goes from 0 to 1 while Olive requests his review, without a reload", async () => {
  await rexPage.goto(`${server.url}/`);
  const badge = rexPage.getByTestId("inbox-link");
  await expect(badge).toHaveAccessibleName("Inbox, 0 unread");
  await expect(rexPage.getByTestId("inbox-count")).toBeHidden();
  // Nothing reloads Rex's page from here on: the marker survives only without a navigation.
  await rexPage.evaluate(() => {
    (window as unknown as { stillHere: boolean }).stillHere = true;
  });

  await olivePage.goto(`${server.url}/merge-requests/new?documentId=${documentId}&source=first-class`);
  const form = olivePage.getByRole("form", { name: "New merge request" });
  await form.getByLabel("Title").fill("First class for long trips");
  await form.getByLabel("Reviewers").fill("Rex");
  await form.getByRole("button", { name: /Add Rex Reviewer/ }).click();
  await form.getByRole("button", { name: "Open merge request" }).click();
  await olivePage.waitForURL(/\/merge-requests\/[0-9a-f-]{36}$/);

  await expect(badge).toHaveAccessibleName("Inbox, 1 unread");
  await expect(rexPage.getByTestId("inbox-count")).toHaveText("1");
  await expect(rexPage.getByTestId("inbox-count")).toBeVisible();
  expect(await rexPage.evaluate(() => (window as unknown as { stillHere?: boolean }).stillHere)).toBe(true);
});

test("the inbox lists it and links to the merge request; opening it marks it read", async () => {
  const mergeRequestUrl = olivePage.url();
  await rexPage.getByTestId("inbox-link").click();
  await rexPage.waitForURL(/\/inbox$/);
  const item = rexPage.getByTestId("inbox-item");
  await expect(item).toHaveCount(1);
  await expect(item).toHaveAttribute("data-read", "false");
  await expect(item).toContainText("Review requested: “First class for long trips”");
  await expect(item).toContainText("Olive Owner");
  await photograph(rexPage, "inbox");

  // Keyboard: the item is a link reached with Tab and opened with Enter.
  await item.getByRole("link").focus();
  await rexPage.keyboard.press("Enter");
  await rexPage.waitForURL(mergeRequestUrl);
  await expect(rexPage.getByRole("heading", { level: 1 })).toHaveText("First class for long trips");
  await expect(rexPage.getByTestId("inbox-link")).toHaveAccessibleName("Inbox, 0 unread");

  await rexPage.goto(`${server.url}/inbox?filter=unread`);
  await expect(rexPage.getByTestId("inbox-empty")).toContainText("Nothing unread.");
  await rexPage.goto(`${server.url}/inbox`);
  await expect(rexPage.getByTestId("inbox-item")).toHaveAttribute("data-read", "true");
});

test("an empty inbox page follows too: the first item appears without a reload", async ({ browser }) => {
  const mia = await server.createUser("mia@example.test", "Mia Member", PASSWORD);
  const miaPage = await signInPage(await browser.newContext({ viewport: WIDE }), server.url, { email: mia.email, password: PASSWORD });
  await miaPage.goto(`${server.url}/inbox`);
  await expect(miaPage.getByTestId("inbox-empty")).toBeVisible();
  await server.callTool("comments", olive.userId, {
    action: "post",
    documentId,
    sectionId,
    blockIndex: 0,
    quote: "Second class",
    body: "Mia, is this still right?",
    mentions: [mia.userId],
  });
  await expect(miaPage.getByTestId("inbox-item")).toHaveCount(1);
  await miaPage.context().close();
});

test("new items arrive on the open inbox; mark all read clears them and the badge", async () => {
  await rexPage.goto(`${server.url}/inbox`);
  await server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId,
    sourceBranch: "night-trains",
    targetBranch: "main",
    title: "Night trains count as a hotel",
    reviewerIds: [rex.userId],
  });
  await expect(rexPage.getByTestId("inbox-item")).toHaveCount(2);
  await expect(rexPage.getByTestId("inbox-link")).toHaveAccessibleName("Inbox, 1 unread");
  await rexPage.getByRole("button", { name: "Mark all read" }).click();
  await expect(rexPage.getByTestId("inbox-link")).toHaveAccessibleName("Inbox, 0 unread");
  await expect(rexPage.locator('[data-testid="inbox-item"][data-read="false"]')).toHaveCount(0);
  await expect(rexPage.getByRole("button", { name: "Mark all read" })).toBeDisabled();
});

test("the email setting is Rex's own, and the unsubscribe page works without signing in", async ({ browser }) => {
  await rexPage.goto(`${server.url}/settings/notifications`);
  await expect(rexPage.getByRole("radio", { name: /Everything/ })).toBeChecked();
  await rexPage.getByRole("radio", { name: /Only what is addressed to me/ }).check();
  await rexPage.getByRole("button", { name: "Save" }).click();
  await expect(rexPage.getByRole("status")).toHaveText("Saved.");
  await rexPage.reload();
  await expect(rexPage.getByRole("radio", { name: /Only what is addressed to me/ })).toBeChecked();
  expect(await server.callTool("notifications", rex.userId, { action: "get_settings" })).toEqual({ email: "direct" });
  await photograph(rexPage, "settings-notifications");

  const { unsubscribeToken } = await import("@/server/actions/notification-email");
  const { ensureAuthSecret } = await import("@/server/auth/accounts");
  const token = unsubscribeToken(await ensureAuthSecret(server.db, undefined), rex.userId);
  const stranger = await (await browser.newContext({ viewport: WIDE })).newPage();
  await stranger.goto(`${server.url}/unsubscribe?token=${encodeURIComponent(token)}`);
  await stranger.getByRole("button", { name: "Unsubscribe" }).click();
  await expect(stranger.getByTestId("unsubscribed")).toBeVisible();
  expect(await server.callTool("notifications", rex.userId, { action: "get_settings" })).toEqual({ email: "none" });
  await photograph(stranger, "unsubscribed");
});
