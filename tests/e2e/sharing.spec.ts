/**
 * Sharing in the browser, through a real Chromium against the built Next app
 * inside the real server: the owner's "Share & permissions" page (share links,
 * the team default, per-person access), a visitor without an account reading
 * through a read link until it is revoked, and a member shut out by the team
 * default who gets in through an edit link.
 */
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { closeBrowserContexts } from "../helpers/browser";

// The tests of this file tell one story on one server, in order.
test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";

let server: TestServer;
let browser: Browser;
let ownerContext: BrowserContext;
let owner: Page;
let ownerUser: TestUser;
let memberUser: TestUser;
let readerUser: TestUser;
let documentId: string;

const pathOf = (page: Page) => new URL(page.url()).pathname;

/** A full-page screenshot from the top (the sticky header otherwise lands mid-page). */
async function screenshot(page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: `/tmp/quire-share-${name}.png`, fullPage: true });
}

async function signIn(page: Page, email: string, callbackPath = "/"): Promise<void> {
  await page.goto(`${server.url}/signin${callbackPath === "/" ? "" : `?callbackUrl=${encodeURIComponent(callbackPath)}`}`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Creates a share link on the sharing page and returns the URL it shows once. */
async function createLink(page: Page, permission: "read" | "edit", expiresInDays?: number): Promise<string> {
  const form = page.getByRole("form", { name: "Create a share link" });
  await form.getByLabel("Link allows").selectOption(permission);
  if (expiresInDays !== undefined) await form.getByLabel(/Expires in days/).fill(String(expiresInDays));
  const before = await page.getByTestId("share-link-row").count();
  await form.getByRole("button", { name: "Create link" }).click();
  const shown = page.getByTestId("share-link");
  await shown.waitFor();
  await expect.poll(() => page.getByTestId("share-link-row").count()).toBe(before + 1);
  return shown.inputValue();
}

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  ownerUser = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  memberUser = await server.createUser("mira@example.test", "Mira Member", PASSWORD);
  readerUser = await server.createUser("rex@example.test", "Rex Reader", PASSWORD);
  const created = await server.callTool("documents", ownerUser.userId, {
    action: "create",
    path: "handbook/launch-plan",
    name: "Launch plan",
    description: "What ships when, and who signs off.",
    sections: [
      {
        name: "Goals",
        content: [
          { blockType: "text", text: "Ship the **public beta** by the end of the quarter.\n\n- Invite 50 teams\n- Keep p95 under 200 ms" },
        ],
      },
      { name: "Timeline", content: [{ blockType: "text", text: "1. Freeze features\n2. Security review\n3. Announce" }] },
    ],
  });
  documentId = created.documentId;

  browser = sharedBrowser;
  ownerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  owner = await ownerContext.newPage();
  owner.setDefaultTimeout(20_000);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("the owner opens Share & permissions from the document and creates a read link a visitor can use until it is revoked", async () => {
  await signIn(owner, ownerUser.email, `/documents/${documentId}`);
  await owner.waitForURL((url) => url.pathname === `/documents/${documentId}`);
  expect(await owner.getByTestId("access-note").count()).toBe(0);
  await screenshot(owner, "document-owner");
  await owner.getByRole("link", { name: "Share & permissions" }).click();
  await owner.waitForURL((url) => url.pathname === `/documents/${documentId}/sharing`);
  await owner.getByRole("heading", { level: 1, name: "Share & permissions" }).waitFor();
  expect(await owner.getByTestId("share-link-list").textContent()).toContain("No share links yet");

  const url = await createLink(owner, "read", 30);
  expect(url.startsWith(`${server.url}/share/`)).toBe(true);
  expect(new URL(url).pathname).toMatch(/^\/share\/[A-Za-z0-9_-]{20,}$/);
  const row = owner.getByTestId("share-link-row").first();
  expect(await row.getAttribute("data-state")).toBe("active");
  expect(await row.textContent()).toMatch(/Read.*in 30 days.*Active/);
  await screenshot(owner, "page");

  // A visitor without an account reads the document, and only reads it.
  const visitorContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const visitor = await visitorContext.newPage();
    const opened = await visitor.goto(url);
    expect(opened?.status()).toBe(200);
    expect(pathOf(visitor)).toMatch(/^\/share\//);
    await visitor.getByTestId("shared-document").waitFor();
    expect(await visitor.locator(".doc-title").textContent()).toBe("Launch plan");
    await visitor.getByRole("heading", { level: 2, name: "Goals" }).waitFor();
    expect(await visitor.locator(".markdown strong").first().textContent()).toBe("public beta");
    const banner = (await visitor.getByTestId("share-banner").textContent()) ?? "";
    expect(banner).toContain("Shared with you — read only.");
    expect(banner).toContain("Sign in for more.");
    const signInHref = await visitor.getByTestId("share-banner").getByRole("link", { name: "Sign in" }).getAttribute("href");
    expect(signInHref).toBe(`/signin?callbackUrl=${encodeURIComponent(new URL(url).pathname)}`);
    // No account means no app: no branch switcher, history, sharing or sign-out.
    expect(await visitor.locator("#branch-select, [data-testid=commit-log], [data-testid=share-button]").count()).toBe(0);
    expect(await visitor.getByRole("button", { name: "Sign out" }).count()).toBe(0);
    expect(await visitor.locator('meta[name="referrer"]').getAttribute("content")).toBe("no-referrer");
    await screenshot(visitor, "visitor");

    // A member who can already edit (team default) signs in from the link and goes to the document,
    // without a read grant that would lower them to reading.
    const memberContext = await browser.newContext();
    try {
      const member = await memberContext.newPage();
      await signIn(member, memberUser.email, new URL(url).pathname);
      await member.waitForURL((u) => u.pathname === `/documents/${documentId}`);
      expect(await member.locator(".doc-title").textContent()).toBe("Launch plan");
      expect(await member.getByTestId("access-note").count()).toBe(0);
      expect((await server.callTool("documents", ownerUser.userId, { action: "get_permissions", documentId })).grants).toEqual([]);
      expect((await server.callTool("documents", memberUser.userId, { action: "get", documentId })).yourPermission).toBe("edit");
    } finally {
      await memberContext.close();
    }

    // The owner revokes the link; the visitor's next load is the dead-link page.
    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByText("Stop this link from working?").waitFor();
    await row.getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => owner.getByTestId("share-link-row").first().getAttribute("data-state")).toBe("revoked");
    expect(await owner.getByTestId("share-link-row").first().textContent()).toContain("Revoked");
    expect(await owner.getByTestId("share-link-row").first().getByRole("button", { name: "Revoke" }).count()).toBe(0);

    const reloaded = await visitor.reload();
    expect(reloaded?.status()).toBe(404);
    await visitor.getByTestId("share-dead").waitFor();
    expect(await visitor.getByRole("heading", { level: 1 }).textContent()).toBe("This link no longer works");
    expect(await visitor.getByTestId("shared-document").count()).toBe(0);
    await screenshot(visitor, "dead");

    // A made-up token is just as dead.
    const bogus = await visitor.goto(`${server.url}/share/not-a-real-token-at-all-0000000000`);
    expect(bogus?.status()).toBe(404);
    await visitor.getByTestId("share-dead").waitFor();
  } finally {
    await visitorContext.close();
  }
});

test("the page calls the typed API: an expiry the tool's schema refuses comes back VALIDATION_FAILED, shown on the form, and no link is made", async () => {
  await owner.goto(`${server.url}/documents/${documentId}/sharing`);
  const linksNow = async () =>
    (await server.callTool("documents", ownerUser.userId, { action: "list_share_links", documentId })).shareLinks;
  const before = await linksNow();
  const form = owner.getByRole("form", { name: "Create a share link" });
  const expiry = form.getByLabel(/Expires in days/);
  // The field's own limit stops this in the browser; lifted, the server is the one to judge.
  await expiry.evaluate((input) => input.removeAttribute("max"));
  await expiry.fill("4000");
  const answered = owner.waitForResponse((response) => new URL(response.url()).pathname === "/api/trpc/documents");
  await form.getByRole("button", { name: "Create link" }).click();
  const [refusal] = (await (await answered).json()) as Array<{ error: { data: { error: { code: string; message: string } } } }>;
  expect(refusal?.error.data.error.code).toBe("VALIDATION_FAILED");
  expect(refusal?.error.data.error.message).toContain("expiresInDays");
  await expect(owner.getByRole("alert").filter({ hasText: "expiresInDays" })).toBeVisible();
  expect(await linksNow()).toEqual(before);
});

test("with the team default at none a member cannot see the document until they open an edit link", async () => {
  await owner.goto(`${server.url}/documents/${documentId}/sharing`);
  const general = owner.getByRole("form", { name: "Document permissions" });
  expect(await general.getByLabel("Workspace members").inputValue()).toBe("edit");
  await general.getByLabel("Workspace members").selectOption("none");
  await general.getByLabel("AI assistants").selectOption("read");
  await general.getByRole("button", { name: "Save changes" }).click();
  await general.getByRole("status").filter({ hasText: "Saved" }).waitFor();
  const saved = await server.callTool("documents", ownerUser.userId, { action: "get_permissions", documentId });
  expect(saved.defaultPermission).toBe("none");
  expect(saved.aiAccess).toBe("read");
  await owner.reload();
  expect(await owner.getByRole("form", { name: "Document permissions" }).getByLabel("Workspace members").inputValue()).toBe("none");

  const memberContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const member = await memberContext.newPage();
    member.setDefaultTimeout(20_000);
    await signIn(member, memberUser.email);
    await member.waitForURL((url) => url.pathname === "/");
    const hidden = await member.goto(`${server.url}/documents/${documentId}`);
    expect(hidden?.status()).toBe(404);
    await member.getByRole("heading", { name: "Not found" }).waitFor();

    const editUrl = await createLink(owner, "edit");
    expect(await owner.getByTestId("share-link-row").first().textContent()).toMatch(/Edit.*Never.*Active/);

    // Signed out, an edit link asks for an account.
    const visitorContext = await browser.newContext();
    try {
      const visitor = await visitorContext.newPage();
      await visitor.goto(editUrl);
      await visitor.getByTestId("share-sign-in").waitFor();
      expect(await visitor.getByRole("heading", { level: 1 }).textContent()).toBe("Sign in to use this link");
      const href = await visitor.getByRole("link", { name: "Sign in" }).getAttribute("href");
      expect(href).toBe(`/signin?callbackUrl=${encodeURIComponent(new URL(editUrl).pathname)}`);
      expect(await visitor.getByTestId("shared-document").count()).toBe(0);
      await screenshot(visitor, "edit-link");
    } finally {
      await visitorContext.close();
    }

    // Signed in, the link opens the document.
    await member.goto(editUrl);
    await member.waitForURL((url) => url.pathname === `/documents/${documentId}`);
    expect(await member.locator(".doc-title").textContent()).toBe("Launch plan");
    await member.getByRole("heading", { level: 2, name: "Timeline" }).waitFor();
    expect(await member.getByTestId("access-note").count()).toBe(0);
    // A member who edits is still no manager.
    expect(await member.getByTestId("share-button").count()).toBe(0);
    await member.goto(`${server.url}/documents/${documentId}/sharing`);
    await member.getByTestId("sharing-denied").waitFor();
    expect(await member.getByTestId("sharing-denied").textContent()).toContain("can edit it");

    // The owner sees the member's new access among the people.
    await owner.reload();
    const grant = owner.locator(`[data-testid=grant-row][data-user-id="${memberUser.userId}"]`);
    await grant.waitFor();
    expect(await grant.textContent()).toContain("Mira Member");
    expect(await grant.getByLabel("Access of Mira Member").inputValue()).toBe("edit");
  } finally {
    await memberContext.close();
  }
});

