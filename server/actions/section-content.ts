/**
 * Everything that happens to section content on its way into storage, for
 * every action that writes sections: block rules, upload checks, and comment
 * markup (existing comments kept intact, new comments stored and anchored).
 */
import { randomUUID } from "node:crypto";
import { type Block, storageKeysOf } from "@/server/core/blocks";
import { existingCommentTags, newCommentTags, replaceNewCommentTags } from "@/server/core/comment-markup";
import { DomainError } from "@/server/core/errors";
import { assertSectionContentAllowed } from "@/server/core/section-rules";
import { nonMembers } from "@/server/store/accounts";
import type { NewCommentRow } from "@/server/store/comments";
import type { Tx } from "@/server/store/db";
import { missingUploadKeys } from "@/server/store/uploads";
import type { ActionContext } from "./context";

export interface ContentTarget {
  documentId: string;
  branchName: string;
  sectionId: string;
  name: string;
  /** The section's current content, when it already exists: its comments must survive. */
  previous?: readonly Block[];
  /** Parameter path for error messages, e.g. "sections[2]" or "newContent". */
  where: string;
}

const commentIdsOf = (content: readonly Block[]) =>
  content.flatMap((b) => (b.blockType === "text" ? existingCommentTags(b.text) : []));

export interface PreparedContent {
  /** The content as it is to be stored: new-comment markup rewritten to anchors of the new comments. */
  content: Block[];
  /** The comments the content introduces, for the caller to store with the section. */
  comments: NewCommentRow[];
}

/** Validates content and turns its new-comment markup into comments; reads only, stores nothing. */
export async function prepareSectionContent(ctx: ActionContext, tx: Tx, target: ContentTarget, content: Block[]): Promise<PreparedContent> {
  assertSectionContentAllowed(target.name, content, target.where);

  const missing = await missingUploadKeys(tx, ctx.actor.workspaceId, storageKeysOf(content));
  if (missing.length > 0) {
    throw new DomainError(
      "NOT_FOUND",
      `${target.where}: storage key(s) ${missing.map((k) => JSON.stringify(k)).join(", ")} do not name an upload of this workspace. Upload the file with the \`upload_url\` tool and use the key it returns.`,
      { kind: "Upload", ids: missing },
    );
  }

  const before = commentIdsOf(target.previous ?? []);
  const after = commentIdsOf(content);
  const keptRaw = new Set(after.map((c) => c.raw));
  const removed = before.filter((c) => !keptRaw.has(c.raw)).map((c) => c.id);
  if (removed.length > 0) {
    throw new DomainError(
      "COMMENT_TAGS_REMOVED",
      `${target.where}: the update drops or alters comment markup ${removed.join(", ")}. Keep every <svc:comment id="…">…</svc:comment> element exactly as \`read\` returned it (you may edit text around it).`,
      { commentIds: removed },
    );
  }
  const knownIds = new Set(before.map((c) => c.id));
  const forged = [...new Set(after.map((c) => c.id).filter((id) => !knownIds.has(id)))];
  if (forged.length > 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `${target.where}: <svc:comment id> ${forged.join(", ")} is not a comment of this section. To add a comment write <svc:comment-new body="…">text</svc:comment-new>.`,
      { issues: [{ path: target.where, message: "unknown comment id" }], commentIds: forged },
    );
  }

  const perBlock = content.map((block, index) =>
    block.blockType === "text" ? newCommentTags(block.text, `${target.where}.content[${index}]`) : [],
  );
  const allNew = perBlock.flat();
  if (allNew.length === 0) return { content, comments: [] };

  const strangers = await nonMembers(tx, ctx.actor.workspaceId, allNew.flatMap((c) => c.mentions));
  if (strangers.length > 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `${target.where}: mentions ${strangers.join(", ")} are not members of this workspace. Find member ids with the \`members\` tool (action \`search\`).`,
      { issues: [{ path: target.where, message: "mention of a non-member" }], userIds: strangers },
    );
  }
  const now = ctx.clock();
  const comments: NewCommentRow[] = [];
  const prepared = content.map((block, index) => {
    const tags = perBlock[index]!;
    if (block.blockType !== "text" || tags.length === 0) return block;
    const rows = tags.map((tag) => ({
      id: randomUUID(),
      workspaceId: ctx.actor.workspaceId,
      documentId: target.documentId,
      sectionId: target.sectionId,
      branchName: target.branchName,
      authorId: ctx.actor.userId,
      body: tag.body,
      mentions: tag.mentions,
      createdAt: now,
    }));
    comments.push(...rows);
    return { ...block, text: replaceNewCommentTags(block.text, rows.map((c) => c.id)) };
  });
  return { content: prepared, comments };
}
