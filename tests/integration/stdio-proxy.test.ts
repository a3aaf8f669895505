/**
 * `quire mcp-proxy`: the real CLI spawned on stdio by the MCP SDK's
 * StdioClientTransport, forwarding to a running Quire; local image files are
 * uploaded and turned into storage blocks, and a bad path writes nothing;
 * everything else the HTTP server offers (its capabilities and instructions,
 * resources, templates, subscriptions and their notifications, JSON-RPC
 * errors) comes through as it is.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, ErrorCode, McpError, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callMcp, projectRoot, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

let server: TestServer;
let owner: TestUser;
let proxy: Client;
let tempDir: string;
let documentId: string;
const stderr: string[] = [];

interface DocRead {
  headCommitId: string;
  sections: Array<{ sectionId: string; name: string; content: Array<Record<string, unknown>>; downloads?: Record<string, string> }>;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const pngBytes = () => Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), randomBytes(3_000)]);

async function callError(args: Record<string, unknown>, name = "sections") {
  return toolError((await proxy.callTool({ name, arguments: args })) as CallToolResult);
}

const read = () => callMcp<DocRead>(proxy, "read", { documentId });

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("proxy@example.test", "Pat Proxy");
  tempDir = await mkdtemp(path.join(os.tmpdir(), "quire-proxy-test-"));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.join(projectRoot, "bin", "quire.js"), "mcp-proxy", "--url", server.url, "--token", owner.token],
    cwd: projectRoot,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString("utf8")));
  proxy = new Client({ name: "quire-proxy-test", version: "1.0.0" });
  await proxy.connect(transport);
  ({ documentId } = await callMcp<{ documentId: string }>(proxy, "documents", { action: "create", path: "proxied" }));
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await server?.close();
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
});

describe("quire mcp-proxy", () => {
  test("lists the remote tools", async () => {
    const { tools } = await proxy.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ["documents", "read", "sections", "merge_requests", "upload_url"]) expect(names).toContain(name);
    const direct = await server.mcpClient(owner.token);
    expect(tools).toEqual((await direct.listTools()).tools);
    await direct.close();
  });

  test("uploads a local image and stores a storage block whose download returns the same bytes", async () => {
    const bytes = pngBytes();
    const file = path.join(tempDir, "diagram.png");
    await writeFile(file, bytes);
    const created = await callMcp<{ sectionId: string }>(proxy, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Diagram",
      content: [
        { blockType: "text", text: "See the diagram." },
        { blockType: "image", type: "file", path: file },
      ],
    });
    const doc = await read();
    const section = doc.sections.find((s) => s.sectionId === created.sectionId)!;
    expect(section.content[0]).toEqual({ blockType: "text", text: "See the diagram." });
    const block = section.content[1] as { blockType: string; type: string; mediaType: string; key: string };
    expect(block).toEqual({ blockType: "image", type: "storage", mediaType: "image/png", key: expect.stringMatching(/\.png$/) });
    const url = section.downloads?.[block.key];
    expect(url, "read returns a download URL per storage key (section.downloads)").toBeTypeOf("string");
    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(sha256(bytes));
  });

  test("rewrites batch_create sections and update newContent too (one upload per distinct file)", async () => {
    const a = path.join(tempDir, "a.jpg");
    const b = path.join(tempDir, "b.webp");
    await writeFile(a, randomBytes(500));
    await writeFile(b, randomBytes(700));
    const { uploads } = await import("@/db/schema");
    const uploadsBefore = await server.db.$count(uploads);
    const batch = await callMcp<{ sectionIds: string[] }>(proxy, "sections", {
      action: "batch_create",
      documentId,
      branchName: "main",
      sections: [
        { name: "A", content: [{ blockType: "image", type: "file", path: a }] },
        {
          name: "B",
          content: [
            { blockType: "image", type: "file", path: b },
            { blockType: "image", type: "file", path: a },
          ],
        },
      ],
    });
    expect(await server.db.$count(uploads)).toBe(uploadsBefore + 2);
    let doc = await read();
    const byId = new Map(doc.sections.map((s) => [s.sectionId, s]));
    const blockA = byId.get(batch.sectionIds[0]!)!.content[0]!;
    const blocksB = byId.get(batch.sectionIds[1]!)!.content;
    expect(blockA).toMatchObject({ type: "storage", mediaType: "image/jpeg" });
    expect(blocksB[0]).toMatchObject({ type: "storage", mediaType: "image/webp" });
    expect(blocksB[1]).toEqual(blockA);

    const updated = await callMcp<{ contentHash: string }>(proxy, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: batch.sectionIds[0],
      newContent: [{ blockType: "image", type: "file", path: b }],
    });
    expect(updated.contentHash).toMatch(/^[0-9a-f]{64}$/);
    doc = await read();
    expect(doc.sections.find((s) => s.sectionId === batch.sectionIds[0])!.content[0]).toMatchObject({
      type: "storage",
      mediaType: "image/webp",
    });
  });

  test.each([
    ["a missing file", () => path.join(tempDir, "missing.png"), "NOT_FOUND"],
    ["a relative path", () => "diagram.png", "VALIDATION_FAILED"],
    ["a directory", () => path.join(tempDir, "folder.png"), "VALIDATION_FAILED"],
    ["a file that is not an image by its extension", () => path.join(tempDir, "notes.txt"), "VALIDATION_FAILED"],
  ])("%s gives an isError result and writes nothing", async (_label, pathOf, code) => {
    await writeFile(path.join(tempDir, "notes.txt"), "hello");
    await rm(path.join(tempDir, "folder.png"), { recursive: true, force: true });
    await import("node:fs/promises").then((fs) => fs.mkdir(path.join(tempDir, "folder.png")));
    const good = path.join(tempDir, "good.png");
    await writeFile(good, pngBytes());
    const before = await read();
    const uploadsBefore = await server.db.$count((await import("@/db/schema")).uploads);
    const error = await callError({
      action: "create",
      documentId,
      branchName: "main",
      name: "Broken",
      // The good file comes first: it must not be uploaded either.
      content: [
        { blockType: "image", type: "file", path: good },
        { blockType: "image", type: "file", path: pathOf() },
      ],
    });
    expect(error.code).toBe(code);
    expect(error.message).toMatch(/content\[1\]\.path/);
    expect((await read()).headCommitId).toBe(before.headCommitId);
    expect(await server.db.$count((await import("@/db/schema")).uploads)).toBe(uploadsBefore);
  });

  test("remote errors come back unchanged", async () => {
    const error = await callError({ action: "create", documentId: "not-a-uuid", branchName: "main", name: "X", content: [] });
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(stderr.join("")).not.toMatch(/Error/);
  });

  test("offers the remote's capabilities and instructions, and forwards resources, templates and reads unchanged", async () => {
    const direct = await server.mcpClient(owner.token);
    try {
      expect(proxy.getServerCapabilities()).toEqual(direct.getServerCapabilities());
      expect(proxy.getServerCapabilities()?.resources).toEqual({ subscribe: true });
      expect(proxy.getInstructions()).toBe(direct.getInstructions());
      const listed = await proxy.listResources();
      expect(listed.resources.map((r) => r.uri)).toContain(`quire://documents/${documentId}`);
      expect(listed).toEqual(await direct.listResources());
      expect(await proxy.listResourceTemplates()).toEqual(await direct.listResourceTemplates());
      const uri = `quire://documents/${documentId}`;
      expect(await proxy.readResource({ uri })).toEqual(await direct.readResource({ uri }));
    } finally {
      await direct.close();
    }
  });

  test("a JSON-RPC error of the remote comes back as the same error (unknown resource, unknown tool)", async () => {
    const direct = await server.mcpClient(owner.token);
    try {
      const uri = "quire://documents/00000000-0000-4000-8000-000000000000";
      const viaProxy = await proxy.readResource({ uri }).catch((error: unknown) => error);
      const viaHttp = await direct.readResource({ uri }).catch((error: unknown) => error);
      expect(viaProxy).toBeInstanceOf(McpError);
      expect(viaProxy).toMatchObject({ code: (viaHttp as McpError).code, message: (viaHttp as McpError).message, data: { uri } });
      const unknownTool = await proxy.callTool({ name: "no_such_tool", arguments: {} }).catch((error: unknown) => error);
      expect(unknownTool).toBeInstanceOf(McpError);
      expect((unknownTool as McpError).code).toBe(ErrorCode.InvalidParams);
      const directUnknown = await direct.callTool({ name: "no_such_tool", arguments: {} }).catch((error: unknown) => error);
      expect((unknownTool as McpError).message).toBe((directUnknown as McpError).message);
    } finally {
      await direct.close();
    }
  });

  test("a subscription made through the proxy hears the document's head move, and nothing once unsubscribed", async () => {
    const uri = `quire://documents/${documentId}`;
    const heard: string[] = [];
    let arrived: () => void = () => {};
    proxy.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      heard.push(notification.params.uri);
      arrived();
    });
    await proxy.subscribeResource({ uri });
    const notified = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    await server.callTool("sections", owner.userId, {
      action: "create",
      documentId,
      branchName: "main",
      name: "Heard",
      content: [{ blockType: "text", text: "A head move." }],
    });
    await notified;
    expect(heard).toEqual([uri]);

    await proxy.unsubscribeResource({ uri });
    await server.callTool("sections", owner.userId, {
      action: "create",
      documentId,
      branchName: "main",
      name: "Unheard",
      content: [{ blockType: "text", text: "Another head move." }],
    });
    await proxy.ping();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(heard).toEqual([uri]);
  });
});
