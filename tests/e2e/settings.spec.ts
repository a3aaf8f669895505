/**
 * Settings in a real Chromium against the built app: the session cookie's
 * attributes and the CSRF guard with a real next-auth session; an owner
 * invites someone who signs up through the link in a second browser and
 * appears in the members list; an API token created on /settings/tokens works
 * for an MCP client until it is revoked on the same page.
 */
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { callMcp, startTestServer, type TestServer } from "../helpers/server";
import { closeBrowserContexts } from "../helpers/browser";

// The tests of this file tell one story on one server, in order.
test.describe.configure({ mode: "serial" });

const OWNER = { name: "Olive Owner", email: "olive@example.test", password: "correct horse battery" };
const INVITEE = { name: "Ivy Invitee", email: "ivy@example.test", password: "another long password" };

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  await server.createUser(OWNER.email, OWNER.name, OWNER.password);
  browser = sharedBrowser;
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

/** Signs in through next-auth's credentials endpoint, as a browser form would; returns the Set-Cookie headers. */
async function signInOverHttp(email: string, password: string): Promise<string[]> {
  const csrf = await fetch(`${server.url}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";", 1)[0])
    .join("; ");
  const res = await fetch(`${server.url}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie, origin: server.url },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  await res.body?.cancel();
  return res.headers.getSetCookie();
}

test("the session cookie is HttpOnly and SameSite=Lax, and cookie calls to tRPC must be same-origin JSON", async () => {
  const setCookies = await signInOverHttp(OWNER.email, OWNER.password);
  const session = setCookies.find((c) => c.startsWith("next-auth.session-token="));
  expect(session, setCookies.join("\n")).toBeDefined();
  expect(session).toMatch(/;\s*SameSite=Lax/i);
  expect(session).toMatch(/;\s*HttpOnly/i);
  expect(session).toMatch(/;\s*Path=\/(;|$)/i);
  const cookie = session!.split(";", 1)[0]!;

  const call = (headers: Record<string, string>) =>
    fetch(`${server.url}/api/trpc/workspace`, {
      method: "POST",
      headers: { cookie, ...headers },
      body: JSON.stringify({ action: "list_members" }),
    });
  const ok = await call({ "content-type": "application/json", origin: server.url });
  expect(ok.status).toBe(200);
  expect(((await ok.json()) as { result: { data: { members: Array<{ email: string }> } } }).result.data.members[0]!.email).toBe(
    OWNER.email,
  );
  const formPost = await call({ "content-type": "text/plain" });
  expect(formPost.status).toBe(403);
  expect(((await formPost.json()) as { error: { code: string } }).error.code).toBe("CSRF_REJECTED");
  expect((await call({ "content-type": "application/json", origin: "http://evil.example" })).status).toBe(403);
});

