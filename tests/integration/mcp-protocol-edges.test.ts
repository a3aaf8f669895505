/**
 * The MCP endpoint's protocol edges, on the fast path (the server as it runs)
 * and on the SDK path alone:
 *
 * - Host and Origin (DNS rebinding, as the MCP conformance suite's
 *   `dns-rebinding-protection` scenario sends them): a request sent to a host
 *   that is not the site's, or from a page of another origin, is 403 with a
 *   JSON-RPC error; localhost, IP addresses and QUIRE_PUBLIC_URL's host are
 *   answered; X-Forwarded-Host counts only behind a trusted proxy.
 * - GET accepting text/event-stream opens the caller's event stream (resource
 *   notifications); GET without it is 406; a stateless server has no session
 *   to DELETE (405 with `Allow: GET, POST`, at once).
 * - Valid JSON that is not a JSON-RPC message is -32600 Invalid Request, not
 *   -32700 Parse error.
 * - A body sent without a Content-Length over the 4 MiB limit gets the same
 *   413 PAYLOAD_TOO_LARGE envelope as a declared one, on /api/mcp and
 *   /api/trpc; under the limit it is served.
 */
import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { MAX_REQUEST_BYTES } from "@/server/core/limits";
import { createMcpEndpoint } from "@/server/http/mcp-endpoint";
import { MAX_STREAMS_PER_SUBSCRIBER } from "@/server/mcp/resources";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

const PUBLIC_HOST = "docs.example.test";

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One HTTP request with exactly these headers (Host included); `chunks` are
 * sent without a Content-Length. Fails when the answer does not end within
 * two seconds (an event stream left open).
 */
function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; chunks?: Buffer[] } = {},
): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: init.method ?? "POST", headers: init.headers },
      (res) => {
        answered = true;
        const timer = setTimeout(() => {
          res.destroy();
          reject(new Error(`${res.statusCode} ${res.headers["content-type"]}: the answer did not end within 2 s`));
        }, 2_000);
        const parts: Buffer[] = [];
        res.on("data", (part: Buffer) => parts.push(part));
        res.on("end", () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString("utf8") });
        });
      },
    );
    // A server that refuses a body before it has all of it may close while we still send: its answer is what counts.
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    if (init.chunks) for (const chunk of init.chunks) req.write(chunk);
    req.end(init.body);
  });
}

const mcpHeaders = (token: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  ...extra,
});

/** What the conformance scenario sends: an initialize. */
const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "edges", version: "1" } },
});

const json = (answer: Answer) => JSON.parse(answer.body) as Record<string, unknown>;

let server: TestServer;
/** The same database behind QUIRE_PUBLIC_URL=https://docs.example.test and a trusted proxy. */
let proxied: TestServer;
let owner: TestUser;
/** The MCP endpoint without the fast path, for the same caller. */
let sdkOnly: { http: Server; url: string };

