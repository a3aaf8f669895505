/**
 * OAuth 2.1 for remote MCP clients, through the MCP SDK client's own OAuth
 * flow (`auth()` and StreamableHTTPClientTransport with an
 * OAuthClientProvider): discovery from the 401's WWW-Authenticate, dynamic
 * registration, the person's consent (their session, from the site's own
 * page), the code exchange, tools, refresh with rotation, revocation; and the
 * refusals: PKCE missing, plain or wrong, a token for another resource, a
 * read-only app writing, an agent changing access, a rotated refresh token
 * used again; the rate limits on registration, authorization and token
 * requests. The browser's part (the consent page) is tests/e2e/oauth.spec.ts.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { auth, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ensureAuthSecret } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { oauthClients } from "@/db/schema";
import { DEFAULT_OUTBOUND_SETTINGS } from "@/server/outbound/addresses";
import { RATE_LIMITS } from "@/server/store/rate-limits";
import { getBridge } from "@/server/bridge";
import { withClientAddress } from "@/server/http/client-address";
import { MemoryProvider } from "../helpers/oauth";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

const REDIRECT_URL = "http://127.0.0.1:9/callback";
const ALLOWED_ORIGIN = "http://127.0.0.1:4999";

/** The SDK client's OAuth state for a client that comes back to REDIRECT_URL. */
const memoryProvider = () => new MemoryProvider(REDIRECT_URL);

let server: TestServer;
/** The same database served under another public URL: another resource. */
let elsewhere: TestServer;
let owner: TestUser;
let cookie: string;
let mcpUrl: URL;
let documentId: string;
let sectionId: string;

beforeAll(async () => {
  server = await startTestServer({ mcpAllowedOrigins: [ALLOWED_ORIGIN] });
  elsewhere = await startTestServer({ database: server.database, publicUrl: "https://docs.example.test" });
  owner = await server.createUser("olivia@example.test", "Olivia Owner");
  mcpUrl = new URL(`${server.url}/api/mcp`);
  const secret = await ensureAuthSecret(server.db, undefined);
  cookie = `${sessionCookieName(false)}=${await encode({ token: { sub: owner.userId }, secret })}`;
  const created = (await server.callTool("documents", owner.userId, {
    action: "create",
    path: "notes/oauth",
    sections: [{ name: "Intro", content: [{ blockType: "text", text: "Hello" }] }],
  })) as { documentId: string; sectionIds: string[] };
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
});

afterAll(async () => {
  await elsewhere?.close();
  await server?.close();
});

/** The consent page's form, answered by the signed-in person from the site's own page: the redirect back to the client. */
async function consent(authorizationUrl: URL, decision: "allow_write" | "allow_read" | "deny", origin = server.url): Promise<URL> {
  const started = await fetch(authorizationUrl, { redirect: "manual" });
  expect(started.status).toBe(302);
  const consentUrl = new URL(started.headers.get("location")!, server.url);
  expect(consentUrl.pathname).toBe("/oauth/consent");
  const form = new URLSearchParams(consentUrl.search);
  form.set("decision", decision);
  const answered = await fetch(`${server.url}/oauth/authorize/decision`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin, "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
  expect(answered.status).toBe(303);
  return new URL(answered.headers.get("location")!);
}

/** Runs the SDK client's flow to the end: a connected client and its provider. */
async function connectWithOAuth(decision: "allow_write" | "allow_read" = "allow_write", provider = memoryProvider()) {
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(first)).rejects.toThrow(UnauthorizedError);
  expect(provider.authorizationUrl).toBeDefined();
  const back = await consent(provider.authorizationUrl!, decision);
  const code = back.searchParams.get("code");
  expect(code, back.href).toBeTruthy();
  await first.finishAuth(code!);
  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  return { client, provider };
}

const mcpStatus = async (token: string) =>
  (
    await fetch(mcpUrl, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    })
  ).status;

const tokenRequest = (url: string, fields: Record<string, string>) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields) });

describe("discovery", () => {
  test("a 401 from /api/mcp names the protected resource metadata and the scope", async () => {
    const res = await fetch(mcpUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${server.url}/.well-known/oauth-protected-resource/api/mcp", scope="read write"`,
    );
  });

  test("the metadata documents describe Quire as its own authorization server", async () => {
    const resource = await (await fetch(`${server.url}/.well-known/oauth-protected-resource/api/mcp`)).json();
    expect(resource).toMatchObject({ resource: `${server.url}/api/mcp`, authorization_servers: [server.url] });
    const metadata = await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json();
    expect(metadata).toMatchObject({
      issuer: server.url,
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      registration_endpoint: `${server.url}/oauth/register`,
      revocation_endpoint: `${server.url}/oauth/revoke`,
    });
  });
});

