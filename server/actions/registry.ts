/** Every tool Quire offers, by name; both transport faces are generated from this map. */
import type { z } from "zod";
import { type DocumentsResults, documentsTool } from "./documents";
import { type MembersResults, membersTool } from "./members";
import { type MergeRequestsResults, mergeRequestsTool } from "./merge-requests";
import { type DocumentView, readTool } from "./read";
import { type SectionsResults, sectionsTool } from "./sections";
import { type UploadUrlResult, uploadUrlTool } from "./upload-url";

export const tools = {
  documents: documentsTool,
  read: readTool,
  sections: sectionsTool,
  merge_requests: mergeRequestsTool,
  upload_url: uploadUrlTool,
  members: membersTool,
} as const;

export type ToolName = keyof typeof tools;
export type ToolInput<T extends ToolName> = z.input<(typeof tools)[T]["input"]>;

interface ResultsByTool {
  documents: DocumentsResults;
  read: DocumentView;
  sections: SectionsResults;
  merge_requests: MergeRequestsResults;
  upload_url: UploadUrlResult;
  members: MembersResults;
}

/** The result of calling `tool` with `input`: per action for tools with several actions. */
export type ToolOutput<T extends ToolName, I = ToolInput<T>> = ResultsByTool[T] extends DocumentView | UploadUrlResult
  ? ResultsByTool[T]
  : I extends { action: infer A extends keyof ResultsByTool[T] }
    ? ResultsByTool[T][A]
    : ResultsByTool[T][keyof ResultsByTool[T]];
