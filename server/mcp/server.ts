/**
 * The MCP face: one MCP tool per action module, over Streamable HTTP in
 * stateless mode (any instance can answer any call). Results carry their JSON
 * as structuredContent and as one text block; failures are isError results
 * carrying { error: { code, message, details? } }.
 *
 * Three paths serve a POST, all with the same handlers:
 * - A plain tools/call (one JSON-RPC request, well-formed headers, valid by
 *   the SDK's own request schema) is answered directly by the tools/call
 *   handler: on a busy instance the protocol machinery around it was a good
 *   part of a small write's CPU.
 * - Any other plain request (tools/list, ping, an invalid tools/call) goes to
 *   one long-lived SDK `Server` through an in-process request/response
 *   transport. The SDK's stateless HTTP transport would build a protocol
 *   server, a Web Request/Response pair and web streams for every call.
 * - Everything else (initialize, notifications, batches, GET/DELETE, odd
 *   headers, oversized bodies) goes to the SDK's StreamableHTTPServerTransport
 *   with a fresh server, exactly as the SDK serves it, errors included.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  ListToolsRequestSchema,
  type MessageExtraInfo,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import type { ActionContext } from "@/server/actions/context";
import { sendJson, sendJsonText } from "@/server/http/send-json";
import { type ToolName, tools, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { DomainError, type ErrorPayload, isDomainError } from "@/server/core/errors";
import { MAX_REQUEST_BYTES } from "@/server/core/limits";
import { toolInputJsonSchema } from "./json-schema";

const toolList = Object.values(tools).map((tool) => ({
  name: tool.name,
  description: tool.description,
  inputSchema: toolInputJsonSchema(tool.input) as { type: "object"; [key: string]: unknown },
  annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
}));

/** Every tool result: its JSON as one text block, and the same value as structuredContent (the endpoint writes that JSON once, see serializeResponse). */
function jsonResult(value: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, ...(isError ? { isError } : {}) };
}

export function errorResult(error: ErrorPayload): CallToolResult {
  return jsonResult({ error }, true);
}

/** The authenticated caller travels to the handlers as the SDK's per-request auth info. */
function authInfoFor(context: ActionContext): AuthInfo {
  return { token: "", clientId: context.actor.userId, scopes: [], extra: { context } };
}

function contextOf(authInfo: AuthInfo | undefined): ActionContext {
  const context = authInfo?.extra?.context as ActionContext | undefined;
  if (!context) throw new Error("MCP request without an authenticated context");
  return context;
}

const anyToolsCall = z.object({ method: z.literal("tools/call"), params: z.unknown() });

/** One schema validator for every protocol server: building one costs more than a tool call. */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** What a tools/call does; every failure becomes an isError result. */
async function callTool(params: CallToolRequest["params"], context: ActionContext): Promise<CallToolResult> {
  if (!Object.hasOwn(tools, params.name)) {
    return errorResult(
      new DomainError("NOT_FOUND", `There is no tool ${JSON.stringify(params.name)}. Tools: ${Object.keys(tools).join(", ")}.`).toPayload(),
    );
  }
  try {
    return jsonResult((await runTool(toolsByName[params.name as ToolName], context, params.arguments ?? {})) as Record<string, unknown>);
  } catch (error) {
    return errorResult(isDomainError(error) ? error.toPayload() : { code: "INTERNAL", message: "Internal error." });
  }
}

function createMcpServer(version: string): Server {
  const server = new Server({ name: "quire", version }, { capabilities: { tools: {} }, jsonSchemaValidator });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList }));
  // Registered with a loose schema so that the SDK's own tools/call check (in Server.setRequestHandler) judges the
  // request and answers -32602 Invalid params for malformed arguments; the strict schema here would throw first, as -32603.
  server.setRequestHandler(anyToolsCall, async (request, extra) =>
    callTool(CallToolRequestSchema.parse(request).params, contextOf(extra.authInfo)),
  );
  return server;
}

/**
 * A transport for many concurrent HTTP requests on one protocol server: each
 * request gets a private JSON-RPC id (clients all count from 1) and its
 * response is handed back to the HTTP exchange that sent it.
 */
class RequestResponseTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private nextId = 0;
  private readonly waiting = new Map<number, (message: JSONRPCMessage) => void>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    // Only responses are routed: a stateless server sends no requests or notifications of its own.
    if (!("id" in message) || !("result" in message || "error" in message)) return;
    const deliver = this.waiting.get(message.id as number);
    if (!deliver) return;
    this.waiting.delete(message.id as number);
    deliver(message);
  }

  exchange(request: JSONRPCRequest, extra: MessageExtraInfo): Promise<JSONRPCMessage> {
    const id = ++this.nextId;
    return new Promise((resolve) => {
      this.waiting.set(id, (response) => resolve({ ...response, id: request.id } as JSONRPCMessage));
      this.onmessage?.({ ...request, id }, extra);
    });
  }
}

/**
 * The JSON of a response. A tool result carries its JSON twice, as text and
 * as structuredContent (jsonResult), so the text is spliced in as the
 * structuredContent rather than serializing the same value again: the
 * analysis of a large merge request is hundreds of KiB.
 */
function serializeResponse(response: JSONRPCMessage): string {
  const result = "result" in response ? (response.result as CallToolResult) : undefined;
  const only = result?.content?.length === 1 ? result.content[0] : undefined;
  if (!result || result.structuredContent === undefined || only?.type !== "text") return JSON.stringify(response);
  const { structuredContent: _sameAsText, ...rest } = result;
  const restJson = JSON.stringify(rest);
  return `{"jsonrpc":"2.0","id":${JSON.stringify((response as { id: unknown }).id)},"result":${restJson.slice(0, -1)},"structuredContent":${only.text}}}`;
}

/**
 * A single JSON-RPC request other than initialize, by shape (the protocol
 * server validates it fully; a schema check here would run, and fail, the
 * SDK's validators once more on every call).
 */
function isPlainRequest(message: unknown): message is JSONRPCRequest {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const { jsonrpc, id, method } = message as Record<string, unknown>;
  return jsonrpc === "2.0" && (typeof id === "string" || typeof id === "number") && typeof method === "string" && method !== "initialize";
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The headers the SDK transport requires of a POST (it answers 406/415/400 otherwise, and so does the slow path). */
function hasWellFormedPostHeaders(req: IncomingMessage): boolean {
  const accept = headerValue(req, "accept") ?? "";
  const contentType = (headerValue(req, "content-type") ?? "").split(";", 1)[0]!.trim().toLowerCase();
  const protocolVersion = headerValue(req, "mcp-protocol-version");
  const length = Number(headerValue(req, "content-length") ?? Number.NaN);
  return (
    accept.includes("application/json") &&
    accept.includes("text/event-stream") &&
    contentType === "application/json" &&
    (protocolVersion === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) &&
    Number.isInteger(length) &&
    length <= MAX_REQUEST_BYTES
  );
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export interface McpEndpoint {
  /** Serves one MCP HTTP request for an already authenticated caller. */
  handle(req: IncomingMessage, res: ServerResponse, context: ActionContext): Promise<void>;
}

export function createMcpEndpoint(version: string): McpEndpoint {
  const shared = createMcpServer(version);
  const sharedTransport = new RequestResponseTransport();
  const connected = shared.connect(sharedTransport);

  async function viaSdkTransport(req: IncomingMessage, res: ServerResponse, authInfo: AuthInfo, parsedBody?: unknown) {
    const server = createMcpServer(version);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfo;
    await transport.handleRequest(req, res, parsedBody);
  }

  return {
    async handle(req, res, context) {
      const authInfo = authInfoFor(context);
      if (req.method !== "POST" || !hasWellFormedPostHeaders(req)) return viaSdkTransport(req, res, authInfo);
      const text = await readBody(req);
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        sendJson(res, 400, { jsonrpc: "2.0", error: { code: -32700, message: "Parse error: Invalid JSON" }, id: null });
        return;
      }
      if (!isPlainRequest(message)) return viaSdkTransport(req, res, authInfo, message);
      // The hottest call of all, a plain tools/call, is answered here: the handler above, minus the protocol machinery around it.
      const call = message.method === "tools/call" ? CallToolRequestSchema.safeParse(message) : undefined;
      if (call?.success && call.data.params.task === undefined) {
        sendJsonText(res, 200, serializeResponse({ jsonrpc: "2.0", id: message.id, result: await callTool(call.data.params, context) }));
        return;
      }
      await connected;
      const response = await sharedTransport.exchange(message, {
        authInfo,
        requestInfo: { headers: req.headers, url: new URL(req.url ?? "/", "http://localhost") },
      });
      sendJsonText(res, 200, serializeResponse(response));
    },
  };
}
