/**
 * Every page at a phone's width (390 x 844) in a real Chromium against the
 * built app: the page never scrolls sideways, and the header's Sign out and
 * the settings tables' Revoke and Remove buttons are inside the viewport.
 * No page asks for anything that is not there (the icon included). Each page
 * is also photographed at 390 and 1280 px into /tmp/shots/ to be looked at.
 */
import { mkdirSync } from "node:fs";
import type { Browser, BrowserContext, Locator, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { closeBrowserContexts } from "../helpers/browser";

// The tests of this file tell one story on one server, in order.
test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const NARROW = { width: 390, height: 844 };
const WIDE = { width: 1280, height: 900 };
const SHOTS = "/tmp/shots";

let server: TestServer;
let browser: Browser;
let owner: TestUser;
let mira: TestUser;
let documentId: string;
let firstCommitId: string;
let sharePath: string;
let invitePath: string;
const BRANCH = "agent/quarterly-pricing-review-with-a-long-name";

test.beforeAll(async ({ browser: sharedBrowser }) => {
  mkdirSync(SHOTS, { recursive: true });
  server = await startTestServer({ next: true });
  owner = await server.createUser("olive.owner-with-a-long-address@example.test", "Olive Owner-Longname", PASSWORD);
  mira = await server.createUser("mira.member@example.test", "Mira Member", PASSWORD);
  await server.createUser("gus.guest@example.test", "Gus Guest", PASSWORD);
  const caller = server.trpcCaller(owner);
  await caller.workspace({ action: "rename", name: "Acme Research & Development Laboratories International" });

  const longWord = "Supercalifragilisticexpialidocious".repeat(3);
  const created = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "handbook/engineering/platform/architecture-decision-records/0042-storage-layer",
    name: "Architecture decision record 0042: the storage layer and its consequences",
    description: `Why we store section versions by content hash, and what that means for ${longWord}.`,
    sections: [
      {
        name: "Context",
        content: [
          {
            blockType: "text",
            text: [
              `A very long unbroken word: ${longWord}.`,
              "",
              "```",
              "SELECT id, document_id, parent_ids, generation, tree_hash, message, author_id, created_at FROM commits WHERE document_id = $1;",
              "```",
              "",
              "| Option | Write cost | Read cost | Storage | Notes |",
              "|---|---|---|---|---|",
              "| Content-addressed blobs | one insert per changed section | one lookup per section | deduplicated | chosen |",
              "| Whole-document snapshots | one large insert | one lookup | grows with every write | rejected |",
              "",
              "See https://example.com/a/very/long/link/that/goes/on/and/on/without/any/spaces/to/break/it/up/at/all",
            ].join("\n"),
          },
        ],
      },
      { name: "Decision", content: [{ blockType: "text", text: "Store **blobs** by hash." }] },
    ],
  });
  documentId = created.documentId;
  firstCommitId = created.commitId;
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId, branchName: BRANCH });
  await server.callTool("documents", owner.userId, {
    action: "update",
    documentId,
    branchName: BRANCH,
    newName: "ADR 0042, revised on the branch",
    commitMessage: `Rename the record so that the history panel has a long commit message to wrap: ${longWord}`,
  });
  const tag = await server.callTool("documents", owner.userId, {
    action: "create_tag",
    tagPath: "status/under-review-by-the-architecture-group",
  });
  await server.callTool("documents", owner.userId, { action: "assign_tag", documentId, branchName: "main", tagId: tag.tagId });
  await server.callTool("documents", owner.userId, { action: "create", path: "notes/short", name: "Short note" });
  const link = await server.callTool("documents", owner.userId, { action: "create_share_link", documentId, permission: "read" });
  sharePath = link.path;
  const invite = (await caller.workspace({
    action: "create_invite",
    role: "member",
    email: "ivy.invitee-with-a-long-address@example.test",
  })) as {
    token: string;
  };
  invitePath = `/invite/${invite.token}`;
  await caller.workspace({ action: "create_invite", role: "guest" });

  browser = sharedBrowser;
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

/** Responses of 400 and above other than the page itself (which may be a 404 page on purpose). */
function watchFailures(page: Page): string[] {
  const failures: string[] = [];
  page.on("response", (response) => {
    if (response.status() >= 400 && response.request().resourceType() !== "document")
      failures.push(`${response.status()} ${response.url()}`);
  });
  return failures;
}

