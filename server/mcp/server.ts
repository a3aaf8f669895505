/**
 * The MCP face over Streamable HTTP in stateless mode (any instance can answer
 * any call): for each request a fresh McpServer (protocol.ts) on the SDK's
 * StreamableHTTPServerTransport, as the SDK documents stateless serving.
 *
 * One seam, `fastPath`, lets the plain requests that make up nearly all
 * traffic be answered without that per-request machinery (fast-path.ts); it
 * is on in production because the section-write benchmark misses its target
 * without it (bench/README.md), and a test holds it to the SDK path's answers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { ActionContext } from "@/server/actions/context";
import { createMcpFastPath, type FastPathOutcome } from "./fast-path";
import { authInfoFor, createQuireMcpServer, guardToolCalls } from "./protocol";

export interface McpEndpoint {
  /** Serves one MCP HTTP request for an already authenticated caller. */
  handle(req: IncomingMessage, res: ServerResponse, context: ActionContext): Promise<void>;
}

export interface McpEndpointOptions {
  /** Answer plain requests on the fast path (default true); false serves every request through the SDK alone. */
  fastPath?: boolean;
}

export function createMcpEndpoint(version: string, options: McpEndpointOptions = {}): McpEndpoint {
  async function viaSdk(req: IncomingMessage, res: ServerResponse, authInfo: AuthInfo, parsedBody?: unknown) {
    const server = createQuireMcpServer(version);
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

  const fastPath = options.fastPath === false ? null : createMcpFastPath(version);
  return {
    async handle(req, res, context) {
      const authInfo = authInfoFor(context);
      const outcome: FastPathOutcome = fastPath ? await fastPath.answer(req, res, context, authInfo) : { answered: false };
      if (!outcome.answered) await viaSdk(req, res, authInfo, outcome.parsedBody);
    },
  };
}
