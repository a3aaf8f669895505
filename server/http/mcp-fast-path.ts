/**
 * The MCP fast path: the answers of the SDK path (mcp-endpoint.ts) for the plain
 * requests that make up nearly all traffic, without building a protocol
 * server, a Web Request/Response pair and web streams for each of them (most
 * of a small write's CPU on a busy instance; see bench/README.md).
 *
 * - A plain tools/call of one of Quire's tools (one JSON-RPC request, valid by
 *   the SDK's own request schema, no task) is answered by callTool, the same
 *   function McpServer's tool handlers run, and its result's JSON is written
 *   once (serializeResponse).
 * - Any other single request (tools/list, ping, a malformed tools/call, a call
 *   of an unknown tool) goes
 *   to one long-lived McpServer, built and guarded exactly as the SDK path's,
 *   through an in-process request/response transport.
 * - Everything else (initialize, notifications, batches, an unsupported
 *   MCP-Protocol-Version) is left to the SDK path.
 *
 * The endpoint (mcp-endpoint.ts) has already checked the request's host, origin,
 * method and headers and parsed its body, for both paths.
 *
 * tests/integration/mcp-fast-path.test.ts sends every kind of request through
 * both paths and requires the same JSON-RPC answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { ActionContext } from "@/server/actions/context";
import { callTool, createQuireMcpServer, guardToolCalls, isToolName } from "@/server/mcp/protocol";
import type { ResourceSubscriptions } from "@/server/mcp/resources";
import { sendJsonText } from "./send-json";

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
 * as structuredContent, so the text is spliced in as the structuredContent
 * rather than serializing the same value again: the analysis of a large merge
 * request is hundreds of KiB.
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
  return jsonrpc === "2.0" && (typeof id === "string" || Number.isInteger(id)) && typeof method === "string" && method !== "initialize";
}

/** A protocol version the SDK transport accepts (it answers 400 otherwise, and so does the SDK path). */
function hasSupportedProtocolVersion(req: IncomingMessage): boolean {
  const value = req.headers["mcp-protocol-version"];
  const protocolVersion = Array.isArray(value) ? value.join(", ") : value;
  return protocolVersion === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion);
}

export interface McpFastPath {
  /** Answers `message`, the parsed body of a POST, and returns true; or returns false and leaves it to the SDK path. */
  answer(req: IncomingMessage, res: ServerResponse, message: unknown, context: ActionContext, authInfo: AuthInfo): Promise<boolean>;
}

export function createMcpFastPath(version: string, subscriptions: ResourceSubscriptions): McpFastPath {
  const shared = createQuireMcpServer(version, subscriptions);
  const sharedTransport = new RequestResponseTransport();
  const connected = shared.connect(sharedTransport).then(() => guardToolCalls(sharedTransport));

  return {
    async answer(req, res, message, context, authInfo) {
      if (!isPlainRequest(message) || !hasSupportedProtocolVersion(req)) return false;
      const call = message.method === "tools/call" ? CallToolRequestSchema.safeParse(message) : undefined;
      const params = call?.success && call.data.params.task === undefined ? call.data.params : undefined;
      if (params && isToolName(params.name)) {
        const result = await callTool(params.name, params.arguments, context);
        sendJsonText(res, 200, serializeResponse({ jsonrpc: "2.0", id: message.id, result }));
        return true;
      }
      await connected;
      const response = await sharedTransport.exchange(message, {
        authInfo,
        requestInfo: { headers: req.headers, url: new URL(req.url ?? "/", "http://localhost") },
      });
      sendJsonText(res, 200, serializeResponse(response));
      return true;
    },
  };
}
