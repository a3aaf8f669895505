/**
 * The rough edges a newcomer meets in the browser, in a real Chromium
 * against the built app: renaming the workspace in Settings (the header
 * follows), the tokens page's ready-to-paste MCP client configuration (the
 * new token filled in, copied, and working), the 404 page inside the usual
 * header, and a document page that prefetches none of its history.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

// The tests of this file tell one story on one server, in order.
test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const TOKEN_RULE =
  "An API token acts as an agent on every face (MCP and the API): what it can do is capped by each document's AI access, " +
  "and it cannot change permissions, share links, roles, invites, tokens or the workspace's name. Only you, signed in, can.";

let server: TestServer;
let browser: Browser;
let owner: TestUser;
let member: TestUser;
let ownerContext: BrowserContext;
let page: Page;

/** Signs in through the form; `origin` is the address the browser uses for the server. */
const signIn = (context: BrowserContext, email: string, origin = server.url): Promise<Page> =>
  signInPage(context, origin, { email, password: PASSWORD });

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  owner = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  member = await server.createUser("mia@example.test", "Mia Member", PASSWORD);
  browser = sharedBrowser;
  ownerContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await signIn(ownerContext, owner.email);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("an owner renames the workspace in Settings → Workspace; the header shows it, a bad name is refused, a member only reads it", async () => {
  const headerName = page.locator(".app-header").getByTestId("workspace-name");
  expect(await headerName.textContent()).toBe("Workspace");

  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Settings" }).click();
  await page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name: "Workspace" }).click();
  await page.waitForURL((url) => url.pathname === "/settings/workspace");
  const form = page.getByRole("form", { name: "Rename the workspace" });
  const field = form.getByLabel("Workspace name");
  expect(await field.inputValue()).toBe("Workspace");

  await field.fill("  Northwind Handbook  ");
  await form.getByRole("button", { name: "Save" }).click();
  await expect.poll(() => headerName.textContent()).toBe("Northwind Handbook");
  await page.getByRole("status").filter({ hasText: "Saved" }).waitFor();
  expect(await field.inputValue()).toBe("Northwind Handbook");

  // Spaces only pass the browser's "required" check; the server refuses them and nothing changes.
  await field.fill("   ");
  await form.getByRole("button", { name: "Save" }).click();
  await page.getByRole("alert").filter({ hasText: "must not be empty" }).waitFor();
  await page.reload();
  expect(await headerName.textContent()).toBe("Northwind Handbook");

  // Every page's header carries the name, for every member; a member cannot rename.
  const memberContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const other = await signIn(memberContext, member.email);
    expect(await other.locator(".app-header").getByTestId("workspace-name").textContent()).toBe("Northwind Handbook");
    await other.goto(`${server.url}/settings/workspace`);
    expect(await other.getByTestId("workspace-name-readonly").textContent()).toBe("Northwind Handbook");
    expect(await other.getByRole("form", { name: "Rename the workspace" }).count()).toBe(0);
  } finally {
    await memberContext.close();
  }
});

test("the tokens page gives ready-to-paste MCP configuration that carries a new token, copies, and connects", async () => {
  await ownerContext.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await page.goto(`${server.url}/settings/tokens`);
  expect(await page.getByTestId("token-rule").textContent()).toBe(TOKEN_RULE);
  const http = page.getByTestId("mcp-config-http");
  const stdio = page.getByTestId("mcp-config-stdio");
  const command = page.getByTestId("mcp-command-stdio");
  // Before a token is shown: a placeholder, and the address this server was reached at.
  expect(JSON.parse((await http.textContent())!)).toEqual({
    mcpServers: { quire: { type: "http", url: `${server.url}/api/mcp`, headers: { Authorization: "Bearer <your token>" } } },
  });
  expect(await command.textContent()).toBe(`npx quire mcp-proxy --url ${server.url} --token '<your token>'`);

  const form = page.getByRole("form", { name: "Create an API token" });
  await form.getByLabel("Label").fill("my laptop");
  await form.getByRole("button", { name: "Create token" }).click();
  const token = await page.getByTestId("new-token").inputValue();
  expect(token).toMatch(/^qk_/);

  const config = JSON.parse((await http.textContent())!) as { mcpServers: { quire: { url: string; headers: Record<string, string> } } };
  expect(config.mcpServers.quire.headers).toEqual({ Authorization: `Bearer ${token}` });
  expect(JSON.parse((await stdio.textContent())!)).toEqual({
    mcpServers: { quire: { command: "npx", args: ["quire", "mcp-proxy", "--url", server.url, "--token", token] } },
  });
  expect(await command.textContent()).toBe(`npx quire mcp-proxy --url ${server.url} --token ${token}`);

  // The copy button puts exactly the snippet on the clipboard.
  await page.getByRole("button", { name: "Copy: HTTP (Streamable HTTP)" }).click();
  await page.getByRole("button", { name: "Copy: HTTP (Streamable HTTP)" }).filter({ hasText: "Copied" }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(await http.textContent());

  // What was pasted works: an MCP client with that url and those headers lists Quire's tools.
  const client: Client = new McpClient({ name: "pasted-config", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(config.mcpServers.quire.url), { requestInit: { headers: config.mcpServers.quire.headers } }),
  );
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("documents");
  } finally {
    await client.close();
  }
});

