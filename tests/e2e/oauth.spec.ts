/**
 * Connecting an MCP client by OAuth, in Chromium: the MCP SDK client's own
 * flow (StreamableHTTPClientTransport with an OAuthClientProvider) discovers
 * Quire from the 401, registers, and sends the person to the authorization
 * URL; signed out, they sign in and come back to the consent page, which names
 * the client, where it sends them back and what it may do; they allow it, the
 * client gets its code at its loopback redirect, exchanges it, lists tools and
 * writes, and the history page names the write "Claude Test via Olivia
 * Owner". Settings lists the app; Revoke ends its access. A live commit's
 * co-authors name the agent (an API token's live connection) that edited the
 * draft the same way, on the history page too.
 *
 * And CORS: a page on another origin (a second loopback port, named in
 * QUIRE_MCP_ALLOWED_ORIGINS) calls /api/mcp with a bearer token and the MCP
 * headers, which makes Chromium send a preflight first; a page of an origin not
 * named is blocked by the browser.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test } from "@playwright/test";
import { issueApiToken } from "@/server/auth/accounts";
import { connectLive, roomName } from "../helpers/collab";
import { MemoryProvider } from "../helpers/oauth";
import { photograph } from "../helpers/screenshots";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { closeBrowserContexts } from "../helpers/browser";

const PASSWORD = "correct horse battery";

let server: TestServer;
let owner: TestUser;
/** The client's side on loopback: its redirect URI (`/callback`) and a plain page (`/page`) of another origin. */
let clientSide: Server;
let clientUrl: string;
let documentId: string;
let sectionId: string;

test.beforeAll(async () => {
  clientSide = createServer((req, res) => {
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(req.url?.startsWith("/callback") ? "<p>Back in the app.</p>" : "<p>Another origin.</p>");
  });
  await new Promise<void>((resolve) => clientSide.listen(0, "127.0.0.1", resolve));
  clientUrl = `http://localhost:${(clientSide.address() as AddressInfo).port}`;
  server = await startTestServer({ next: true, mcpAllowedOrigins: [clientUrl] });
  owner = await server.createUser("olivia@example.test", "Olivia Owner", PASSWORD);
  const created = (await server.callTool("documents", owner.userId, {
    action: "create",
    path: "notes/connected",
    sections: [{ name: "Plan", content: [{ blockType: "text", text: "First draft" }] }],
  })) as { documentId: string; sectionIds: string[] };
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
  await new Promise((resolve) => clientSide?.close(resolve));
});