beforeAll(async () => {
  server = await startTestServer();
  proxied = await startTestServer({ database: server.database, publicUrl: `https://${PUBLIC_HOST}`, trustProxy: true });
  owner = await server.createUser("owner@example.test", "Olive Owner");
  const endpoint = createMcpEndpoint("test", { fastPath: false });
  const context = { db: server.db, actor: owner.actor, clock: () => new Date(), files: server.files, live: server.live };
  const http = createServer((req, res) => {
    endpoint.handle(req, res, context).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  sdkOnly = { http, url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp` };
});

afterAll(async () => {
  sdkOnly?.http.closeAllConnections();
  await new Promise((resolve) => sdkOnly?.http.close(resolve));
  await proxied?.close();
  await server?.close();
});

describe("DNS rebinding: the host a request was sent to and the page it came from", () => {
  const mcpUrl = () => `${server.url}/api/mcp`;
  const port = () => new URL(server.url).port;

  test("another site's name for this server (the conformance scenario's evil.example.com) is 403 with a JSON-RPC error", async () => {
    const refused = await send(mcpUrl(), {
      headers: mcpHeaders(owner.token, { host: "evil.example.com", origin: "http://evil.example.com" }),
      body: initialize,
    });
    expect(refused.status).toBe(403);
    expect(json(refused)).toEqual({ jsonrpc: "2.0", error: { code: -32000, message: expect.stringMatching(/host/) }, id: null });
    // The Host alone decides it: the attacker's page need not send an Origin.
    const noOrigin = await send(mcpUrl(), { headers: mcpHeaders(owner.token, { host: `evil.example.com:${port()}` }), body: initialize });
    expect(noOrigin.status).toBe(403);
  });

  test("a page of another origin is 403, even with a valid Host", async () => {
    for (const origin of ["http://evil.example.com", `http://localhost:${Number(port()) + 1}`, "null"]) {
      const refused = await send(mcpUrl(), { headers: mcpHeaders(owner.token, { origin }), body: initialize });
      expect(refused.status, origin).toBe(403);
      expect(json(refused), origin).toMatchObject({ jsonrpc: "2.0", error: { code: -32000, message: expect.stringMatching(/origin/i) } });
    }
  });

  test("localhost, loopback and IP addresses are answered, with their own Origin (the conformance scenario's valid request)", async () => {
    for (const host of [`localhost:${port()}`, `127.0.0.1:${port()}`, `[::1]:${port()}`, `quire.localhost:${port()}`, "192.0.2.10:3000"]) {
      const answer = await send(mcpUrl(), { headers: mcpHeaders(owner.token, { host, origin: `http://${host}` }), body: initialize });
      expect(answer.status, host).toBe(200);
      expect(json(answer), host).toMatchObject({ id: 1, result: { serverInfo: { name: "quire" } } });
    }
  });

  test("QUIRE_PUBLIC_URL's host is answered, and its origin is the site's whatever Host reached the process", async () => {
    const proxiedMcp = `${proxied.url}/api/mcp`;
    expect((await send(proxiedMcp, { headers: mcpHeaders(owner.token, { host: PUBLIC_HOST }), body: initialize })).status).toBe(200);
    expect((await send(proxiedMcp, { headers: mcpHeaders(owner.token, { host: "wiki.example.test" }), body: initialize })).status).toBe(
      403,
    );
    const fromPublicPage = await send(proxiedMcp, {
      headers: mcpHeaders(owner.token, { origin: `https://${PUBLIC_HOST}` }),
      body: initialize,
    });
    expect(fromPublicPage.status).toBe(200);
  });

  test("X-Forwarded-Host is the host judged behind a trusted proxy, and ignored otherwise", async () => {
    const forwarded = (host: string) => mcpHeaders(owner.token, { "x-forwarded-host": host });
    expect((await send(`${proxied.url}/api/mcp`, { headers: forwarded("evil.example.com"), body: initialize })).status).toBe(403);
    expect((await send(`${proxied.url}/api/mcp`, { headers: forwarded(PUBLIC_HOST), body: initialize })).status).toBe(200);
    expect((await send(mcpUrl(), { headers: forwarded("evil.example.com"), body: initialize })).status).toBe(200);
  });
});

describe("GET opens the event stream; there is no session to DELETE", () => {
  for (const [path, url] of [
    ["the fast path", () => `${server.url}/api/mcp`],
    ["the SDK path", () => sdkOnly.url],
  ] as const) {
    test(`${path}: GET with Accept: text/event-stream is a stream, without it 406; DELETE is 405 with Allow: GET, POST, at once`, async () => {
      const controller = new AbortController();
      const stream = await fetch(url(), {
        headers: { authorization: `Bearer ${owner.token}`, accept: "text/event-stream" },
        signal: controller.signal,
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get("content-type")).toBe("text/event-stream");
      controller.abort();
      const notAcceptable = await send(url(), {
        method: "GET",
        headers: { authorization: `Bearer ${owner.token}`, accept: "application/json" },
      });
      expect(notAcceptable.status).toBe(406);
      expect(json(notAcceptable)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null });
      const answer = await send(url(), {
        method: "DELETE",
        headers: { authorization: `Bearer ${owner.token}`, accept: "text/event-stream" },
      });
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe("GET, POST");
      expect(json(answer)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 }, id: null });
    });
  }
});