describe("the SDK client's flow", () => {
  test("registers, is allowed, lists tools and writes as an agent; Settings lists the app", async () => {
    const { client, provider } = await connectWithOAuth();
    expect(provider.client?.client_id).toBeTruthy();
    expect(provider.saved?.scope).toBe("read write");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("sections");
    const written = await callMcp<{ commitId: string }>(client, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      content: [{ blockType: "text", text: "Written by an OAuth client" }],
    });
    // History names the app beside the person it acts for.
    const { commits } = await callMcp<{ commits: Array<{ commitId: string; madeBy: string }> }>(client, "documents", {
      action: "log",
      documentId,
      limit: 1,
    });
    expect(commits[0]).toMatchObject({ commitId: written.commitId, madeBy: "Test Agent via Olivia Owner" });
    // Agents cannot change access, whatever scope they hold.
    await callMcp(client, "documents", { action: "create_branch", documentId, branchName: "oauth-agent" });
    const refused = await callMcpError(client, "sections", {
      action: "update",
      documentId,
      branchName: "oauth-agent",
      sectionId,
      defaultPermission: "none",
    });
    expect(refused.code).toBe("PERMISSION_DENIED");
    expect(refused.message).toContain("agents cannot change access");
    const apps = await server.trpcCaller(owner).apiTokens({ action: "list_apps" });
    expect(apps).toMatchObject({ apps: expect.arrayContaining([expect.objectContaining({ name: "Test Agent", scope: "write" })]) });
    await client.close();
  });

  test("refresh rotates the refresh token; the rotated one used again revokes the grant", async () => {
    const { client, provider } = await connectWithOAuth();
    await client.close();
    const before = provider.saved!;
    expect(await auth(provider, { serverUrl: mcpUrl })).toBe("AUTHORIZED");
    const after = provider.saved!;
    expect(after.access_token).not.toBe(before.access_token);
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(await mcpStatus(after.access_token)).toBe(200);
    const replay = await tokenRequest(`${server.url}/oauth/token`, {
      grant_type: "refresh_token",
      refresh_token: before.refresh_token!,
      client_id: provider.client!.client_id,
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: "invalid_grant" });
    expect(await mcpStatus(after.access_token)).toBe(401);
  });

  test("revocation (RFC 7009) ends the app's access at once", async () => {
    const { client, provider } = await connectWithOAuth();
    await client.close();
    const revoked = await tokenRequest(`${server.url}/oauth/revoke`, {
      token: provider.saved!.access_token,
      client_id: provider.client!.client_id,
    });
    expect(revoked.status).toBe(200);
    const res = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        authorization: `Bearer ${provider.saved!.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  test("Settings' Revoke disconnects the app", async () => {
    const { client, provider } = await connectWithOAuth();
    await client.close();
    const { apps } = (await server.trpcCaller(owner).apiTokens({ action: "list_apps" })) as { apps: { grantId: string }[] };
    await server.trpcCaller(owner).apiTokens({ action: "revoke_app", grantId: apps[0]!.grantId });
    expect(await mcpStatus(provider.saved!.access_token)).toBe(401);
  });

  test("an app allowed to read only reads, and cannot write or create", async () => {
    const { client, provider } = await connectWithOAuth("allow_read");
    expect(provider.saved?.scope).toBe("read");
    const read = await callMcp<{ sections: unknown[] }>(client, "read", { documentId });
    expect(read.sections.length).toBeGreaterThan(0);
    const write = await callMcpError(client, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      content: [{ blockType: "text", text: "Not allowed" }],
    });
    expect(write.code).toBe("PERMISSION_DENIED");
    const create = await callMcpError(client, "documents", { action: "create", path: "notes/nope" });
    expect(create.code).toBe("PERMISSION_DENIED");
    await client.close();
  });

  test("a denied request goes back to the client as access_denied", async () => {
    const provider = memoryProvider();
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(transport)).rejects.toThrow(UnauthorizedError);
    const back = await consent(provider.authorizationUrl!, "deny");
    expect(back.searchParams.get("error")).toBe("access_denied");
  });

  test("the consent answer is refused from another origin's page", async () => {
    const provider = memoryProvider();
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: "oauth-test", version: "1.0.0" }).connect(transport)).rejects.toThrow(UnauthorizedError);
    const started = await fetch(provider.authorizationUrl!, { redirect: "manual" });
    const form = new URLSearchParams(new URL(started.headers.get("location")!, server.url).search);
    form.set("decision", "allow_write");
    const forged = await fetch(`${server.url}/oauth/authorize/decision`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: "http://attacker.example", "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    expect(forged.status).toBe(400);
  });
});

describe("refusals", () => {
  /** A registered public client and a fresh authorization URL's parameters. */
  async function registered() {
    const res = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Raw", redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: "none" }),
    });
    expect(res.status).toBe(201);
    const { client_id } = (await res.json()) as { client_id: string };
    return client_id;
  }

  const VERIFIER = "v".repeat(43);
  const CHALLENGE = createHash("sha256").update(VERIFIER).digest("base64url");
  const authorizeUrl = (at: string, params: Record<string, string>) => new URL(`${at}/oauth/authorize?${new URLSearchParams(params)}`);
  const pkceParams = (clientId: string) => ({
    client_id: clientId,
    redirect_uri: REDIRECT_URL,
    response_type: "code",
    code_challenge: CHALLENGE,
    code_challenge_method: "S256",
    state: "s1",
  });

  test("PKCE missing or plain is refused back to the client", async () => {
    const clientId = await registered();
    for (const pkce of [{}, { code_challenge: VERIFIER, code_challenge_method: "plain" }] as Record<string, string>[]) {
      const res = await fetch(
        authorizeUrl(server.url, { client_id: clientId, redirect_uri: REDIRECT_URL, response_type: "code", state: "s1", ...pkce }),
        {
          redirect: "manual",
        },
      );
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get("location")!);
      expect(back.searchParams.get("error")).toBe("invalid_request");
      expect(back.searchParams.get("state")).toBe("s1");
    }
  });

  test("a wrong or missing code_verifier gets no token, and the code is then spent", async () => {
    const clientId = await registered();
    const back = await consent(authorizeUrl(server.url, pkceParams(clientId)), "allow_write");
    const code = back.searchParams.get("code")!;
    const token = (fields: Record<string, string>) =>
      tokenRequest(`${server.url}/oauth/token`, {
        grant_type: "authorization_code",
        code,
        client_id: clientId,
        redirect_uri: REDIRECT_URL,
        ...fields,
      });
    const missing = await token({});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
    const wrong = await token({ code_verifier: "w".repeat(43) });
    expect(await wrong.json()).toMatchObject({ error: "invalid_grant" });
    // The code was used by the wrong attempt: even the right verifier gets nothing now.
    const right = await token({ code_verifier: VERIFIER });
    expect(await right.json()).toMatchObject({ error: "invalid_grant" });
  });

  test("an unregistered redirect URI is refused on the spot, never redirected to", async () => {
    const clientId = await registered();
    const res = await fetch(authorizeUrl(server.url, { ...pkceParams(clientId), redirect_uri: "https://evil.example/cb" }), {
      redirect: "manual",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request" });
  });

  test("a token for another resource is refused: asked for, or minted for another server's URL", async () => {
    const clientId = await registered();
    const asked = await fetch(authorizeUrl(server.url, { ...pkceParams(clientId), resource: "https://other.example/api/mcp" }), {
      redirect: "manual",
    });
    expect(new URL(asked.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");

    // The same database behind https://docs.example.test: its tokens are for https://docs.example.test/api/mcp.
    const secret = await ensureAuthSecret(server.db, undefined);
    const secureCookie = `${sessionCookieName(true)}=${await encode({ token: { sub: owner.userId }, secret })}`;
    const started = await fetch(authorizeUrl(elsewhere.url, { ...pkceParams(clientId), resource: "https://docs.example.test/api/mcp" }), {
      redirect: "manual",
    });
    const form = new URLSearchParams(new URL(started.headers.get("location")!, elsewhere.url).search);
    form.set("decision", "allow_write");
    const answered = await fetch(`${elsewhere.url}/oauth/authorize/decision`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie: secureCookie, origin: elsewhere.url, "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    const code = new URL(answered.headers.get("location")!).searchParams.get("code")!;
    const minted = await tokenRequest(`${elsewhere.url}/oauth/token`, {
      grant_type: "authorization_code",
      code,
      code_verifier: VERIFIER,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
    });
    const { access_token } = (await minted.json()) as { access_token: string };
    expect(access_token).toMatch(/^qoa_/);
    expect(await mcpStatus(access_token)).toBe(401);
  });

  test("a confidential client's token request needs its secret", async () => {
    const res = await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: "Confidential",
        redirect_uris: [REDIRECT_URL],
        token_endpoint_auth_method: "client_secret_post",
      }),
    });
    const info = (await res.json()) as { client_id: string; client_secret: string };
    expect(info.client_secret).toMatch(/^qcs_/);
    const back = await consent(authorizeUrl(server.url, pkceParams(info.client_id)), "allow_read");
    const exchange = (secret: string) =>
      tokenRequest(`${server.url}/oauth/token`, {
        grant_type: "authorization_code",
        code: back.searchParams.get("code")!,
        code_verifier: VERIFIER,
        client_id: info.client_id,
        client_secret: secret,
      });
    const wrong = await exchange("qcs_wrong");
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: "invalid_client" });
    const right = await exchange(info.client_secret);
    expect(right.status).toBe(200);
    expect(await right.json()).toMatchObject({ token_type: "Bearer", scope: "read" });
  });
});

describe("CORS for browser-based MCP clients", () => {
  test("a preflight from an allowed origin is answered without credentials; another origin gets no CORS headers", async () => {
    for (const path of ["/api/mcp", "/oauth/token", "/.well-known/oauth-authorization-server"]) {
      const allowed = await fetch(`${server.url}${path}`, {
        method: "OPTIONS",
        headers: {
          origin: ALLOWED_ORIGIN,
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization, mcp-protocol-version",
        },
      });
      expect(allowed.status).toBe(204);
      expect(allowed.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
      expect(allowed.headers.get("access-control-allow-headers")).toContain("Mcp-Protocol-Version");
      expect(allowed.headers.get("access-control-allow-credentials")).toBeNull();
      const other = await fetch(`${server.url}${path}`, { method: "OPTIONS", headers: { origin: "http://elsewhere.example" } });
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    }
  });

  test("an allowed origin's request reaches MCP and can read WWW-Authenticate; another origin's is refused", async () => {
    const unauthenticated = await fetch(mcpUrl, {
      method: "POST",
      headers: { origin: ALLOWED_ORIGIN, "content-type": "application/json" },
      body: "{}",
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get("access-control-expose-headers")).toContain("WWW-Authenticate");
    const headers = {
      authorization: `Bearer ${owner.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const allowed = await fetch(mcpUrl, { method: "POST", headers: { ...headers, origin: ALLOWED_ORIGIN }, body });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe(ALLOWED_ORIGIN);
    const refused = await fetch(mcpUrl, { method: "POST", headers: { ...headers, origin: "http://elsewhere.example" }, body });
    expect(refused.status).toBe(403);
  });
});