test("an MCP client connects by OAuth: sign in, consent, tools and a write; Settings lists it and Revoke ends it", async ({ page }) => {
  const mcpUrl = new URL(`${server.url}/api/mcp`);
  const provider = new MemoryProvider(`${clientUrl}/callback`, "Claude Test");
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: "e2e", version: "1.0.0" }).connect(first)).rejects.toThrow(UnauthorizedError);

  // Signed out: the authorization URL leads through sign-in back to the consent page.
  await page.goto(provider.authorizationUrl!.href);
  await page.waitForURL((url) => url.pathname === "/signin");
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/oauth/consent");
  await expect(page.getByTestId("consent-client")).toHaveText("Claude Test");
  await expect(page.getByTestId("consent-redirect-host")).toHaveText(new URL(clientUrl).host);
  await expect(page.getByTestId("consent-scope")).toHaveText("read and write your documents");
  await photograph(page, "oauth-consent");

  await page.getByRole("button", { name: "Allow read and write" }).click();
  await page.waitForURL((url) => url.href.startsWith(`${clientUrl}/callback`));
  const code = new URL(page.url()).searchParams.get("code");
  expect(code).toBeTruthy();
  await first.finishAuth(code!);

  const client = new Client({ name: "e2e", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  expect((await client.listTools()).tools.map((t) => t.name)).toContain("sections");
  await callMcp(client, "sections", {
    action: "update",
    documentId,
    branchName: "main",
    sectionId,
    newContent: [{ blockType: "text", text: "Second draft, by an app" }],
  });
  await client.close();

  // History names the write's agent beside the person it acted for.
  await page.goto(`${server.url}/documents/${documentId}/history`);
  await expect(page.getByTestId("commit-made-by").first()).toHaveText("Claude Test via Olivia Owner");

  await page.goto(`${server.url}/settings/tokens`);
  const row = page.getByTestId("app-row").filter({ hasText: "Claude Test" });
  await expect(row).toContainText("read and write");
  await photograph(page, "settings-connected-apps");
  await row.getByRole("button", { name: "Revoke" }).click();
  await row.getByRole("button", { name: "Revoke" }).click();
  await expect(page.getByTestId("app-row").filter({ hasText: "Claude Test" })).toHaveCount(0);

  const refused = await fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${provider.saved!.access_token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(refused.status).toBe(401);
});

test("a live commit credits the agent that edited the draft: the history page shows it as a co-author, '<agent> via <person>'", async ({
  page,
}) => {
  const claude = await issueApiToken(server.db, { email: owner.email, label: "Claude" }, new Date());
  const editor = await connectLive(server.url, roomName(documentId, "main", sectionId), { token: claude.token });
  editor.text().insert(editor.text().length, " (agreed live)");
  // Stored in the draft before the connection closes.
  await expect
    .poll(async () =>
      JSON.stringify((await server.callTool("read", owner.userId, { documentId, includeDraft: true })).sections[0]!.content),
    )
    .toContain("(agreed live)");
  editor.close();
  // Olivia commits in person: her agent is credited.
  const committed = (await server.trpcCaller(owner).documents({
    action: "commit",
    documentId,
    branchName: "main",
    commitMessage: "Agreed live",
  })) as { message: string };
  expect(committed.message).toBe("Agreed live\n\nCo-authored-by: Claude via Olivia Owner <olivia@example.test>");

  await page.goto(`${server.url}/signin?callbackUrl=${encodeURIComponent(`/documents/${documentId}/history`)}`);
  await page.getByLabel("Email").fill(owner.email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname.endsWith("/history"));
  const newest = page.getByTestId("commit-log").locator("li").first();
  await expect(newest.getByTestId("commit-made-by")).toHaveText("Olivia Owner");
  await expect(newest.getByRole("list", { name: "Co-authors" })).toHaveText(/Claude via Olivia Owner/);
});

test("CORS: a page of an allowed origin calls /api/mcp after a preflight; another origin's page is blocked", async ({ page }) => {
  // Authorization and Mcp-Protocol-Version are not CORS-safelisted: Chromium sends the POST only after a preflight
  // answered for this origin, so the POST's answer arriving is the preflight's proof.
  const probe = (origin: string) =>
    page.goto(`${origin}/page`).then(() =>
      page.evaluate(
        async ({ url, token }) => {
          try {
            const res = await fetch(url, {
              method: "POST",
              headers: {
                authorization: `Bearer ${token}`,
                "content-type": "application/json",
                accept: "application/json, text/event-stream",
                "mcp-protocol-version": "2025-06-18",
              },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
            });
            const body = (await res.json()) as { result?: { tools?: unknown[] } };
            return { status: res.status, tools: body.result?.tools?.length ?? 0 };
          } catch (error) {
            return { status: 0, error: String(error) };
          }
        },
        { url: `${server.url}/api/mcp`, token: owner.token },
      ),
    );

  const allowed = await probe(clientUrl);
  expect(allowed).toMatchObject({ status: 200 });
  expect((allowed as { tools: number }).tools).toBeGreaterThan(0);

  // The same loopback server under 127.0.0.1 is another origin, and not named.
  const other = clientUrl.replace("localhost", "127.0.0.1");
  const blocked = await probe(other);
  expect(blocked).toMatchObject({ status: 0, error: expect.stringContaining("Failed to fetch") });
});
