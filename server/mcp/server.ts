/**
 * The MCP face: one MCP tool per action module, over Streamable HTTP in
 * stateless mode (a fresh protocol server per request, so any instance can
 * answer any call). Results carry their JSON as structuredContent and as one
 * text block; failures are isError results carrying { error: { code, message, details? } }.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ActionContext } from "@/server/actions/context";
import { type ToolName, tools } from "@/server/actions/registry";
import { runTool } from "@/server/actions/run";
import { DomainError, type ErrorPayload, isDomainError } from "@/server/core/errors";
import { toolInputJsonSchema } from "./json-schema";

const toolList = Object.values(tools).map((tool) => ({
  name: tool.name,
  description: tool.description,
  inputSchema: toolInputJsonSchema(tool.input) as { type: "object"; [key: string]: unknown },
  annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
}));

function jsonResult(value: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, ...(isError ? { isError } : {}) };
}

export function errorResult(error: ErrorPayload): CallToolResult {
  return jsonResult({ error }, true);
}

function createMcpServer(context: ActionContext, version: string): Server {
  const server = new Server({ name: "quire", version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: toolList }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const name = request.params.name;
    if (!Object.hasOwn(tools, name)) {
      return errorResult(
        new DomainError("NOT_FOUND", `There is no tool ${JSON.stringify(name)}. Tools: ${Object.keys(tools).join(", ")}.`).toPayload(),
      );
    }
    try {
      const result = await runTool(name as ToolName, context, request.params.arguments ?? {});
      return jsonResult(result as Record<string, unknown>);
    } catch (error) {
      return errorResult(isDomainError(error) ? error.toPayload() : { code: "INTERNAL", message: "Internal error." });
    }
  });
  return server;
}

/** Serves one MCP HTTP request for an already authenticated actor. */
export async function handleMcpRequest(
  req: IncomingMessage,
  res: ServerResponse,
  context: ActionContext,
  version: string,
): Promise<void> {
  const server = createMcpServer(context, version);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
}
