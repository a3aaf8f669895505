/**
 * `quire mcp-proxy`: an MCP server on stdio that forwards everything to a
 * remote Quire over Streamable HTTP, for MCP clients that only speak stdio
 * and for local files. It connects first and offers the remote's own
 * capabilities and instructions; then every request the remote serves
 * (tools, resources and their templates, subscribe/unsubscribe, whatever the
 * remote adds later) is forwarded as it is, its result or JSON-RPC error
 * returned unchanged, and every notification the remote sends (for example
 * `notifications/resources/updated` from its event stream) is passed on to
 * the stdio client, and the stdio client's notifications to the remote.
 *
 * Tool calls are forwarded unchanged too, except that in a `sections` call each image block
 * `{ blockType: "image", type: "file", path }` is uploaded first (via
 * `upload_url` and a PUT) and replaced by
 * `{ blockType: "image", type: "storage", mediaType, key }`.
 *
 * If any local file cannot be used (path not absolute, missing, unreadable,
 * not a PNG/JPEG/GIF/WebP image by its extension), the call returns an
 * isError result and nothing is forwarded, so nothing is written.
 *
 * stdout carries the protocol only; diagnostics go to stderr.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  McpError,
  type Notification,
  type Result,
  ResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { ErrorCode } from "@/server/core/errors";
import { mediaTypeForFilename } from "@/server/core/media-types";
import packageJson from "../../package.json" with { type: "json" };
import { toolErrorResult } from "./tool-error";

export interface StdioProxyOptions {
  /** The Quire server, e.g. http://localhost:3000 (a URL ending in /api/mcp works too). */
  url: string;
  /** An API token (`quire token create`). */
  token: string;
}

type Json = Record<string, unknown>;

function errorResult(code: ErrorCode, message: string, details?: Json): CallToolResult {
  return toolErrorResult(details ? { code, message, details } : { code, message });
}

class ProxyFailure extends Error {
  constructor(readonly result: CallToolResult) {
    super("proxy failure");
  }
}

/**
 * The remote's JSON-RPC error as the stdio client should see it: the same
 * code, message and data (the SDK's McpError prefixes "MCP error <code>: "
 * to the message it received, which would otherwise be prefixed twice).
 */
function remoteJsonRpcError(error: McpError): { code: number; message: string; data?: unknown } {
  const message = error.message.replace(/^MCP error -?\d+: /, "");
  return error.data === undefined ? { code: error.code, message } : { code: error.code, message, data: error.data };
}

function fail(code: ErrorCode, message: string, details?: Json): never {
  throw new ProxyFailure(errorResult(code, message, details));
}

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const isLocalImage = (block: unknown): block is Json => isObject(block) && block.blockType === "image" && block.type === "file";

/** Where a `sections` call may carry content blocks: content, newContent, sections[].content. */
function contentLists(args: Json): Array<{ where: string; blocks: unknown[] }> {
  const lists: Array<{ where: string; blocks: unknown[] }> = [];
  for (const field of ["content", "newContent"]) {
    const value = args[field];
    if (Array.isArray(value)) lists.push({ where: field, blocks: value });
  }
  if (Array.isArray(args.sections)) {
    args.sections.forEach((spec, i) => {
      if (isObject(spec) && Array.isArray(spec.content)) lists.push({ where: `sections[${i}].content`, blocks: spec.content });
    });
  }
  return lists;
}

interface LocalImage {
  bytes: Buffer;
  filename: string;
  mediaType: string;
}