test(`a caller holds at most ${MAX_STREAMS_PER_SUBSCRIBER} event streams: opening another ends the oldest, the rest stay open`, async () => {
  const opened: Array<{ ended: Promise<void>; controller: AbortController }> = [];
  for (let i = 0; i <= MAX_STREAMS_PER_SUBSCRIBER; i++) {
    const controller = new AbortController();
    const stream = await fetch(`${server.url}/api/mcp`, {
      headers: { authorization: `Bearer ${owner.token}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    // Resolves when the server ends the stream; an abort at the end of the test is not an end.
    const ended = stream
      .text()
      .then(() => undefined)
      .catch(() => new Promise<void>(() => {}));
    opened.push({ ended, controller });
  }
  const within = (ms: number, what: Promise<void>) =>
    Promise.race([what.then(() => "ended"), new Promise((resolve) => setTimeout(() => resolve("open"), ms))]);
  try {
    expect(await within(2_000, opened[0]!.ended)).toBe("ended");
    const rest = await Promise.all(opened.slice(1).map((o) => within(200, o.ended)));
    expect(rest).toEqual(Array(MAX_STREAMS_PER_SUBSCRIBER).fill("open"));
  } finally {
    for (const o of opened) o.controller.abort();
  }
});

describe("valid JSON that is not a JSON-RPC message is -32600 Invalid Request", () => {
  for (const [path, url, token] of [
    ["the fast path", () => `${server.url}/api/mcp`, () => owner.token],
    ["the SDK path", () => sdkOnly.url, () => owner.token],
  ] as const) {
    test(path, async () => {
      const bodies = {
        "an object id": '{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
        "an array id": '{"jsonrpc":"2.0","id":[1],"method":"ping"}',
        "a boolean id": '{"jsonrpc":"2.0","id":true,"method":"ping"}',
        "a fractional id": '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
        "a number": "5",
        "a batch with one bad message": '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":false,"method":"ping"}]',
      };
      for (const [label, body] of Object.entries(bodies)) {
        const answer = await send(url(), { headers: mcpHeaders(token()), body });
        expect(answer.status, label).toBe(400);
        expect(json(answer), label).toEqual({
          jsonrpc: "2.0",
          error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) },
          id: null,
        });
      }
      const broken = await send(url(), { headers: mcpHeaders(token()), body: '{"jsonrpc":"2.0",' });
      expect(json(broken)).toMatchObject({ error: { code: -32700 } });
    });
  }
});

describe("one 413 envelope for a body over the limit, declared or not", () => {
  const oversized = () => Buffer.from(JSON.stringify({ action: "create", path: "too-big", title: "x".repeat(MAX_REQUEST_BYTES + 1024) }));
  /** The body in 64 KiB chunks, sent without a Content-Length. */
  const inChunks = (body: Buffer) =>
    Array.from({ length: Math.ceil(body.length / 65_536) }, (_, i) => body.subarray(i * 65_536, (i + 1) * 65_536));

  for (const [face, path, headers] of [
    ["MCP", "/api/mcp", () => mcpHeaders(owner.token)],
    ["tRPC", "/api/trpc/documents", () => ({ authorization: `Bearer ${owner.token}`, "content-type": "application/json" })],
  ] as const) {
    test(`${face}: without a Content-Length, the same PAYLOAD_TOO_LARGE envelope as with one`, async () => {
      const body = oversized();
      const declared = await send(`${server.url}${path}`, {
        headers: { ...headers(), "content-length": String(body.length) },
        body: body.toString(),
      });
      const streamed = await send(`${server.url}${path}`, { headers: headers(), chunks: inChunks(body) });
      expect(declared.status).toBe(413);
      expect(json(declared)).toEqual({
        error: { code: "PAYLOAD_TOO_LARGE", message: expect.stringContaining("4 MiB"), details: { limitBytes: MAX_REQUEST_BYTES } },
      });
      expect(streamed.status).toBe(413);
      expect(streamed.headers["content-type"]).toBe("application/json");
      expect(json(streamed)).toEqual(json(declared));
    });
  }

  test("a body without a Content-Length under the limit is served, on both faces", async () => {
    const call = Buffer.from(
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "documents", arguments: { action: "list" } } }),
    );
    const viaMcp = await send(`${server.url}/api/mcp`, { headers: mcpHeaders(owner.token), chunks: inChunks(call) });
    expect(viaMcp.status).toBe(200);
    expect(json(viaMcp)).toMatchObject({ id: 7, result: { structuredContent: { documents: [] } } });
    const viaTrpc = await send(`${server.url}/api/trpc/documents`, {
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      chunks: inChunks(Buffer.from(JSON.stringify({ action: "list" }))),
    });
    expect(viaTrpc.status).toBe(200);
    expect(json(viaTrpc)).toMatchObject({ result: { data: { documents: [] } } });
  });
});