test("the owner gives one person read access with the member picker, then removes it", async () => {
  await owner.goto(`${server.url}/documents/${documentId}/sharing`);
  const add = owner.getByRole("form", { name: "Give a person access" });
  // The owner always has full access and is not offered; people with their own access are not either.
  const offered = await add.getByLabel("Person").locator("option").allTextContents();
  expect(offered.some((o) => o.includes("Rex Reader"))).toBe(true);
  expect(offered.some((o) => o.includes("Olive Owner") || o.includes("Mira Member"))).toBe(false);
  await add.getByLabel("Person").selectOption({ label: "Rex Reader — rex@example.test" });
  await add.getByLabel("Access").selectOption("read");
  await add.getByRole("button", { name: "Add person" }).click();
  const grant = owner.locator(`[data-testid=grant-row][data-user-id="${readerUser.userId}"]`);
  await grant.waitFor();
  expect(await grant.getByLabel("Access of Rex Reader").inputValue()).toBe("read");
  await screenshot(owner, "people");

  const readerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const reader = await readerContext.newPage();
    await signIn(reader, readerUser.email, `/documents/${documentId}`);
    await reader.waitForURL((url) => url.pathname === `/documents/${documentId}`);
    await reader.getByTestId("access-note").waitFor();
    expect(await reader.getByTestId("access-note").textContent()).toContain("Read only");
    await screenshot(reader, "readonly-doc");

    // Changing the select saves at once; removing the grant shuts them out again (team default: none).
    await grant.getByLabel("Access of Rex Reader").selectOption("edit");
    await expect
      .poll(
        async () =>
          (await server.callTool("documents", ownerUser.userId, { action: "get_permissions", documentId })).grants.find(
            (g) => g.userId === readerUser.userId,
          )?.permission,
      )
      .toBe("edit");
    await grant.getByRole("button", { name: "Remove" }).click();
    await grant.getByRole("button", { name: "Remove" }).click();
    await expect.poll(() => grant.count()).toBe(0);
    const gone = await reader.reload();
    expect(gone?.status()).toBe(404);
  } finally {
    await readerContext.close();
  }
});