/** Checks and reads one local image block (phase 1: before anything is uploaded). */
async function readLocalImage(block: Json, where: string): Promise<{ file: string; image: LocalImage }> {
  const extra = Object.keys(block).filter((k) => k !== "blockType" && k !== "type" && k !== "path");
  if (extra.length > 0) {
    fail("VALIDATION_FAILED", `${where}: an image block of type "file" has only \`path\`; unexpected ${extra.join(", ")}.`, {
      issues: [{ path: where, message: `unexpected field(s) ${extra.join(", ")}` }],
    });
  }
  const file = block.path;
  if (typeof file !== "string" || file.length === 0) {
    fail("VALIDATION_FAILED", `${where}.path: give the absolute path of a local image file.`, {
      issues: [{ path: `${where}.path`, message: "required" }],
    });
  }
  if (!path.isAbsolute(file)) {
    fail("VALIDATION_FAILED", `${where}.path: ${JSON.stringify(file)} is not an absolute path. Give the full path of the file.`, {
      issues: [{ path: `${where}.path`, message: "must be an absolute path" }],
    });
  }
  const type = mediaTypeForFilename(path.basename(file));
  if (!type?.mediaType.startsWith("image/")) {
    fail(
      "VALIDATION_FAILED",
      `${where}.path: ${JSON.stringify(file)} is not a PNG, JPEG, GIF or WebP image (judged by its extension). Convert it, or attach other files with \`upload_url\` and a "file" block.`,
      { issues: [{ path: `${where}.path`, message: "not a supported image file extension" }] },
    );
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") {
      fail("NOT_FOUND", `${where}.path: there is no file at ${JSON.stringify(file)}. Nothing was written.`, { kind: "File", id: file });
    }
    fail("VALIDATION_FAILED", `${where}.path: cannot read ${JSON.stringify(file)} (${code ?? "error"}). Nothing was written.`, {
      issues: [{ path: `${where}.path`, message: `unreadable (${code ?? "error"})` }],
    });
  }
  return { file, image: { bytes, filename: path.basename(file), mediaType: type.mediaType } };
}

export class QuireStdioProxy {
  private readonly mcpUrl: URL;
  private readonly baseUrl: URL;
  private remote: Promise<Client> | null = null;
  /** Receives every notification the remote sends (set by runStdioProxy to pass them on). */
  onRemoteNotification: ((notification: Notification) => Promise<void>) | null = null;

  constructor(private readonly options: StdioProxyOptions) {
    const given = new URL(options.url);
    const basePath = given.pathname.replace(/\/api\/mcp\/?$/, "").replace(/\/+$/, "");
    this.baseUrl = new URL(`${given.origin}${basePath}/`);
    this.mcpUrl = new URL("api/mcp", this.baseUrl);
  }

