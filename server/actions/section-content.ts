/**
 * Everything that happens to section content on its way into storage, for
 * every action that writes sections: block rules, upload checks, and comment
 * markup (existing comments kept intact, new comments stored and anchored).
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { type Block, storageKeysOf } from "@/server/core/blocks";
import { existingCommentTags, newCommentTags, replaceNewCommentTags } from "@/server/core/comment-markup";
import { DomainError } from "@/server/core/errors";
import { assertSectionContentAllowed } from "@/server/core/section-rules";
import { nonMembers } from "@/server/store/accounts";
import { getComments, type NewCommentRow } from "@/server/store/comments";
import type { BranchState } from "@/server/store/group-commit";
import type { Tx } from "@/server/store/db";
import { completedUploadsAmong } from "@/server/store/uploads";
import { type DocumentAccess, sectionRules } from "@/server/access/documents";
import { storageKeysVisibleIn } from "@/server/access/sections";
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
  /** The storage keys the caller can already see in this document (absent for a new document). */
  keysVisibleInDocument?: () => Promise<ReadonlySet<string>>;
  /**
   * Who new comments' `author="…"` may name: the caller only (content the
   * caller sends), or whoever it names (a live draft, whose comments were
   * checked against their typist when they arrived). Without the attribute
   * the caller is the author.
   */
  commentAuthors?: "caller" | "as-marked";
}

/** `keysVisibleInDocument` for a write on a branch: worked out at most once, and only when a new key needs it. */
export function keysVisibleOnBranch(tx: Tx, access: DocumentAccess, state: BranchState): () => Promise<ReadonlySet<string>> {
  let keys: Promise<ReadonlySet<string>> | undefined;
  return () =>
    (keys ??= sectionRules(tx, access, state.branch.name).then((rules) => storageKeysVisibleIn(rules, state.tree, state.loadSections)));
}

/**
 * The storage keys in `content` the caller may not reference: a key must name
 * a completed upload of the workspace, and one the caller uploaded or can
 * already see in this document. Knowing a key is not enough to publish the
 * file elsewhere (and so to get a download link for it).
 */
async function unreferenceableKeys(ctx: ActionContext, tx: Tx, target: ContentTarget, content: readonly Block[]): Promise<string[]> {
  const kept = new Set(storageKeysOf(target.previous ?? []));
  const added = [...new Set(storageKeysOf(content))].filter((key) => !kept.has(key));
  if (added.length === 0) return [];
  const uploaded = new Map((await completedUploadsAmong(tx, ctx.actor.workspaceId, added)).map((u) => [u.key, u.createdBy]));
  const notOwn = added.filter((key) => uploaded.get(key) !== ctx.actor.userId);
  if (notOwn.length === 0) return [];
  const visible = target.keysVisibleInDocument ? await target.keysVisibleInDocument() : new Set<string>();
  return notOwn.filter((key) => !uploaded.has(key) || !visible.has(key));
}

const isUuid = (id: string) => z.guid().safeParse(id).success;

const commentIdsOf = (content: readonly Block[]) => content.flatMap((b) => (b.blockType === "text" ? existingCommentTags(b.text) : []));

export interface PreparedContent {
  /** The content as it is to be stored: new-comment markup rewritten to anchors of the new comments. */
  content: readonly Block[];
  /** The comments the content introduces, for the caller to store with the section. */
  comments: NewCommentRow[];
}

/** Validates content and turns its new-comment markup into comments; reads only, stores nothing. */
export async function prepareSectionContent(
  ctx: ActionContext,
  tx: Tx,
  target: ContentTarget,
  content: readonly Block[],
): Promise<PreparedContent> {
  assertSectionContentAllowed(target.name, content, target.where);

  const refused = await unreferenceableKeys(ctx, tx, target, content);
  if (refused.length > 0) {
    // One answer for "no such upload" and "not yours to use", so a key's existence is not revealed.
    throw new DomainError(
      "NOT_FOUND",
      `${target.where}: storage key(s) ${refused.map((k) => JSON.stringify(k)).join(", ")} do not name an upload you can use here. Use a key that \`upload_url\` gave you, or one already shown in this document; to reuse a file from elsewhere, upload it again.`,
      { kind: "Upload", ids: refused },
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
  const unknown = [...new Set(after.map((c) => c.id).filter((id) => !knownIds.has(id)))];
  // A comment posted on this section (`comments` `post`) is anchored in the draft first: its markup is its own.
  const posted = new Set(
    (await getComments(tx, target.documentId, unknown.filter(isUuid))).filter((c) => c.sectionId === target.sectionId).map((c) => c.id),
  );
  const forged = unknown.filter((id) => !posted.has(id));
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
  const othersNamed = allNew.filter((c) => c.author !== null && c.author !== ctx.actor.userId);
  if (target.commentAuthors !== "as-marked" && othersNamed.length > 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `${target.where}: <svc:comment-new author="…"> may only name you (${ctx.actor.userId}); leave the attribute out and the comment is yours.`,
      { issues: [{ path: target.where, message: "a new comment's author must be the caller" }] },
    );
  }

  const strangers = await nonMembers(
    tx,
    ctx.actor.workspaceId,
    allNew.flatMap((c) => [...c.mentions, ...(c.author ? [c.author] : [])]),
  );
  if (strangers.length > 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `${target.where}: ${strangers.join(", ")} (named by a new comment's mentions or author) ${strangers.length === 1 ? "is not a member" : "are not members"} of this workspace. Find member ids with the \`members\` tool (action \`search\`).`,
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
      authorId: tag.author ?? ctx.actor.userId,
      // A comment the tag names an author for was written by that person (in the live editor), not by this write's agent.
      agent: tag.author ? null : ctx.actor.agent,
      body: tag.body,
      mentions: tag.mentions,
      createdAt: now,
    }));
    comments.push(...rows);
    return {
      ...block,
      text: replaceNewCommentTags(
        block.text,
        rows.map((c) => c.id),
      ),
    };
  });
  return { content: prepared, comments };
}
