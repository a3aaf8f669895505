/** A tool error's { code, message, details }. */
export interface McpToolError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The error of an isError tool result, read where Quire puts it: the JSON of
 * its one text block, which is all the result carries (no structuredContent:
 * output schemas describe successful results only). Throws when the result is
 * not shaped so.
 */
export function toolError(answer: object): McpToolError {
  // `object`: the SDK's callTool type is a union with the legacy `{ toolResult }` shape.
  const result = answer as { isError?: unknown; content?: unknown; structuredContent?: unknown };
  if (!result.isError) throw new Error(`expected an isError result, got ${JSON.stringify(result.structuredContent ?? result.content)}`);
  if (result.structuredContent !== undefined) throw new Error("an isError result carries structuredContent");
  const content = result.content as Array<{ type: string; text: string }>;
  if (content.length !== 1 || content[0]!.type !== "text") throw new Error("an isError result's content is not one text block");
  return (JSON.parse(content[0]!.text) as { error: McpToolError }).error;
}
