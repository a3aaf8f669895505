"use server";

/**
 * What the editor's comments ask of the server: the comment threads of a
 * branch's draft (stored comments with their replies and state, and the new
 * ones typed into the draft but not committed yet), replying, resolving and
 * reopening, and the people a comment may mention. All go through the bridge
 * as the signed-in person, so a section the person may not see brings no
 * comment with it, and the server decides who may write.
 */
import { type ActionResult, runAsUser } from "@/app/_lib/action-result";
import { type CommentReplyView, type DocumentRead, listMembers, type ThreadView } from "@/app/_lib/quire";
import { getBridge } from "@/server/bridge";
import { existingCommentTags, newCommentTags } from "@/server/core/comment-markup";
import type { Person } from "./actions";

/** A thread as the panel shows it: a stored comment with its replies and state, or one typed into the draft. */
export interface CommentThread {
  /** null for a comment typed into the draft and not committed yet. */
  commentId: string | null;
  sectionId: string;
  sectionName: string;
  /** The commented text, as the draft has it. */
  text: string;
  body: string;
  /** For a comment typed into the draft: the author its markup names (null when it names none). */
  authorName: string | null;
  createdAt: string | null;
  pending: boolean;
  status: "open" | "resolved";
  resolvedByName: string | null;
  resolvedAt: string | null;
  replies: CommentReplyView[];
  /** Whether this person may reply, resolve and reopen (edit on the comment's section). */
  canWrite: boolean;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The panel's thread for a stored comment, its text taken from the draft when given. */
function storedThread(thread: ThreadView, draftText?: string): CommentThread {
  const { commentId, sectionId, sectionName, body, authorName, createdAt, status, resolvedByName, resolvedAt, replies } = thread;
  return {
    commentId,
    sectionId,
    sectionName,
    text: draftText ?? thread.commentedText,
    body,
    authorName,
    createdAt,
    pending: false,
    status,
    resolvedByName,
    resolvedAt,
    replies,
    canWrite: thread.yourPermission === "edit",
  };
}

/**
 * The branch's comments as its draft holds them, section by section in
 * document order: the threads the `comments` tool lists (replies, state, what
 * this person may do), placed and quoted as the draft has them, and the
 * comments typed into the draft, each by the author its markup names (the
 * server checks that name against who typed it).
 */
export async function readCommentThreads(input: { documentId: unknown; branchName: unknown }): Promise<ActionResult<CommentThread[]>> {
  return runAsUser("comments", async (userId) => {
    const address = { documentId: text(input.documentId), branchName: text(input.branchName) };
    const [document, listed, members]: [DocumentRead, { threads: ThreadView[] }, Person[]] = await Promise.all([
      getBridge().callTool("read", userId, { ...address, includeDraft: true }),
      getBridge().callTool("comments", userId, { action: "list", ...address }),
      listMembers(userId),
    ]);
    const stored = new Map(listed.threads.map((t) => [t.commentId, t]));
    const names = new Map(members.map((m) => [m.userId, m.name]));
    return document.sections.flatMap((section) =>
      section.content.flatMap((block) => {
        if (block.blockType !== "text") return [];
        const committed = existingCommentTags(block.text).flatMap((tag): CommentThread[] => {
          const thread = stored.get(tag.id);
          return thread ? [{ ...storedThread(thread, tag.text), sectionName: section.name }] : [];
        });
        let typed: CommentThread[] = [];
        try {
          typed = newCommentTags(block.text, "draft").map((tag) => ({
            commentId: null,
            sectionId: section.sectionId,
            sectionName: section.name,
            text: tag.text,
            body: tag.body,
            // Someone the workspace list does not show (a removed member) reads as "Someone".
            authorName: tag.author === null ? null : (names.get(tag.author) ?? "Someone"),
            createdAt: null,
            pending: true,
            status: "open",
            resolvedByName: null,
            resolvedAt: null,
            replies: [],
            canWrite: false,
          }));
        } catch {
          // Markup being typed may be unfinished; the commit will say what is wrong with it.
        }
        return [...committed, ...typed];
      }),
    );
  });
}

interface ThreadAddress {
  documentId: unknown;
  branchName: unknown;
  commentId: unknown;
}

const addressOf = (input: ThreadAddress) => ({
  documentId: text(input.documentId),
  branchName: text(input.branchName),
  commentId: text(input.commentId),
});

/** Replies to a thread as the signed-in person; answers the thread as it is now. */
export async function replyToComment(input: ThreadAddress & { body: unknown }): Promise<ActionResult<CommentThread>> {
  return runAsUser("comment reply", async (userId) => {
    const { thread } = await getBridge().callTool("comments", userId, { action: "reply", ...addressOf(input), body: text(input.body) });
    return storedThread(thread);
  });
}

/** Resolves a thread (`resolved: true`) or opens it again; answers the thread as it is now. */
export async function setCommentResolved(input: ThreadAddress & { resolved: unknown }): Promise<ActionResult<CommentThread>> {
  return runAsUser("comment resolution", async (userId) => {
    const { thread } = await getBridge().callTool("comments", userId, {
      action: input.resolved === true ? "resolve" : "reopen",
      ...addressOf(input),
    });
    return storedThread(thread);
  });
}

/** Everyone in the workspace, for a comment's mentions. */
export async function readMentionable(): Promise<ActionResult<Person[]>> {
  return runAsUser("members", listMembers);
}
