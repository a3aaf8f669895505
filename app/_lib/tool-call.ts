/**
 * How the app's client components call a tool over tRPC. The router serves
 * each tool as one procedure taking the tool's own input, so tRPC types its
 * answer as the union of every action's result; `toolCall` types each call by
 * the action it sends, as `runTool` does for the bridge, and hands a refusal
 * back as the forms show it (the server's code and message) instead of a throw.
 * The hooks at the end are each tool's calls, for client components: plain
 * client calls, no query cache or observer (a section's controls hold several).
 */
import { isTRPCClientError } from "@trpc/client";
import type { z } from "zod";
import type { ActionResult } from "@/app/_lib/action-result";
import { useTRPCClient } from "@/app/_lib/trpc";
import type { apiTokensTool } from "@/server/actions/api-tokens";
import type { webhooksTool } from "@/server/actions/webhooks";
import type { commentsTool } from "@/server/actions/comments";
import type { documentsTool } from "@/server/actions/documents";
import type { mergeRequestsTool } from "@/server/actions/merge-requests";
import type { sectionsTool } from "@/server/actions/sections";
import type { AnyTool, ToolResult } from "@/server/actions/tool";
import type { uploadUrlTool } from "@/server/actions/upload-url";
import type { workspaceTool } from "@/server/actions/workspace";
import type { AppRouter } from "@/server/api/router";

/**
 * A failed call as the forms show it: the server's own code and message (the router's error formatter puts
 * them in `data.error`), or a generic one when the call never reached the server.
 */
export function refusalOf(error: unknown): { ok: false; code: string; message: string } {
  if (isTRPCClientError<AppRouter>(error)) {
    const payload = error.data?.error;
    return { ok: false, code: payload?.code ?? "INTERNAL", message: payload?.message ?? error.message };
  }
  console.error("[quire] a call to the server failed", error);
  return { ok: false, code: "INTERNAL", message: "The server could not be reached. Please try again." };
}

/**
 * `call` is a tool's tRPC mutation (`useTRPCClient().<tool>.mutate`). The type
 * parameter names the tool; a procedure of another tool does not compile (its input or answer differ).
 */
export function toolCall<T extends AnyTool>(call: (input: z.input<T["input"]>) => Promise<ToolResult<T, z.input<T["input"]>>>) {
  return async <const I extends z.input<T["input"]>>(input: I): Promise<ActionResult<ToolResult<T, I>>> => {
    try {
      // The answer is what runTool returned for this input: the result of the action it names.
      return { ok: true, value: (await call(input)) as ToolResult<T, I> };
    } catch (error) {
      return refusalOf(error);
    }
  };
}

export const useDocumentsTool = () => toolCall<typeof documentsTool>(useTRPCClient().documents.mutate);
export const useSectionsTool = () => toolCall<typeof sectionsTool>(useTRPCClient().sections.mutate);
export const useCommentsTool = () => toolCall<typeof commentsTool>(useTRPCClient().comments.mutate);
export const useUploadUrlTool = () => toolCall<typeof uploadUrlTool>(useTRPCClient().uploadUrl.mutate);
export const useMergeRequestsTool = () => toolCall<typeof mergeRequestsTool>(useTRPCClient().mergeRequests.mutate);
/** Workspace administration (members, roles, invites); not an MCP tool. */
export const useWorkspaceTool = () => toolCall<typeof workspaceTool>(useTRPCClient().workspace.mutate);
/** The signed-in person's own API tokens; not an MCP tool. */
export const useApiTokensTool = () => toolCall<typeof apiTokensTool>(useTRPCClient().apiTokens.mutate);
/** The workspace's webhooks (admins, signed in); not an MCP tool. */
export const useWebhooksTool = () => toolCall<typeof webhooksTool>(useTRPCClient().webhooks.mutate);
