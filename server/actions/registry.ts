/** Every tool Quire offers agents and scripts, by name; both transport faces are generated from this map. */
import type { z } from "zod";
import { changesetsTool } from "./changesets";
import { commentsTool } from "./comments";
import { documentsTool } from "./documents";
import { membersTool } from "./members";
import { notificationsTool } from "./notifications";
import { mergeRequestsTool } from "./merge-requests";
import { readTool } from "./read";
import { searchTool } from "./search";
import { sectionsTool } from "./sections";
import type { ActionContext } from "./context";
import type { ActionsTool, SingleTool, ToolResult } from "./tool";
import { uploadUrlTool } from "./upload-url";

export const tools = {
  documents: documentsTool,
  read: readTool,
  sections: sectionsTool,
  merge_requests: mergeRequestsTool,
  upload_url: uploadUrlTool,
  members: membersTool,
  comments: commentsTool,
  notifications: notificationsTool,
  search: searchTool,
  changesets: changesetsTool,
} as const;

export type ToolName = keyof typeof tools;
export type ToolInput<T extends ToolName> = z.input<(typeof tools)[T]["input"]>;
/** The result of calling `tool` with `input`: per action for tools with several actions (inferred from the handlers). */
export type ToolOutput<T extends ToolName, I = ToolInput<T>> = ToolResult<(typeof tools)[T], I>;

type ActionContextHandler = (ctx: ActionContext, input: never) => Promise<unknown>;
type ActionContextTool = ActionsTool<z.ZodType, Record<string, ActionContextHandler>> | SingleTool<z.ZodType, ActionContextHandler>;

/**
 * The same tools, as faces that pick one by name run them. The annotation is
 * the check that every registered tool runs on the ActionContext the faces
 * build.
 */
export const toolsByName: Readonly<Record<ToolName, ActionContextTool>> = tools;
