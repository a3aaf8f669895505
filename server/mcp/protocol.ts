/**
 * Quire's MCP protocol server: the SDK's McpServer with one tool per action
 * module (registerTool, with the flattened input schema and the tool's
 * outputSchema). Results carry their JSON as structuredContent and as one
 * text block; failures are isError results carrying
 * { error: { code, message, details? } }.
 */
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { ActionContext } from "@/server/actions/context";
import { type ToolName, tools, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { DomainError, type ErrorPayload, isDomainError } from "@/server/core/errors";
import { flatInputSchema } from "./flatten";
import { outputSchemas } from "./output-schemas";

/** Every tool result: its JSON as one text block, and the same value as structuredContent. */
function jsonResult(value: Record<string, unknown>, isError = false): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value, ...(isError ? { isError } : {}) };
}

function errorResult(error: ErrorPayload): CallToolResult {
  return jsonResult({ error }, true);
}

/** The authenticated caller travels to the handlers as the SDK's per-request auth info. */
export function authInfoFor(context: ActionContext): AuthInfo {
  return { token: "", clientId: context.actor.userId, scopes: [], extra: { context } };
}

function contextOf(authInfo: AuthInfo | undefined): ActionContext {
  const context = authInfo?.extra?.context as ActionContext | undefined;
  if (!context) throw new Error("MCP request without an authenticated context");
  return context;
}

const isToolName = (name: string): name is ToolName => Object.hasOwn(tools, name);

function unknownToolResult(name: string): CallToolResult {
  return errorResult(
    new DomainError("NOT_FOUND", `There is no tool ${JSON.stringify(name)}. Tools: ${Object.keys(tools).join(", ")}.`).toPayload(),
  );
}

/** What a tools/call does: the strict per-action parse and the action (runTool); every failure becomes an isError result. */
export async function callTool(name: string, args: unknown, context: ActionContext): Promise<CallToolResult> {
  if (!isToolName(name)) return unknownToolResult(name);
  try {
    return jsonResult((await runTool(toolsByName[name], context, args ?? {})) as Record<string, unknown>);
  } catch (error) {
    return errorResult(isDomainError(error) ? error.toPayload() : { code: "INTERNAL", message: "Internal error." });
  }
}

/** Built once: the flattened input schemas (McpServer renders them to JSON Schema on each tools/list). */
const toolRegistrations = Object.values(tools).map((tool) => ({
  name: tool.name as ToolName,
  config: {
    description: tool.description,
    inputSchema: flatInputSchema(tool.input),
    outputSchema: outputSchemas[tool.name as ToolName],
    annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
  },
}));

/** One schema validator for every protocol server: building one costs more than a tool call. */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

export function createQuireMcpServer(version: string): McpServer {
  const server = new McpServer({ name: "quire", version }, { capabilities: { tools: {} }, jsonSchemaValidator });
  for (const { name, config } of toolRegistrations) {
    server.registerTool(name, config, (args, extra) => callTool(name, args, contextOf(extra.authInfo)));
  }
  return server;
}

/**
 * The answer Quire gives, ahead of McpServer, to a tools/call McpServer would
 * answer outside Quire's contract: params that are not a valid tools/call
 * (McpServer's own parse of the request throws, which the SDK answers -32603
 * Internal error; it is the caller's mistake, -32602 Invalid params) and an
 * unknown tool (McpServer answers a text-only isError result; agents get the
 * same coded error as every other failure).
 */
function answerBeforeMcpServer(message: JSONRPCRequest): JSONRPCMessage | undefined {
  if (message.method !== "tools/call") return undefined;
  const call = CallToolRequestSchema.safeParse(message);
  if (!call.success) {
    const error = new McpError(ErrorCode.InvalidParams, `Invalid tools/call request: ${call.error.message}`);
    return { jsonrpc: "2.0", id: message.id, error: { code: error.code, message: error.message } };
  }
  if (isToolName(call.data.params.name)) return undefined;
  return { jsonrpc: "2.0", id: message.id, result: unknownToolResult(call.data.params.name) };
}

/** Puts answerBeforeMcpServer in front of the protocol server connected to `transport`. */
export function guardToolCalls(transport: Transport): void {
  const deliver = transport.onmessage;
  if (!deliver) throw new Error("guardToolCalls needs a connected transport");
  transport.onmessage = (message, extra) => {
    const answer = isJSONRPCRequest(message) ? answerBeforeMcpServer(message) : undefined;
    if (answer) void transport.send(answer);
    else deliver(message, extra);
  };
}
