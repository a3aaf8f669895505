/**
 * Bad input on every face gets a clear coded error and changes nothing:
 * nesting deep enough to overflow a recursive walk, mentions that are not user
 * ids, malformed MCP tools/call arguments, and bodies over the one request
 * limit (MAX_REQUEST_BYTES) on tRPC and MCP. Runs on PostgreSQL when
 * TEST_DATABASE_URL is set.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { MAX_BASE64_CHARS, MAX_TEXT_BLOCK_CHARS } from "@/server/core/blocks";
import { MAX_REQUEST_BYTES } from "@/server/core/limits";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

let server: TestServer;
let owner: TestUser;
let mcp: Client;
let documentId: string;

const DEPTH = 20_000;
const deeplyNested = (prefix: string) => `${prefix}${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}}`;

const mcpHeaders = (token: string) => ({
  authorization: `Bearer ${token}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
});

/** A JSON-RPC response to tools/call: a result (maybe an error result) or a protocol error. */
interface RpcResponse {
  id?: unknown;
  error?: { code: number; message: string };
  result: { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent?: unknown };
}

/** POSTs raw text to the MCP endpoint and returns the status and parsed JSON-RPC response. */
async function postMcp(body: string): Promise<{ status: number; json: RpcResponse }> {
  const response = await fetch(`${server.url}/api/mcp`, { method: "POST", headers: mcpHeaders(owner.token), body });
  return { status: response.status, json: (await response.json()) as RpcResponse };
}

/** POSTs raw text to a tRPC mutation and returns the status and the error payload Quire puts in `data.error`. */
async function postTrpc(procedure: string, body: string | ReadableStream, extra: RequestInit = {}) {
  const response = await fetch(`${server.url}/api/trpc/${procedure}`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
    body,
    ...extra,
  } as RequestInit);
  const json = (await response.json()) as { error?: { data?: { error?: { code: string; message: string } } } };
  return { status: response.status, error: json.error?.data?.error };
}

async function sectionCount(): Promise<number> {
  const doc = await callMcp<{ sections: unknown[] }>(mcp, "read", { documentId, branchName: "main" });
  return doc.sections.length;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  mcp = await server.mcpClient(owner.token);
  ({ documentId } = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "bad-input" }));
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe("deeply nested arguments", () => {
  test("an MCP tools/call is refused with VALIDATION_FAILED naming the depth", async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"documents","arguments":${deeplyNested('{"action":"list","x":')}}}`;
    const { status, json } = await postMcp(body);
    expect(status).toBe(200);
    const error = toolError(json.result);
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.message).toMatch(/deeper than 32 levels/);
  });

  test.each(["documents", "sections", "workspace", "apiTokens"])("tRPC %s answers 400 VALIDATION_FAILED, not 500", async (procedure) => {
    const { status, error } = await postTrpc(procedure, deeplyNested('{"action":"list","x":'));
    expect(status).toBe(400);
    expect(error?.code).toBe("VALIDATION_FAILED");
  });

  test("an unstorable string is refused with its path", async () => {
    const failure = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Notes",
      content: [
        { blockType: "text", text: "ok" },
        { blockType: "text", text: "a\u0000b" },
      ],
    });
    expect(failure.code).toBe("VALIDATION_FAILED");
    expect(failure.details?.issues).toEqual([{ path: "content.1.text", message: expect.stringMatching(/NUL/) }]);
  });

  test("nesting within the limit still reaches the schema, which names the stray field", async () => {
    const failure = await callMcpError(mcp, "documents", { action: "list", x: [[[[1]]]] });
    expect(failure.code).toBe("VALIDATION_FAILED");
    expect(failure.message).not.toMatch(/deeper/);
  });
});

describe("comment mentions", () => {
  test.each(["not-a-uuid", "1234", "00000000-0000-0000-0000-00000000000g"])(
    "mentions=%j is VALIDATION_FAILED and creates nothing",
    async (mention) => {
      const before = await sectionCount();
      const failure = await callMcpError(mcp, "sections", {
        action: "create",
        documentId,
        branchName: "main",
        name: "Notes",
        content: [{ blockType: "text", text: `<svc:comment-new body="look" mentions="${mention}">here</svc:comment-new>` }],
      });
      expect(failure.code).toBe("VALIDATION_FAILED");
      expect(failure.message).toMatch(/user ids \(UUIDs\)/);
      expect(await sectionCount()).toBe(before);
    },
  );

  test("a well-formed mention of a member still works", async () => {
    const created = await callMcp<{ sectionId: string }>(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Mentions",
      content: [{ blockType: "text", text: `<svc:comment-new body="look" mentions="${owner.userId}">here</svc:comment-new>` }],
    });
    expect(created.sectionId).toBeTruthy();
  });
});

describe("malformed tools/call arguments answer -32602", () => {
  test.each([
    ["a string", '"list"'],
    ["null", "null"],
    ["a number", "7"],
    ["an array", '[{"action":"list"}]'],
  ])("arguments as %s", async (_label, args) => {
    const { status, json } = await postMcp(
      `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"documents","arguments":${args}}}`,
    );
    expect(status).toBe(200);
    expect(json.error?.code).toBe(-32602);
    expect(json.id).toBe(9);
  });
});

describe("one request size limit on every face", () => {
  const oversized = () => JSON.stringify({ action: "create", path: "too-big", title: "x".repeat(MAX_REQUEST_BYTES + 1024) });

  test("tRPC refuses a declared oversized body with 413 PAYLOAD_TOO_LARGE", async () => {
    const response = await fetch(`${server.url}/api/trpc/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      body: oversized(),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  test("tRPC refuses a streamed body (no Content-Length) once it passes the limit", async () => {
    const bytes = new TextEncoder().encode(oversized());
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 256 * 1024) controller.enqueue(bytes.subarray(at, at + 256 * 1024));
        controller.close();
      },
    });
    const response = await fetch(`${server.url}/api/trpc/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    // The same envelope as a declared oversized body gets.
    expect(response.status).toBe(413);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(error.message).toMatch(/4 MiB/);
  });

  test("MCP refuses an oversized body with 413", async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"documents","arguments":${oversized()}}}`;
    const response = await fetch(`${server.url}/api/mcp`, { method: "POST", headers: mcpHeaders(owner.token), body });
    expect(response.status).toBe(413);
  });

  test("nothing was created by the refused calls", async () => {
    const list = await callMcp<{ documents: Array<{ path: string }> }>(mcp, "documents", { action: "list" });
    expect(list.documents.map((d) => d.path)).not.toContain("too-big");
  });

  test("the largest text block and base64 image the schema advertises fit inside one call", async () => {
    const before = await sectionCount();
    const trpc = server.trpcClient(owner.token);
    await trpc.sections.mutate({
      action: "create",
      documentId,
      branchName: "main",
      name: "Largest text",
      content: [{ blockType: "text", text: "a".repeat(MAX_TEXT_BLOCK_CHARS) }],
    });
    await callMcp(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Largest image",
      content: [{ blockType: "image", type: "base64", mediaType: "image/png", data: "A".repeat(MAX_BASE64_CHARS) }],
    });
    expect(await sectionCount()).toBe(before + 2);
  });
});
