/**
 * How a failed tool call looks on Quire's MCP face (the server's and the
 * stdio proxy's own failures alike): an isError result whose one text block
 * is `{"error":{"code","message","details"?}}`, as the MCP spec describes tool
 * execution errors. It carries no structuredContent: a tool's outputSchema
 * describes successful results only, and the SDK client checks any
 * structuredContent against it, an error's too.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ErrorPayload } from "@/server/core/errors";

export function toolErrorResult(error: ErrorPayload): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify({ error }) }], isError: true };
}
