/**
 * Quire's MCP protocol server: the SDK's McpServer with one tool per action
 * module (registerTool, with the flattened input schema and the tool's
 * outputSchema). Results carry their JSON as structuredContent and as one
 * text block; failures are isError results with the error JSON in the text
 * block only (tool-error.ts). A call to a tool that does not exist is a
 * JSON-RPC error (-32602), as the spec shows it.
 *
 * tools/list sends schemas derived once, at start, and made lean
 * (lean-schema.ts); McpServer still validates with the zod schemas.
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
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { ActionContext } from "@/server/actions/context";
import { type ToolName, tools, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { isDomainError } from "@/server/core/errors";
import { z } from "zod";
import { flatInputSchema } from "./flatten";
import { type JsonSchema, leanSchema } from "./lean-schema";
import { outputSchemas } from "./output-schemas";
import { type ResourceSubscriptions, serveResources } from "./resources";
import { toolErrorResult } from "./tool-error";

/** What an agent is told on initialize: the workflow the tools make up, in a few lines. */
export const SERVER_INSTRUCTIONS = [
  "Quire keeps markdown documents as ordered sections with git-style branches, commits and merge requests.",
  "Workflow: find documents with `search` (or `documents` list); `read` one to get each section's text and contentHash;",
  "`documents` create_branch; change sections with `sections` on that branch, passing the contentHash as expectedContentHash",
  "(CONTENT_HASH_MISMATCH means someone changed it: read again); open a `merge_requests` create into the default branch,",
  "then analyze it (resolve conflicts) and execute it.",
  'A failed call is an isError result whose text is {"error":{"code","message","details"?}}: the code is stable, the message says what to do next.',
].join(" ");

/** A successful tool result: its JSON as one text block, and the same value as structuredContent. */
function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
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

export const isToolName = (name: string): name is ToolName => Object.hasOwn(tools, name);

/** The answer to a tools/call naming no tool of Quire's: the spec's -32602, with the tools there are. */
function unknownToolError(id: JSONRPCRequest["id"], name: string): JSONRPCMessage {
  const message = `Unknown tool: ${name}. Quire's tools: ${Object.keys(tools).join(", ")}.`;
  return { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidParams, message } };
}

/** What a tools/call of one of Quire's tools does: the strict per-action parse and the action (runTool); every failure becomes an isError result. */
export async function callTool(name: ToolName, args: unknown, context: ActionContext): Promise<CallToolResult> {
  try {
    return jsonResult((await runTool(toolsByName[name], context, args ?? {})) as Record<string, unknown>);
  } catch (error) {
    return toolErrorResult(isDomainError(error) ? error.toPayload() : { code: "INTERNAL", message: "Internal error." });
  }
}

/** Built once: the flattened input schemas (McpServer renders them to JSON Schema on each tools/list). */
const toolRegistrations = Object.values(tools).map((tool) => ({
  name: tool.name as ToolName,
  config: {
    description: tool.description,
    inputSchema: flatInputSchema(tool.input),
    outputSchema: outputSchemas[tool.name as ToolName],
    // The hints' defaults (readOnlyHint false; destructiveHint, which a read-only tool has no use for, true) are not said again.
    annotations: tool.readOnly ? { readOnlyHint: true, openWorldHint: false } : { destructiveHint: false, openWorldHint: false },
  },
}));

const toJson = (schema: z.ZodType, io: "input" | "output") => z.toJSONSchema(schema, { io, target: "draft-07" }) as JsonSchema;

/** tools/list, derived once: the same tools McpServer would list, with lean schemas. */
const listedTools: Tool[] = toolRegistrations.map(({ name, config }) => ({
  name,
  description: config.description,
  inputSchema: leanSchema(toJson(config.inputSchema, "input"), "input") as Tool["inputSchema"],
  outputSchema: leanSchema(toJson(config.outputSchema, "output"), "output") as Tool["outputSchema"],
  annotations: config.annotations,
}));

/** One schema validator for every protocol server: building one costs more than a tool call. */
const jsonSchemaValidator = new AjvJsonSchemaValidator();

/** A protocol server with Quire's tools, and its documents as resources (subscriptions held by `subscriptions`). */
export function createQuireMcpServer(version: string, subscriptions: ResourceSubscriptions): McpServer {
  const server = new McpServer(
    { name: "quire", version },
    { capabilities: { tools: {} }, instructions: SERVER_INSTRUCTIONS, jsonSchemaValidator },
  );
  for (const { name, config } of toolRegistrations) {
    server.registerTool(name, config, (args, extra) => callTool(name, args, contextOf(extra.authInfo)));
  }
  // Replaces McpServer's own tools/list, which would derive every schema again on each call.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools }));
  serveResources(server, subscriptions, (extra) => contextOf(extra.authInfo));
  return server;
}

/**
 * The answer Quire gives, ahead of McpServer, to a tools/call McpServer would
 * answer outside Quire's contract: params that are not a valid tools/call
 * (McpServer's own parse of the request throws, which the SDK answers -32603
 * Internal error; it is the caller's mistake, -32602 Invalid params) and an
 * unknown tool (McpServer answers a text-only isError result; the spec shows a
 * -32602 error, and Quire's names the tools there are).
 */
function answerBeforeMcpServer(message: JSONRPCRequest): JSONRPCMessage | undefined {
  if (message.method !== "tools/call") return undefined;
  const call = CallToolRequestSchema.safeParse(message);
  if (!call.success) {
    const error = new McpError(ErrorCode.InvalidParams, `Invalid tools/call request: ${call.error.message}`);
    return { jsonrpc: "2.0", id: message.id, error: { code: error.code, message: error.message } };
  }
  if (isToolName(call.data.params.name)) return undefined;
  return unknownToolError(message.id, call.data.params.name);
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