test("a read-link visitor does not see a section hidden from the team, on the page or in its HTML", async () => {
  const asOwner = (tool: "documents" | "sections" | "merge_requests", input: Record<string, unknown>) =>
    server.callToolAsSent(tool, ownerUser.userId, input) as Promise<Record<string, unknown>>;
  const created = (await asOwner("documents", {
    action: "create",
    path: "handbook/compensation",
    name: "Compensation",
    sections: [
      { name: "Principles", content: [{ blockType: "text", text: "Pay is transparent within bands." }] },
      { name: "Salaries", content: [{ blockType: "text", text: "Olive earns 250k" }] },
    ],
  })) as { documentId: string; sectionIds: string[] };
  const hiddenId = created.sectionIds[1]!;
  await asOwner("documents", { action: "create_branch", documentId: created.documentId, branchName: "restrict" });
  await asOwner("sections", {
    action: "update",
    documentId: created.documentId,
    branchName: "restrict",
    sectionId: hiddenId,
    defaultPermission: "none",
  });
  const mr = (await asOwner("merge_requests", {
    action: "create",
    documentId: created.documentId,
    sourceBranch: "restrict",
    targetBranch: "main",
    title: "Restrict",
  })) as {
    mergeRequestId: string;
  };
  await asOwner("merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
  const link = (await asOwner("documents", { action: "create_share_link", documentId: created.documentId, permission: "read" })) as {
    path: string;
  };

  const visitorContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const visitor = await visitorContext.newPage();
    const opened = await visitor.goto(`${server.url}${link.path}`);
    expect(opened?.status()).toBe(200);
    await visitor.getByTestId("shared-document").waitFor();
    expect(await visitor.locator(".doc-title").textContent()).toBe("Compensation");
    await visitor.getByRole("heading", { level: 2, name: "Principles" }).waitFor();
    expect(await visitor.locator(".doc-section-heading h2").allTextContents()).toEqual(["Principles"]);
    const html = await visitor.content();
    expect(html).not.toContain("Salaries");
    expect(html).not.toContain("Olive earns");
    expect(html).not.toContain(hiddenId);
    await screenshot(visitor, "hidden-section");
  } finally {
    await visitorContext.close();
  }
});