async function newSession(email?: string): Promise<{ context: BrowserContext; page: Page; failures: string[] }> {
  const context = await browser.newContext({ viewport: NARROW, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  if (email) {
    await page.goto(`${server.url}/signin`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/");
  }
  return { context, page, failures: watchFailures(page) };
}

async function expectInViewport(locator: Locator, what: string): Promise<void> {
  const count = await locator.count();
  expect(count, `${what}: none on the page`).toBeGreaterThan(0);
  for (let i = 0; i < count; i += 1) {
    const item = locator.nth(i);
    expect.soft(await item.isVisible(), `${what} #${i} is visible`).toBe(true);
    const box = (await item.boundingBox())!;
    expect.soft(box.x, `${what} #${i} starts inside the viewport`).toBeGreaterThanOrEqual(0);
    expect.soft(box.x + box.width, `${what} #${i} ends inside the viewport`).toBeLessThanOrEqual(NARROW.width);
  }
}

/** Opens a page at 390 px, checks nothing scrolls sideways, photographs it at 390 and 1280 px. */
async function visit(page: Page, path: string, name: string, ready: (page: Page) => Promise<unknown>): Promise<void> {
  await page.setViewportSize(NARROW);
  await page.goto(`${server.url}${path}`);
  await ready(page);
  await page.waitForLoadState("networkidle");
  const widths = await page.evaluate(() => ({ html: document.documentElement.scrollWidth, body: document.body.scrollWidth }));
  expect.soft(widths.html, `${name}: the page scrolls sideways at 390 px`).toBeLessThanOrEqual(NARROW.width);
  expect.soft(widths.body, `${name}: the body is wider than 390 px`).toBeLessThanOrEqual(NARROW.width);
  await page.screenshot({ path: `${SHOTS}/${name}-390.png`, fullPage: true });
  await page.setViewportSize(WIDE);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `${SHOTS}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize(NARROW);
}

const heading = (name: string | RegExp, level?: number) => (page: Page) => page.getByRole("heading", { name, level }).first().waitFor();

test("signed-out pages fit a 390 px screen: sign-in, invite, share link, 404", async () => {
  const { context, page, failures } = await newSession();
  try {
    await visit(page, "/signin", "signin", heading("Sign in"));
    await visit(page, invitePath, "invite", heading(/^Join /));
    await visit(page, sharePath, "share", (p) => p.getByTestId("shared-document").waitFor());
    await expectInViewport(page.getByRole("link", { name: "Sign in" }).first(), "the share page's Sign in");
    await visit(page, "/no-such-page", "404-signed-out", heading("Not found"));
    await expectInViewport(page.locator(".app-header").getByRole("link", { name: "Sign in" }), "the signed-out header's Sign in");
    expect(failures).toEqual([]);
  } finally {
    await context.close();
  }
});

test("signed-in pages fit a 390 px screen, with Sign out, Revoke and Remove in view", async () => {
  const { context, page, failures } = await newSession(owner.email);
  const signOut = () => expectInViewport(page.getByRole("button", { name: "Sign out" }), "Sign out");
  try {
    await visit(page, "/", "home", (p) => p.getByTestId("document-list").waitFor());
    await signOut();
    await visit(page, `/documents/${documentId}`, "document", (p) => p.getByTestId("commit-log").waitFor());
    await signOut();
    await visit(page, `/documents/${documentId}?branch=${encodeURIComponent(BRANCH)}`, "branch", (p) =>
      p.locator(".doc-title", { hasText: "revised on the branch" }).waitFor(),
    );
    await signOut();
    await visit(page, `/documents/${documentId}?branch=${encodeURIComponent(BRANCH)}&commit=${firstCommitId}`, "history-commit", (p) =>
      p.getByTestId("commit-banner").waitFor(),
    );
    await signOut();
    await visit(page, `/documents/${documentId}/sharing`, "sharing", heading(/Share/, 1));
    await signOut();
    await expectInViewport(page.getByRole("button", { name: "Revoke" }), "Revoke on the sharing page");
    await visit(page, `/documents/${documentId}/settings`, "document-settings", (p) => p.getByTestId("branch-list").waitFor());
    await signOut();
    await visit(page, "/?view=deleted", "documents-deleted", heading("Deleted documents", 1));
    await signOut();

    await visit(page, "/settings/members", "settings-members", (p) => p.getByTestId("member-list").waitFor());
    await signOut();
    await expectInViewport(page.getByRole("button", { name: "Remove" }), "Remove");
    await expectInViewport(page.getByTestId("invite-list").getByRole("button", { name: "Revoke" }), "Revoke on an invite");
    expect(await page.getByTestId("member-row").filter({ hasText: mira.email }).count()).toBe(1);

    await visit(page, "/settings/tokens", "settings-tokens", (p) => p.getByTestId("token-list").waitFor());
    await signOut();
    await expectInViewport(page.getByTestId("token-list").getByRole("button", { name: "Revoke" }), "Revoke on a token");
    await expectInViewport(page.getByRole("button", { name: /^Copy/ }), "the configuration's Copy buttons");

    await visit(page, "/settings/workspace", "settings-workspace", heading("Name", 2));
    await signOut();
    await visit(page, "/documents/00000000-0000-4000-8000-000000000000", "404-signed-in", heading("Not found"));
    await signOut();
    expect(failures).toEqual([]);
  } finally {
    await context.close();
  }
});

test("the icon answers: /favicon.ico and /icon.svg are 200 and the pages link them", async () => {
  const ico = await fetch(`${server.url}/favicon.ico`);
  expect(ico.status).toBe(200);
  const bytes = new Uint8Array(await ico.arrayBuffer());
  expect([...bytes.slice(0, 4)]).toEqual([0, 0, 1, 0]); // an ICO header
  const svg = await fetch(`${server.url}/icon.svg`);
  expect(svg.status).toBe(200);
  expect(await svg.text()).toContain("<svg");
  const html = await (await fetch(`${server.url}/signin`)).text();
  expect(html).toMatch(/<link rel="icon" href="\/favicon.ico"/);
  expect(html).toMatch(/<link rel="icon" href="\/icon.svg" type="image\/svg\+xml"/);
});