describe("clients known by their metadata document (CIMD)", () => {
  /** A client's own site on loopback, serving its metadata document (and one that names another client). */
  let site: Server;
  let siteUrl: string;
  /** Quire allowed to fetch from loopback over http, as development and tests are. */
  let open: TestServer;

  beforeAll(async () => {
    site = createServer((req, res) => {
      const clientId = `${siteUrl}${req.url}`;
      const document = {
        client_id: req.url === "/impostor.json" ? "https://someone-else.example/client.json" : clientId,
        client_name: "Metadata Client",
        redirect_uris: [REDIRECT_URL],
        token_endpoint_auth_method: "none",
      };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(document));
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    open = await startTestServer({
      database: server.database,
      outbound: { ...DEFAULT_OUTBOUND_SETTINGS, allowHttp: true, allow: ["loopback"] },
    });
  });

  afterAll(async () => {
    await open?.close();
    await new Promise((resolve) => site?.close(resolve));
  });

  const VERIFIER = "m".repeat(43);
  const authorize = (at: string, clientId: string) =>
    fetch(
      `${at}/oauth/authorize?${new URLSearchParams({
        client_id: clientId,
        redirect_uri: REDIRECT_URL,
        response_type: "code",
        code_challenge: createHash("sha256").update(VERIFIER).digest("base64url"),
        code_challenge_method: "S256",
      })}`,
      { redirect: "manual" },
    );

  test("the document is fetched, the client named by it, and its code exchanged without registration", async () => {
    const clientId = `${siteUrl}/client.json`;
    const started = await authorize(open.url, clientId);
    expect(started.status).toBe(302);
    const form = new URLSearchParams(new URL(started.headers.get("location")!, open.url).search);
    form.set("decision", "allow_read");
    const answered = await fetch(`${open.url}/oauth/authorize/decision`, {
      method: "POST",
      redirect: "manual",
      headers: { cookie, origin: open.url, "content-type": "application/x-www-form-urlencoded" },
      body: form,
    });
    const code = new URL(answered.headers.get("location")!).searchParams.get("code")!;
    const token = await tokenRequest(`${open.url}/oauth/token`, {
      grant_type: "authorization_code",
      code,
      code_verifier: VERIFIER,
      client_id: clientId,
      redirect_uri: REDIRECT_URL,
    });
    expect(token.status).toBe(200);
    const { apps } = (await server.trpcCaller(owner).apiTokens({ action: "list_apps" })) as {
      apps: Array<{ name: string; clientId: string }>;
    };
    expect(apps).toContainEqual(expect.objectContaining({ name: "Metadata Client", clientId }));
  });

  test("a document naming another client_id is refused on the spot", async () => {
    const refused = await authorize(open.url, `${siteUrl}/impostor.json`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: "invalid_client",
      error_description: expect.stringContaining("names another client_id"),
    });
  });

  test("by default the outbound guard refuses what is not public https: an http or loopback client_id names no client", async () => {
    const refused = await authorize(server.url, `${siteUrl}/client.json`);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: "invalid_client" });
  });
});

