/**
 * The MCP face over Streamable HTTP in stateless mode (any instance can answer
 * any call): for each request a fresh McpServer (server/mcp/protocol.ts) on the SDK's
 * StreamableHTTPServerTransport, as the SDK documents stateless serving.
 *
 * Ahead of both paths below, the endpoint itself answers what is the same for
 * every request:
 * - a request sent to a host that is not the site's, or from a web page of
 *   another origin, is refused with 403 (DNS rebinding; see isOwnHost and
 *   isOwnOrigin in csrf.ts), as the SDK's own protection answers;
 * - POST carries every request; a GET that accepts text/event-stream opens
 *   the caller's event stream, which carries their resource subscriptions'
 *   notifications (server/mcp/resources.ts); there is no session to DELETE
 *   (405 with `Allow: GET, POST`);
 * - the body is read and parsed here, once: not JSON is -32700 Parse error,
 *   JSON that is not a JSON-RPC message is -32600 Invalid Request.
 *
 * One seam, `fastPath`, lets the plain requests that make up nearly all
 * traffic be answered without that per-request machinery (mcp-fast-path.ts); it
 * is on in production because the section-write benchmark misses its target
 * without it (bench/README.md), and a test holds it to the SDK path's answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { ActionContext } from "@/server/actions/context";
import { authInfoFor, createQuireMcpServer, guardToolCalls } from "@/server/mcp/protocol";
import { ResourceSubscriptions } from "@/server/mcp/resources";
import { addressedHost, isOwnHost, isOwnOrigin, type SiteAddress } from "./csrf";
import { createMcpFastPath } from "./mcp-fast-path";
import { isAllowedCorsOrigin } from "./oauth";
import { sendJson } from "./send-json";
import { JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

export interface McpEndpoint {
  /** Serves one MCP HTTP request for an already authenticated caller. */
  handle(req: IncomingMessage, res: ServerResponse, context: ActionContext): Promise<void>;
  /** Ends the event streams and stops following head moves. */
  close(): Promise<void>;
}

export interface McpEndpointOptions {
  /** Answer plain requests on the fast path (default true); false serves every request through the SDK alone. */
  fastPath?: boolean;
  /** QUIRE_PUBLIC_URL and QUIRE_TRUST_PROXY, for the Host and Origin checks; default: neither. */
  site?: SiteAddress;
  /** Pages of other origins allowed to call (QUIRE_MCP_ALLOWED_ORIGINS, answered by CORS in oauth.ts); default: none. */
  allowedOrigins?: readonly string[];
  /** QUIRE_REDIS_URL: resource subscriptions and head moves shared with the other processes. */
  redisUrl?: string;
}

/** A JSON-RPC error that answers no request in particular (id null), as the SDK's transport sends its refusals. */
function sendTransportError(res: ServerResponse, status: number, code: number, message: string, headers: Record<string, string> = {}) {
  sendJson(res, status, { jsonrpc: "2.0", error: { code, message }, id: null }, headers);
}

/** Why a request is refused for where it was sent or where it came from, or null. */
function foreignRequestRefusal(req: IncomingMessage, site: SiteAddress, allowedOrigins: readonly string[]): string | null {
  if (!isOwnHost(req, site)) {
    return `Forbidden: this server does not answer to the host ${JSON.stringify(addressedHost(req, site) ?? "")}. It answers to its QUIRE_PUBLIC_URL, to localhost and to IP addresses; set QUIRE_PUBLIC_URL to the address clients use.`;
  }
  const origin = req.headers.origin;
  // A configured origin's page holds a bearer token, never this site's cookie: it is a client like any other.
  if (origin !== undefined && !isOwnOrigin(req, origin, site) && !isAllowedCorsOrigin(origin, allowedOrigins)) {
    return `Forbidden: requests from the web page at ${origin} are not accepted. MCP clients send no Origin header; a page may call this server only from its own origin, or from an origin named in QUIRE_MCP_ALLOWED_ORIGINS.`;
  }
  return null;
}

/** Whether a parsed body is a JSON-RPC message or a batch of them: what the SDK transport takes (it calls anything else a parse error). */
function isJsonRpcBody(body: unknown): boolean {
  return (Array.isArray(body) ? body : [body]).every((message) => JSONRPCMessageSchema.safeParse(message).success);
}

/** The POST headers without which the SDK transport answers 406 or 415 before reading the body. */
function acceptsJsonRpcPost(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? "";
  return accept.includes("application/json") && accept.includes("text/event-stream") && isJsonContentType(req.headers["content-type"]);
}

/** The request body: read by the server already when it bounded a body sent without a length (server.ts), else from the stream. */
function requestText(req: IncomingMessage & { body?: unknown }): Promise<string> {
  if (typeof req.body === "string") return Promise.resolve(req.body);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function createMcpEndpoint(version: string, options: McpEndpointOptions = {}): McpEndpoint {
  const site = options.site ?? {};
  const subscriptions = new ResourceSubscriptions(options.redisUrl);

  async function viaSdk(req: IncomingMessage, res: ServerResponse, authInfo: AuthInfo, parsedBody?: unknown) {
    const server = createQuireMcpServer(version, subscriptions);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    guardToolCalls(transport);
    (req as IncomingMessage & { auth?: AuthInfo }).auth = authInfo;
    await transport.handleRequest(req, res, parsedBody);
  }

  const fastPath = options.fastPath === false ? null : createMcpFastPath(version, subscriptions);
  return {
    close: () => subscriptions.stop(),
    async handle(req, res, context) {
      const refusal = foreignRequestRefusal(req, site, options.allowedOrigins ?? []);
      if (refusal) return sendTransportError(res, 403, -32000, refusal);
      if (req.method === "GET") {
        if (!(req.headers.accept ?? "").includes("text/event-stream")) {
          return sendTransportError(res, 406, -32000, "Not Acceptable: a GET opens an event stream; send Accept: text/event-stream.");
        }
        return subscriptions.openStream(context, res);
      }
      if (req.method !== "POST") {
        return sendTransportError(
          res,
          405,
          -32000,
          "Method Not Allowed: this is a stateless MCP server; send every message with POST, or GET for the event stream of your resource subscriptions (there is no session to DELETE).",
          { allow: "GET, POST" },
        );
      }
      const authInfo = authInfoFor(context);
      if (!acceptsJsonRpcPost(req)) return viaSdk(req, res, authInfo);
      let message: unknown;
      try {
        message = JSON.parse(await requestText(req));
      } catch {
        return sendTransportError(res, 400, -32700, "Parse error: Invalid JSON");
      }
      if (fastPath && (await fastPath.answer(req, res, message, context, authInfo))) return;
      if (!isJsonRpcBody(message)) {
        return sendTransportError(
          res,
          400,
          -32600,
          'Invalid Request: the body is JSON but not a JSON-RPC 2.0 message (or a batch of them): "jsonrpc": "2.0", a string "method", and an "id" that is a string or an integer.',
        );
      }
      await viaSdk(req, res, authInfo, message);
    },
  };
}