  /** The remote client, connected on first use (and again after a failed connect). */
  client(): Promise<Client> {
    this.remote ??= (async () => {
      const client = new Client({ name: "quire-mcp-proxy", version: packageJson.version });
      client.fallbackNotificationHandler = async (notification) => {
        await this.onRemoteNotification?.(notification);
      };
      const transport = new StreamableHTTPClientTransport(this.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${this.options.token}` } },
      });
      await client.connect(transport);
      return client;
    })().catch((error: unknown) => {
      this.remote = null;
      throw error;
    });
    return this.remote;
  }

  /** Forwards one request as it is; a JSON-RPC error of the remote is thrown as the same error. */
  async forward(method: string, params: Record<string, unknown> | undefined, signal: AbortSignal): Promise<Result> {
    const client = await this.client();
    try {
      return await client.request({ method, params }, ResultSchema, { signal });
    } catch (error) {
      throw error instanceof McpError ? remoteJsonRpcError(error) : error;
    }
  }

  /** Forwards one notification of the stdio client (cancellations and pings are the SDK's own, per side). */
  async notify(notification: Notification): Promise<void> {
    await (await this.client()).notification(notification);
  }

  async callTool(name: string, args: Json): Promise<CallToolResult> {
    try {
      const forwarded = name === "sections" ? await this.uploadLocalImages(args) : args;
      return (await (await this.client()).callTool({ name, arguments: forwarded })) as CallToolResult;
    } catch (error) {
      if (error instanceof ProxyFailure) return error.result;
      // The remote refused the call itself (an unknown tool, invalid params): the same JSON-RPC error.
      if (error instanceof McpError) throw remoteJsonRpcError(error);
      const message = error instanceof Error ? error.message : String(error);
      return errorResult("INTERNAL", `The Quire proxy could not complete the call to ${this.baseUrl.origin}: ${message}`);
    }
  }

  /** Uploads every local image of a `sections` call and returns the arguments with storage blocks in their place. */
  async uploadLocalImages(args: Json): Promise<Json> {
    const lists = contentLists(args);
    const local = new Map<string, LocalImage>();
    for (const list of lists) {
      for (const [index, block] of list.blocks.entries()) {
        if (!isLocalImage(block)) continue;
        const { file, image } = await readLocalImage(block, `${list.where}[${index}]`);
        local.set(file, image);
      }
    }
    if (local.size === 0) return args;

    const uploaded = new Map<string, Json>();
    for (const [file, image] of local) uploaded.set(file, await this.upload(image));

    const replace = (blocks: unknown[]) => blocks.map((b) => (isLocalImage(b) ? uploaded.get(b.path as string)! : b));
    const rewritten: Json = { ...args };
    for (const field of ["content", "newContent"]) {
      const value = args[field];
      if (Array.isArray(value)) rewritten[field] = replace(value);
    }
    if (Array.isArray(args.sections)) {
      rewritten.sections = args.sections.map((spec) =>
        isObject(spec) && Array.isArray(spec.content) ? { ...spec, content: replace(spec.content) } : spec,
      );
    }
    return rewritten;
  }

  /** upload_url, then PUT the bytes; returns the storage block. */
  private async upload(image: LocalImage): Promise<Json> {
    const client = await this.client();
    const result = (await client.callTool({
      name: "upload_url",
      arguments: { filename: image.filename, mediaType: image.mediaType, size: image.bytes.length },
    })) as CallToolResult;
    if (result.isError) throw new ProxyFailure(result);
    const grant = result.structuredContent as { uploadUrl: string; key: string; headers: Record<string, string> };
    // Sent to the server this proxy talks to, whatever host name the server believes it has.
    const signed = new URL(grant.uploadUrl);
    const at = signed.pathname.indexOf("/api/uploads/");
    const target = new URL(`${signed.pathname.slice(at + 1)}${signed.search}`, this.baseUrl);
    const response = await fetch(target, { method: "PUT", headers: grant.headers, body: new Uint8Array(image.bytes) });
    if (!response.ok) {
      const body = (await response.json().catch(() => null)) as { error?: { code?: ErrorCode; message?: string } } | null;
      fail(body?.error?.code ?? "INTERNAL", `Uploading ${image.filename} failed: ${body?.error?.message ?? `HTTP ${response.status}`}`);
    }
    return { blockType: "image", type: "storage", mediaType: image.mediaType, key: grant.key };
  }

  async close(): Promise<void> {
    const remote = this.remote;
    this.remote = null;
    if (remote) await remote.then((c) => c.close()).catch(() => {});
  }
}

/**
 * Serves the proxy on this process's stdin/stdout until stdin closes. It
 * connects to the remote first, so that it offers the remote's capabilities;
 * a remote it cannot reach is an error here (the CLI reports it on stderr).
 */
export async function runStdioProxy(options: StdioProxyOptions): Promise<void> {
  const proxy = new QuireStdioProxy(options);
  const remote = await proxy.client();
  const server = new Server(
    { name: "quire-proxy", version: packageJson.version },
    { capabilities: remote.getServerCapabilities() ?? { tools: {} }, instructions: remote.getInstructions() },
  );
  server.setRequestHandler(CallToolRequestSchema, (request) => proxy.callTool(request.params.name, request.params.arguments ?? {}));
  server.fallbackRequestHandler = (request, extra) => proxy.forward(request.method, request.params, extra.signal);
  server.fallbackNotificationHandler = (notification) => proxy.notify(notification);
  proxy.onRemoteNotification = (notification) => server.notification(notification as Parameters<Server["notification"]>[0]);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
    server.onclose = () => resolve();
  });
  await proxy.close();
  await server.close().catch(() => {});
}