describe("rate limits on the OAuth endpoints, per client address", () => {
  /** The same database behind a proxy Quire trusts, so that each test acts from its own address (X-Forwarded-For). */
  let proxied: TestServer;

  beforeAll(async () => {
    proxied = await startTestServer({ database: server.database, trustProxy: true });
  });

  afterAll(async () => {
    await proxied?.close();
  });

  const register = (address: string) =>
    fetch(`${proxied.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify({ client_name: "Burst", redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: "none" }),
    });

  /** A 429 as RFC 6749 clients read it: the OAuth error JSON, never cached, with Retry-After within the window. */
  async function expectOAuthTooMany(response: Response, window: number) {
    expect(response.status).toBe(429);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(window);
    expect(await response.json()).toEqual({ error: "too_many_requests", error_description: expect.stringMatching(/^Too many attempts/) });
  }

  test("dynamic client registration: the limit's worth registers, the next is 429 and registers nothing; another address still may", async () => {
    const rule = RATE_LIMITS.oauthRegistration;
    for (let i = 0; i < rule.points; i++) expect((await register("203.0.113.10")).status).toBe(201);
    const clients = await server.db.$count(oauthClients);
    await expectOAuthTooMany(await register("203.0.113.10"), rule.durationSeconds);
    expect(await server.db.$count(oauthClients)).toBe(clients);
    expect((await register("203.0.113.11")).status).toBe(201);
  });

  test("token requests: every one counts (not only failures), then 429 with Retry-After", async () => {
    const rule = RATE_LIMITS.oauthToken;
    const { client_id } = (await (await register("203.0.113.21")).json()) as { client_id: string };
    const ask = () =>
      fetch(`${proxied.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "203.0.113.20" },
        body: new URLSearchParams({ grant_type: "password", client_id }),
      });
    for (let i = 0; i < rule.points; i++) {
      const answer = await ask();
      expect(answer.status, `request ${i + 1}`).toBe(400);
      expect(await answer.json()).toMatchObject({ error: "unsupported_grant_type" });
    }
    await expectOAuthTooMany(await ask(), rule.durationSeconds);
  });

  test("authorization requests and consent answers: counted together, then the coded RATE_LIMITED envelope or a page, with Retry-After", async () => {
    const rule = RATE_LIMITS.oauthAuthorization;
    const address = "203.0.113.30";
    const authorizeUrl = `${proxied.url}/oauth/authorize?${new URLSearchParams({ client_id: "unknown", response_type: "code" })}`;
    const authorize = (accept = "application/json") =>
      fetch(authorizeUrl, { redirect: "manual", headers: { accept, "x-forwarded-for": address } });
    const decide = () =>
      fetch(`${proxied.url}/oauth/authorize/decision`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, origin: proxied.url, "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": address },
        body: new URLSearchParams({ client_id: "unknown", decision: "allow_read" }),
      });
    for (let i = 0; i < rule.points; i++) expect((await (i % 2 === 0 ? authorize() : decide())).status, `request ${i + 1}`).toBe(400);

    const refused = await authorize();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({
      error: {
        code: "RATE_LIMITED",
        message: expect.stringMatching(/^Too many attempts/),
        details: { retryAfterSeconds: expect.any(Number) },
      },
    });
    const page = await authorize("text/html");
    expect(page.status).toBe(429);
    expect(page.headers.get("retry-after")).toBeTruthy();
    expect(await page.text()).toContain("Too many attempts");
    expect((await decide()).status).toBe(429);
    // The consent page (its bridge, within the request's client address) says so instead of asking.
    const consentPage = await withClientAddress(address, () => getBridge().oauthConsent({ client_id: "unknown", response_type: "code" }));
    expect(consentPage).toEqual({ kind: "refused", message: expect.stringMatching(/^Too many attempts/) });
    // Another address is not touched.
    const other = await fetch(authorizeUrl, { redirect: "manual", headers: { "x-forwarded-for": "203.0.113.31" } });
    expect(other.status).toBe(400);
  });
});
