/**
 * What the document pages follow live (tRPC subscriptions in
 * server/api/router.ts, yielded again whenever the state may have changed):
 * the heads of named branches, and a branch's comment threads as its draft
 * holds them. Each is read through the same actions and access as the
 * queries that show it once, so a caller who may not read the document gets
 * NOT_FOUND, and a section hidden from them brings no comment.
 */
import { z } from "zod";
import { newCommentTags } from "@/server/core/comment-markup";
import { branchNameSchema } from "@/server/core/names";
import { listBranches } from "@/server/store/documents";
import { openDocument } from "@/server/access/documents";
import { type ThreadView, commentsTool } from "./comments";
import type { ActionContext } from "./context";
import { membersTool } from "./members";
import { type CommentReplyView, readTool } from "./read";
import { runTool, uuidSchema } from "./tool";

const documentId = uuidSchema.describe("The document.");

export const branchHeadsInput = z.strictObject({
  documentId,
  branchNames: z.array(branchNameSchema).min(1).max(20).describe("The branches whose heads to follow."),
});

/** A branch of a document: what the draft status and the comment threads follow. */
export const branchInput = z.strictObject({
  documentId,
  branchName: branchNameSchema.describe("The branch (its draft: the head plus everyone's live edits)."),
});

/** The heads of the named branches that exist, by name (a branch deleted or never made is absent). */
export async function branchHeads(ctx: ActionContext, input: z.output<typeof branchHeadsInput>) {
  const { document } = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const wanted = new Set(input.branchNames);
  const rows = await listBranches(ctx.db, document.id);
  return {
    documentId: document.id,
    branches: rows.filter((b) => wanted.has(b.name)).map((b) => ({ name: b.name, headCommitId: b.headCommitId })),
  };
}

/** A thread as the comments panel shows it: a stored comment with its replies and state, or one typed into the draft. */
export interface CommentThread {
  /** null for a comment typed into the draft as <svc:comment-new> markup and not committed yet. */
  commentId: string | null;
  sectionId: string;
  sectionName: string;
  /** The commented text, as the draft has it (empty when not anchored). */
  text: string;
  body: string;
  /** For a comment typed into the draft: the author its markup names (null when it names none). */
  authorName: string | null;
  createdAt: string | null;
  pending: boolean;
  /** False: its anchor left the draft before a commit stored it (a discarded draft); the thread is kept. */
  anchored: boolean;
  status: "open" | "resolved";
  resolvedByName: string | null;
  resolvedAt: string | null;
  replies: CommentReplyView[];
  /** Whether the caller may reply, resolve and reopen (edit on the comment's section). */
  canWrite: boolean;
}

/** The panel's thread for a stored comment. */
function storedThread(thread: ThreadView): CommentThread {
  const { commentId, sectionId, sectionName, body, authorName, createdAt, status, resolvedByName, resolvedAt, replies, anchored } = thread;
  return {
    commentId,
    sectionId,
    sectionName,
    text: thread.commentedText,
    body,
    authorName,
    createdAt,
    pending: false,
    anchored,
    status,
    resolvedByName,
    resolvedAt,
    replies,
    canWrite: thread.yourPermission === "edit",
  };
}

/**
 * The branch's comments as its draft holds them, section by section in
 * document order: the threads `comments` `list` gives (posted comments
 * anchored in the draft included; replies, state, what the caller may do),
 * then those whose anchor was lost with a discarded draft, and the comments
 * typed into the draft as markup (drafts from before comments were posted),
 * each by the author its markup names (the commit checks that name against
 * who typed it).
 */
export async function commentThreads(ctx: ActionContext, input: z.output<typeof branchInput>) {
  const [document, listed, members] = await Promise.all([
    runTool(readTool, ctx, { ...input, includeDraft: true }),
    runTool(commentsTool, ctx, { action: "list", ...input }),
    runTool(membersTool, ctx, { action: "list", limit: 200 }),
  ]);
  const names = new Map(members.members.map((m) => [m.userId, m.name]));
  const threads = document.sections.flatMap((section) => {
    const stored = listed.threads.filter((t) => t.sectionId === section.sectionId && t.anchored).map(storedThread);
    const typed = section.content.flatMap((block): CommentThread[] => {
      if (block.blockType !== "text") return [];
      try {
        return newCommentTags(block.text, "draft").map((tag) => ({
          commentId: null,
          sectionId: section.sectionId,
          sectionName: section.name,
          text: tag.text,
          body: tag.body,
          // Someone the workspace list does not show (a removed member) reads as "Someone".
          authorName: tag.author === null ? null : (names.get(tag.author) ?? "Someone"),
          createdAt: null,
          pending: true,
          anchored: true,
          status: "open" as const,
          resolvedByName: null,
          resolvedAt: null,
          replies: [],
          canWrite: false,
        }));
      } catch {
        // Markup being typed may be unfinished; the commit will say what is wrong with it.
        return [];
      }
    });
    return [...stored, ...typed];
  });
  const detached = listed.threads.filter((t) => !t.anchored).map(storedThread);
  return { documentId: document.documentId, branchName: input.branchName, threads: [...threads, ...detached] };
}
