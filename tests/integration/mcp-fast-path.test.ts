/**
 * The MCP fast path answers exactly as the SDK path does. Two identical
 * worlds (each its own database, users and MCP endpoint, one with the fast
 * path and one without) receive the same script of raw HTTP requests: every
 * kind of request (initialize, notifications, tools/list, ping, every tool's
 * calls and their errors, malformed params, an unknown tool and method,
 * batches, odd headers and bodies, GET and DELETE). Each pair of answers must
 * have the same status, media type and JSON, with the ids each world
 * generates (documents, sections, commits, users…, and the content hashes
 * of content holding such ids, its own address and URL signatures) mapped
 * one to one.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { ActionContext } from "@/server/actions/context";
import { createMcpEndpoint } from "@/server/http/mcp-endpoint";
import { startTestServer, type TestServer } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

interface Exchange {
  step: string;
  status: number;
  mediaType: string;
  body: unknown;
}

interface World {
  test: TestServer;
  http: Server;
  url: string;
  reviewerId: string;
  exchanges: Exchange[];
  /** Calls that succeeded or failed other than the script says. */
  surprises: string[];
}

const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };

async function makeWorld(fastPath: boolean): Promise<World> {
  const test = await startTestServer();
  const owner = await test.createUser("owner@example.test", "Olive Owner");
  const reviewer = await test.createUser("rita@example.test", "Rita Reviewer");
  // A clock that ticks the same way in both worlds, so times match and ties in time-ordered lists do not fall to random ids.
  let now = Date.parse("2026-11-23T09:00:00.000Z");
  const tick = () => {
    now += 1000;
    return new Date(now);
  };
  const context: ActionContext = { db: test.db, actor: owner.actor, clock: tick, files: test.files, live: test.live };
  const endpoint = createMcpEndpoint("test", { fastPath });
  const http = createServer((req, res) => {
    endpoint.handle(req, res, context).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return { test, http, url: `http://127.0.0.1:${port}/api/mcp`, reviewerId: reviewer.userId, exchanges: [], surprises: [] };
}

/** Sends one HTTP request and records its answer; an event stream is recorded by its status and media type only. */
async function send(world: World, step: string, init: { method?: string; headers?: Record<string, string>; body?: string }) {
  const controller = new AbortController();
  const response = await fetch(world.url, {
    method: init.method ?? "POST",
    headers: init.headers ?? headers,
    body: init.body,
    signal: controller.signal,
  });
  const mediaType = (response.headers.get("content-type") ?? "").split(";", 1)[0]!;
  let body: unknown = null;
  if (mediaType === "text/event-stream") controller.abort();
  else {
    const text = await response.text();
    body = text === "" ? "" : JSON.parse(text);
  }
  world.exchanges.push({ step, status: response.status, mediaType, body });
  return body as { result?: { structuredContent?: Record<string, unknown> }; error?: unknown };
}

let nextId = 0;
const rpc = (world: World, step: string, method: string, params?: unknown, id: number | string = ++nextId) =>
  send(world, step, { body: JSON.stringify({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }) });

/** A tools/call that should succeed, or fail with `failure` (an error code); returns the structuredContent. */
async function call(world: World, name: string, args: Record<string, unknown>, failure?: string): Promise<Record<string, unknown>> {
  const step = `tools/call ${name} ${String(args.action ?? "")}`;
  const answer = await rpc(world, step, "tools/call", { name, arguments: args });
  const result = answer.result as { isError?: boolean; content?: unknown; structuredContent?: Record<string, unknown> } | undefined;
  const code = result?.isError ? toolError(result).code : undefined;
  if (code !== failure) world.surprises.push(`${step}: expected ${failure ?? "success"}, got ${code ?? "success"}`);
  return result?.structuredContent ?? {};
}

const text = (t: string) => ({ blockType: "text", text: t });

/** The same script for both worlds; later requests use what this world answered earlier. */
async function script(world: World): Promise<void> {
  nextId = 0;
  await rpc(world, "initialize", "initialize", {
    protocolVersion: "2025-06-18",
    capabilities: {},
    clientInfo: { name: "equivalence", version: "1" },
  });
  await send(world, "notification", { body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  await rpc(world, "tools/list", "tools/list", {});
  await rpc(world, "ping", "ping");
  await rpc(world, "ping with a string id", "ping", {}, "ping-1");
  await rpc(world, "unknown method", "resources/list", {});

  const doc = await call(world, "documents", {
    action: "create",
    path: "equivalence/handbook",
    sections: [
      { name: "Intro", content: [text("Welcome.")] },
      { name: "Plans", content: [text("- Free")] },
    ],
  });
  const documentId = doc.documentId as string;
  const [intro, plans] = doc.sectionIds as string[];
  await call(world, "documents", { action: "get", documentId });
  await call(world, "documents", { action: "list", pathPrefix: "equivalence/" });
  await call(world, "documents", { action: "create_branch", documentId, branchName: "work" });
  await call(world, "documents", { action: "update", documentId, branchName: "work", newName: "Handbook" });
  await call(world, "documents", { action: "update", documentId, branchName: "work", newName: "Handbook" });
  const tag = await call(world, "documents", { action: "create_tag", tagPath: "equivalence/draft" });
  await call(world, "documents", { action: "assign_tag", documentId, branchName: "work", tagId: tag.tagId });
  await call(world, "documents", { action: "set_property", documentId, branchName: "work", columnId: documentId, value: "x" });
  await call(world, "documents", { action: "list_branches", documentId });
  await call(world, "documents", { action: "log", documentId, branchName: "work", limit: 2 });
  await call(world, "documents", { action: "show", documentId, commitId: doc.commitId });
  await call(world, "documents", { action: "get_permissions", documentId }, "PERMISSION_DENIED");
  await call(world, "documents", { action: "get", documentId: "not-a-uuid" }, "VALIDATION_FAILED");
  await call(world, "documents", { action: "get", documentId: "00000000-0000-4000-8000-000000000000" }, "NOT_FOUND");
  await call(world, "documents", { action: "no_such_action" }, "VALIDATION_FAILED");
  await call(world, "documents", {}, "VALIDATION_FAILED");

  const read = await call(world, "read", { documentId, branchName: "work" });
  const [introView] = read.sections as Array<{ contentHash: string }>;
  const section = await call(world, "sections", {
    action: "create",
    documentId,
    branchName: "work",
    name: "Notes",
    content: [text(`<svc:comment-new body="look" mentions="${world.reviewerId}">here</svc:comment-new>`)],
  });
  await call(world, "sections", {
    action: "update",
    documentId,
    branchName: "work",
    sectionId: intro,
    newContent: [text("Hello.")],
    expectedContentHash: introView!.contentHash,
  });
  await call(
    world,
    "sections",
    {
      action: "update",
      documentId,
      branchName: "work",
      sectionId: intro,
      newContent: [text("Stale.")],
      expectedContentHash: introView!.contentHash,
    },
    "CONTENT_HASH_MISMATCH",
  );
  await call(world, "sections", { action: "batch_create", documentId, branchName: "work", sections: [{ name: "A", content: [] }] });
  await call(world, "sections", { action: "delete", documentId, branchName: "work", sectionId: section.sectionId });
  await call(
    world,
    "sections",
    { action: "update", documentId, branchName: "work", sectionId: plans, newContent: [text("a\u0000b")] },
    "VALIDATION_FAILED",
  );
  await call(world, "read", { documentId, branchName: "work" });
  await call(world, "read", { documentId, commitId: doc.commitId, sectionIds: [plans] });

  const request = await call(world, "merge_requests", {
    action: "create",
    documentId,
    sourceBranch: "work",
    targetBranch: "main",
    title: "Work",
    reviewerIds: [world.reviewerId],
  });
  await call(world, "merge_requests", { action: "analyze", mergeRequestId: request.mergeRequestId });
  await call(world, "merge_requests", { action: "list", documentId });
  await call(world, "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
  await call(world, "merge_requests", { action: "close", mergeRequestId: request.mergeRequestId }, "MERGE_REQUEST_NOT_OPEN");
  await call(world, "members", { action: "search", query: "rit" });
  await call(world, "upload_url", { filename: "notes.txt", mediaType: "text/plain", size: 10 });
  await call(world, "upload_url", { filename: "../notes.txt", mediaType: "text/plain" }, "VALIDATION_FAILED");

  await rpc(world, "tools/call of an unknown tool", "tools/call", { name: "no_such_tool", arguments: { action: "list" } });
  for (const [label, args] of [
    ["string", '"list"'],
    ["null", "null"],
    ["array", '[{"action":"list"}]'],
  ]) {
    await send(world, `arguments as ${label}`, {
      body: `{"jsonrpc":"2.0","id":"bad-${label}","method":"tools/call","params":{"name":"documents","arguments":${args}}}`,
    });
  }
  await rpc(world, "tools/call without a name", "tools/call", { arguments: {} });
  await rpc(world, "tools/call without params", "tools/call");
  await send(world, "nested too deep", {
    body: `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"documents","arguments":{"action":"list","x":${"[".repeat(5000)}${"]".repeat(5000)}}}}`,
  });

  await send(world, "batch", {
    body: JSON.stringify([
      { jsonrpc: "2.0", id: "b1", method: "ping" },
      { jsonrpc: "2.0", id: "b2", method: "tools/call", params: { name: "documents", arguments: { action: "get", documentId } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
    ]),
  });
  await send(world, "batch of notifications", { body: JSON.stringify([{ jsonrpc: "2.0", method: "notifications/initialized" }]) });
  await send(world, "invalid JSON", { body: '{"jsonrpc":"2.0",' });
  await send(world, "not JSON-RPC", { body: '{"hello":"world"}' });
  await send(world, "wrong content type", {
    headers: { ...headers, "content-type": "text/plain" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await send(world, "no event-stream in Accept", {
    headers: { ...headers, accept: "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await send(world, "unsupported protocol version", {
    headers: { ...headers, "mcp-protocol-version": "1999-01-01" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });
  await send(world, "supported protocol version", {
    headers: { ...headers, "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "members", arguments: { action: "list" } } }),
  });
  await send(world, "GET without event-stream", { method: "GET", headers: { accept: "application/json" } });
  await send(world, "GET", { method: "GET", headers: { accept: "text/event-stream" } });
  await send(world, "DELETE", { method: "DELETE", headers: { accept: "application/json, text/event-stream" } });
}

/**
 * The answer with each world's generated ids renamed by first appearance:
 * keys are walked in sorted order (serialization order does not matter), a
 * text block's JSON and a page cursor (base64url JSON) are opened first.
 */
function normalizer() {
  const ids = new Map<string, string>();
  // Ids; content hashes (content can hold generated ids, such as a new comment's); each world's own address and URL signatures.
  const generated = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{64}\b|\/\/localhost:\d+|signature=[\w-]+/gi;
  const rename = (value: string) =>
    value.replace(generated, (id) => {
      if (!ids.has(id)) ids.set(id, `<id ${ids.size + 1}>`);
      return ids.get(id)!;
    });
  const walk = (value: unknown, key?: string): unknown => {
    if (typeof value === "string") {
      if (key === "nextCursor") return walk(JSON.parse(Buffer.from(value, "base64url").toString("utf8")));
      if (key === "text" && value.startsWith("{")) return walk(JSON.parse(value));
      return rename(value);
    }
    if (Array.isArray(value)) return value.map((item) => walk(item));
    if (value === null || typeof value !== "object") return value;
    const keys = Object.keys(value).sort();
    return Object.fromEntries(keys.map((name) => [rename(name), walk((value as Record<string, unknown>)[name], name)]));
  };
  return (exchange: Exchange) => walk(exchange);
}

let sdkWorld: World;
let fastWorld: World;

beforeAll(async () => {
  [sdkWorld, fastWorld] = await Promise.all([makeWorld(false), makeWorld(true)]);
  await script(sdkWorld);
  await script(fastWorld);
}, 120_000);

afterAll(async () => {
  for (const world of [sdkWorld, fastWorld]) {
    if (!world) continue;
    world.http.closeAllConnections();
    await new Promise((resolve) => world.http.close(resolve));
    await world.test.close();
  }
});

test("both worlds ran the whole script, and every call succeeded or failed as the script says", () => {
  expect(sdkWorld.exchanges.length).toBeGreaterThan(50);
  expect(fastWorld.exchanges.length).toBe(sdkWorld.exchanges.length);
  expect(sdkWorld.surprises).toEqual([]);
  expect(fastWorld.surprises).toEqual([]);
});

test("the fast path answers every request exactly as the SDK path does", () => {
  const sdk = normalizer();
  const fast = normalizer();
  for (const [index, expected] of sdkWorld.exchanges.entries()) {
    expect(fast(fastWorld.exchanges[index]!), expected.step).toEqual(sdk(expected));
  }
});

test("a tool result's text block is its structuredContent, on both paths", () => {
  for (const world of [sdkWorld, fastWorld]) {
    for (const exchange of world.exchanges) {
      const result = (exchange.body as { result?: { content?: Array<{ text?: string }>; structuredContent?: unknown } } | null)?.result;
      if (result?.structuredContent === undefined) continue;
      expect(JSON.parse(result.content![0]!.text!), exchange.step).toEqual(result.structuredContent);
    }
  }
});