test("the configuration names the address the browser used when QUIRE_PUBLIC_URL is not set", async () => {
  // The same server reached as 127.0.0.1 rather than localhost: the configuration follows the request.
  const viaIp = server.url.replace("//localhost:", "//127.0.0.1:");
  expect(viaIp).not.toBe(server.url);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const other = await signIn(context, owner.email, viaIp);
    await other.goto(`${viaIp}/settings/tokens`);
    expect(await other.getByTestId("mcp-endpoint").textContent()).toBe(`${viaIp}/api/mcp`);
    expect(JSON.parse((await other.getByTestId("mcp-config-http").textContent())!).mcpServers.quire.url).toBe(`${viaIp}/api/mcp`);
  } finally {
    await context.close();
  }
});

test("a missing page keeps the app's header: the full one when signed in, the signed-out one for visitors", async () => {
  const missing = await page.goto(`${server.url}/no/such/page`);
  expect(missing?.status()).toBe(404);
  await page.getByRole("heading", { name: "Not found" }).waitFor();
  const header = page.locator(".app-header");
  expect(await header.getByTestId("workspace-name").textContent()).toBe("Northwind Handbook");
  await header.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Documents" }).waitFor();
  await header.getByRole("button", { name: "Sign out" }).waitFor();

  const missingDocument = await page.goto(`${server.url}/documents/00000000-0000-4000-8000-000000000000`);
  expect(missingDocument?.status()).toBe(404);
  await page.locator(".app-header").getByRole("button", { name: "Sign out" }).waitFor();

  const visitor = await browser.newContext();
  try {
    const anonymous = await visitor.newPage();
    const response = await anonymous.goto(`${server.url}/no/such/page`);
    expect(response?.status()).toBe(404);
    await anonymous.getByRole("heading", { name: "Not found" }).waitFor();
    const publicHeader = anonymous.locator(".app-header");
    await publicHeader.getByRole("link", { name: "Quire" }).waitFor();
    await publicHeader.getByRole("link", { name: "Sign in" }).waitFor();
    expect(await publicHeader.getByRole("button", { name: "Sign out" }).count()).toBe(0);
  } finally {
    await visitor.close();
  }
});

test("the document page prefetches nothing from its history panel", async () => {
  const created = await server.callTool("documents", owner.userId, { action: "create", path: "quiet/history", name: "Quiet history" });
  for (const name of ["One", "Two", "Three"]) {
    await server.callTool("sections", owner.userId, {
      action: "create",
      documentId: created.documentId,
      branchName: "main",
      name,
      content: [{ blockType: "text", text: `Section ${name}.` }],
    });
  }
  const prefetched: string[] = [];
  page.on("request", (request) => {
    const headers = request.headers();
    if (headers["next-router-prefetch"] || headers.rsc) prefetched.push(request.url());
  });
  await page.goto(`${server.url}/documents/${created.documentId}`);
  await page.getByTestId("commit-log").waitFor();
  expect(await page.getByTestId("commit-log").locator("li").count()).toBe(4);
  await page.waitForLoadState("networkidle");
  await page.waitForTimeout(1_500);
  // Prefetching is on for this page (the header's links are prefetched) ...
  expect(
    prefetched.some((url) => new URL(url).pathname === "/settings/members"),
    prefetched.join("\n"),
  ).toBe(true);
  // ... but none of the history's links were.
  expect(prefetched.filter((url) => new URL(url).searchParams.has("commit") || new URL(url).searchParams.has("logCursor"))).toEqual([]);
});
