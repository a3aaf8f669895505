"use client";

/**
 * The tools the live document calls, over the typed API (app/_lib/trpc.tsx)
 * as the signed-in person: each answers an ActionResult typed by the action
 * it sends (the server's own result types), a refusal carrying the server's
 * code and message. The server validates and decides everything.
 */
import { refusalOf, useSectionsTool } from "@/app/_lib/tool-call";
import type { ActionResult } from "@/app/_lib/action-result";
import { useTRPCClient } from "@/app/_lib/trpc";
import type { DocumentView } from "@/server/actions/read";
import type { Block } from "@/server/core/blocks";
import type { RoomAddress } from "./live-room";

export { useCommentsTool, useDocumentsTool, useSectionsTool, useUploadUrlTool } from "@/app/_lib/tool-call";

/** `read` as it is now (never from the cache: what is done next is built on it). */
export function useReadNow() {
  const client = useTRPCClient();
  return async (input: { documentId: string; branchName: string; sectionIds: string[] }): Promise<ActionResult<DocumentView>> => {
    try {
      return { ok: true, value: await client.read.query(input) };
    } catch (error) {
      return refusalOf(error);
    }
  };
}

/**
 * Adds a block to a section after the block at `afterIndex` (at the end
 * without it): one `sections` `update` of the head's content plus the block,
 * against that content's hash, so a section changed in between is refused
 * (CONTENT_HASH_MISMATCH) rather than overwritten. The section's room takes
 * the commit in like any other write, so text typed meanwhile stays.
 */
export function useInsertBlock() {
  const readNow = useReadNow();
  const sections = useSectionsTool();
  return async (address: RoomAddress, sectionId: string, block: Block, afterIndex?: number): Promise<ActionResult<unknown>> => {
    const { documentId, branchName } = address;
    const read = await readNow({ documentId, branchName, sectionIds: [sectionId] });
    if (!read.ok) return read;
    const section = read.value.sections.find((s) => s.sectionId === sectionId);
    if (!section) return { ok: false, code: "NOT_FOUND", message: "This section is no longer on the branch." };
    const at = afterIndex === undefined ? section.content.length : Math.min(Math.max(afterIndex + 1, 0), section.content.length);
    const kind = block.blockType.replace("_", " ");
    return sections({
      action: "update",
      documentId,
      branchName,
      sectionId,
      expectedContentHash: section.contentHash,
      newContent: [...section.content.slice(0, at), block, ...section.content.slice(at)],
      commitMessage: `Add ${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind} block to section ${JSON.stringify(section.name)}`,
    });
  };
}
