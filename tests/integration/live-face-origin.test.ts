/**
 * Cross-site WebSocket hijacking: a page on another origin of the same site
 * (another port on localhost, a sibling subdomain) gets the member's session
 * cookie sent with its upgrade to a live room. The upgrade checks Origin with
 * the rule tRPC's CSRF guard uses (server/http/csrf.ts): the request's Host,
 * QUIRE_PUBLIC_URL's host, X-Forwarded-Host only behind a trusted proxy. A
 * foreign Origin is refused with 403 and the coded JSON error before any Yjs
 * byte; an upgrade without Origin (y-websocket in Node, scripts) is let in.
 */
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ensureAuthSecret } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { connectLive, roomName, upgradeStatus } from "../helpers/collab";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

const PUBLIC_URL = "https://docs.example.test";

let server: TestServer;
/** The same database behind a configured public URL and a trusted proxy. */
let proxied: TestServer;
let owner: TestUser;
let cookie: string;
/** The same session under the name a server with an https public URL reads. */
let secureCookie: string;
let room: string;

/** The coded error of a refused upgrade's JSON body. */
const errorCode = (body: string): string | undefined => (JSON.parse(body) as { error?: { code?: string } }).error?.code;

beforeAll(async () => {
  server = await startTestServer();
  proxied = await startTestServer({ database: server.database, publicUrl: PUBLIC_URL, trustProxy: true });
  owner = await server.createUser("owner@example.test", "Olive Owner");
  const created = (await server.callTool("documents", owner.userId, {
    action: "create",
    path: "live/origin",
    sections: [{ name: "Draft", content: [{ blockType: "text", text: "Not for other origins" }] }],
  })) as { documentId: string; sectionIds: string[] };
  room = roomName(created.documentId, "main", created.sectionIds[0]);
  const secret = await ensureAuthSecret(server.db, undefined);
  const session = await encode({ token: { sub: owner.userId }, secret });
  cookie = `${sessionCookieName(false)}=${session}`;
  secureCookie = `${sessionCookieName(true)}=${session}`;
});

afterAll(async () => {
  await proxied?.close();
  await server?.close();
});

describe("a page of another origin cannot open a room with the member's cookie", () => {
  test("another port on the same host: 403 CSRF_REJECTED with the JSON error", async () => {
    const { port } = new URL(server.url);
    const refused = await upgradeStatus(server.url, room, { cookie, origin: `http://localhost:${Number(port) + 1}` });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: "CSRF_REJECTED", message: expect.stringContaining("live rooms") } });
  });

  test("a sibling subdomain of the public URL: 403", async () => {
    const refused = await upgradeStatus(proxied.url, room, { cookie: secureCookie, origin: "https://blog.example.test" });
    expect(refused.status).toBe(403);
    expect(errorCode(refused.body)).toBe("CSRF_REJECTED");
  });

  test("an Origin that is not a URL at all (a sandboxed frame's `null`): 403", async () => {
    const refused = await upgradeStatus(server.url, room, { cookie, origin: "null" });
    expect(refused.status).toBe(403);
    expect(errorCode(refused.body)).toBe("CSRF_REJECTED");
  });

  test("a foreign page is refused whatever credential it brings (an API token in the query too)", async () => {
    const refused = await upgradeStatus(server.url, `${room}?token=${owner.token}`, { origin: "http://evil.example" });
    expect(refused.status).toBe(403);
  });

  test("X-Forwarded-Host names the site's own host only behind a trusted proxy", async () => {
    const forwarded = { origin: "https://intranet.example.test", "x-forwarded-host": "intranet.example.test" };
    expect((await upgradeStatus(server.url, room, { cookie, ...forwarded })).status).toBe(403);
    expect((await upgradeStatus(proxied.url, room, { cookie: secureCookie, ...forwarded })).status).toBe(101);
  });
});

describe("the site's own pages and clients outside a browser still connect", () => {
  test("the page's own origin (the Host it came to)", async () => {
    expect((await upgradeStatus(server.url, room, { cookie, origin: server.url })).status).toBe(101);
  });

  test("the configured public URL, whatever Host the request reached the process with", async () => {
    expect((await upgradeStatus(proxied.url, room, { cookie: secureCookie, origin: PUBLIC_URL })).status).toBe(101);
  });

  test("no Origin: the y-websocket provider in Node syncs with the cookie", async () => {
    const client = await connectLive(server.url, room, {}, { headers: { cookie } });
    try {
      expect(client.text().toString()).toBe("Not for other origins");
    } finally {
      client.close();
    }
  });
});