test("an owner invites someone by link; they sign up in another browser and appear in the member list", async () => {
  await page.goto(`${server.url}/signin`);
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
  await page.waitForURL((url) => url.pathname === "/settings/members");
  await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor();
  const members = page.getByTestId("member-list");
  expect(await members.getByTestId("member-row").count()).toBe(1);
  expect(await members.textContent()).toContain(OWNER.email);
  expect(await page.getByTestId("invite-list").textContent()).toContain("No pending invites");

  // Same-origin browser fetches with a session: a text/plain POST (what a form on another site could send) is refused.
  const csrf = await page.evaluate(async () => {
    const body = JSON.stringify({ action: "list_members" });
    const plain = await fetch("/api/trpc/workspace", { method: "POST", body });
    const json = await fetch("/api/trpc/workspace", { method: "POST", body, headers: { "content-type": "application/json" } });
    return { plain: plain.status, json: json.status };
  });
  expect(csrf).toEqual({ plain: 403, json: 200 });

  await page.getByRole("form", { name: "Create an invite link" }).getByRole("combobox", { name: /^Role/ }).selectOption("member");
  await page.getByRole("button", { name: "Create invite link" }).click();
  const link = page.getByTestId("invite-link");
  await link.waitFor();
  const inviteUrl = await link.inputValue();
  expect(inviteUrl).toMatch(new RegExp(`^${server.url}/invite/[A-Za-z0-9_-]{43}$`));
  await page.getByTestId("invite-row").first().waitFor();
  expect(await page.getByTestId("invite-row").count()).toBe(1);
  expect(await page.getByTestId("invite-row").textContent()).toContain("Anyone with the link");
  await page.screenshot({ path: "/tmp/quire-settings-members.png", fullPage: true });

  const guest = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const visitor = await guest.newPage();
    visitor.setDefaultTimeout(20_000);
    await visitor.goto(inviteUrl);
    await visitor.getByRole("heading", { name: "Join Workspace" }).waitFor();
    expect(await visitor.locator(".auth-card").textContent()).toContain("Olive Owner invited you");
    await visitor.screenshot({ path: "/tmp/quire-invite.png", fullPage: true });
    await visitor.getByLabel("Name").fill(INVITEE.name);
    await visitor.getByLabel("Email").fill(INVITEE.email);
    await visitor.getByLabel("Password").fill(INVITEE.password);
    await visitor.getByRole("button", { name: "Create account and join" }).click();
    await visitor.waitForURL((url) => url.pathname === "/");
    expect(await visitor.locator(".app-user-name").textContent()).toBe(INVITEE.name);

    // The new member sees the list read-only: no role controls, no invites.
    await visitor.goto(`${server.url}/settings/members`);
    await visitor.getByTestId("member-list").waitFor();
    expect(await visitor.getByTestId("member-row").count()).toBe(2);
    expect(await visitor.locator("select").count()).toBe(0);
    expect(await visitor.getByRole("button", { name: "Create invite link" }).count()).toBe(0);
    expect(await visitor.getByTestId("invite-list").count()).toBe(0);
    await visitor.screenshot({ path: "/tmp/quire-settings-members-readonly.png", fullPage: true });

    // The link worked once; opening it again says so.
    const again = await browser.newContext();
    try {
      const late = await again.newPage();
      await late.goto(inviteUrl);
      await late.getByRole("heading", { name: "This invite has already been used" }).waitFor();
      await late.screenshot({ path: "/tmp/quire-invite-used.png", fullPage: true });
    } finally {
      await again.close();
    }
  } finally {
    await guest.close();
  }

  await page.reload();
  const ivyRow = page.getByTestId("member-row").filter({ hasText: INVITEE.email });
  await ivyRow.waitFor();
  expect(await ivyRow.textContent()).toContain(INVITEE.name);
  expect(await page.getByLabel(`Role of ${INVITEE.name}`).inputValue()).toBe("member");
  expect(await page.getByTestId("invite-list").textContent()).toContain("No pending invites");

  // The owner makes Ivy a guest; the change sticks across a reload.
  await page.getByLabel(`Role of ${INVITEE.name}`).selectOption("guest");
  await expect
    .poll(async () => (await server.callTool("members", await ownerId(), { action: "search", query: "ivy" })).members[0]?.role)
    .toBe("guest");
  await page.reload();
  expect(await page.getByLabel(`Role of ${INVITEE.name}`).inputValue()).toBe("guest");

  // …and removes her, confirming inline.
  await ivyRow.getByRole("button", { name: "Remove" }).click();
  await ivyRow.getByRole("button", { name: "Cancel" }).waitFor();
  await ivyRow.getByRole("button", { name: "Remove" }).click();
  await ivyRow.waitFor({ state: "detached" });
  expect(await page.getByTestId("member-row").count()).toBe(1);
});

async function ownerId(): Promise<string> {
  const session = (await page.evaluate(() => fetch("/api/auth/session").then((r) => r.json()))) as { user: { id: string } };
  return session.user.id;
}

test("an API token created on /settings/tokens works for MCP until it is revoked there", async () => {
  await page.goto(`${server.url}/settings/members`);
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "API tokens" }).click();
  await page.waitForURL((url) => url.pathname === "/settings/tokens");
  const tokenList = page.getByTestId("token-list");
  await tokenList.waitFor();
  // The test helper made one token for the owner ("test"); nothing else yet.
  const before = await page.getByTestId("token-row").count();

  await page.getByLabel("Label").fill("E2E agent");
  await page.getByLabel(/Expires in days/).fill("30");
  await page.getByRole("button", { name: "Create token" }).click();
  const shown = page.getByTestId("new-token");
  await shown.waitFor();
  const token = await shown.inputValue();
  expect(token).toMatch(/^qk_[A-Za-z0-9_-]{43}$/);
  expect(await page.locator(".secret-hint").textContent()).toMatch(/cannot show it again/);
  const row = page.getByTestId("token-row").filter({ hasText: "E2E agent" });
  await row.waitFor();
  expect(await page.getByTestId("token-row").count()).toBe(before + 1);
  expect(await row.textContent()).toContain("never");

  const agent = await server.mcpClient(token);
  try {
    const found = await callMcp<{ members: Array<{ email: string }> }>(agent, "members", { action: "list" });
    expect(found.members.map((m) => m.email)).toEqual([OWNER.email]);

    await page.reload();
    await row.waitFor();
    expect(await row.getAttribute("data-status")).toBe("active");
    expect(await row.textContent()).toContain("just now");
    // The token is never shown again after the page is left.
    expect(await page.content()).not.toContain(token);
    await page.screenshot({ path: "/tmp/quire-settings-tokens.png", fullPage: true });

    await row.getByRole("button", { name: "Revoke" }).click();
    await row.getByRole("button", { name: "Revoke" }).click();
    await expect.poll(() => row.getAttribute("data-status")).toBe("revoked");
    await expect(agent.callTool({ name: "members", arguments: { action: "list" } })).rejects.toThrow(/UNAUTHENTICATED/);
    await page.screenshot({ path: "/tmp/quire-settings-tokens-revoked.png", fullPage: true });
  } finally {
    await agent.close().catch(() => {});
  }
});
