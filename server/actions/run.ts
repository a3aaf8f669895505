/** The one way a transport runs a tool: validate, run, and turn any failure into a DomainError. */
import { DomainError, isDomainError } from "@/server/core/errors";
import type { ActionContext } from "./context";
import { type ToolName, tools } from "./registry";
import { parseInput, type ToolDefinition } from "./tool";

export async function runTool(name: ToolName, ctx: ActionContext, raw: unknown): Promise<unknown> {
  const tool = tools[name] as unknown as ToolDefinition<unknown, unknown>;
  try {
    return await tool.run(ctx, parseInput(tool.input, raw));
  } catch (error) {
    if (isDomainError(error)) throw error;
    console.error(`[quire] ${name} failed`, error);
    throw new DomainError("INTERNAL", "Quire hit an internal error; nothing was changed. Retry, and report it if it persists.");
  }
}
