/**
 * Stored comments and their threads; their anchors live in section text as
 * <svc:comment id="…"> markup. A thread (the comment, its replies, whether it
 * is resolved) is not versioned with the section: one state on every branch
 * where the comment is anchored.
 *
 * A change to a thread moves no branch head, so it has its own event
 * (`onThreadsChanged`): a comment posted, a reply, a resolution. It reaches
 * this process's listeners (the comments panels' subscriptions) directly; a
 * relay (`relayThreadsChanges`, Redis when the server has QUIRE_REDIS_URL)
 * carries it to the other processes, whose listeners hear it through
 * `announceThreadsChangedHere`.
 */
import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import { afterCommit } from "@/db/commit-hooks";
import { type AgentIdentity, commentReplies, comments } from "@/db/schema";
import { anyOf, type Tx } from "./db";

type ThreadsListener = (documentId: string) => void;

/** Entries, not the functions themselves, so one function subscribed twice is called twice (as in head-moves.ts). */
const threadsListeners = new Set<{ listener: ThreadsListener }>();

/** What carries thread changes to the other processes (null: none). */
let relay: ((documentId: string) => void) | null = null;

/** Calls `listener` with the document once a comment posted, a reply or a resolution change to one of its threads is committed (in any process, with a relay); returns the unsubscribe function. */
export function onThreadsChanged(listener: ThreadsListener): () => void {
  const entry = { listener };
  threadsListeners.add(entry);
  return () => {
    threadsListeners.delete(entry);
  };
}

/** Tells this process's listeners only (what the relay calls with other processes' news). */
export function announceThreadsChangedHere(documentId: string): void {
  for (const { listener } of threadsListeners) {
    try {
      listener(documentId);
    } catch (error) {
      console.error("[quire] comment-threads listener failed", error);
    }
  }
}

/** Sets (or, with null, removes) what carries thread changes to the other processes. */
export function relayThreadsChanges(publish: ((documentId: string) => void) | null): void {
  relay = publish;
}

/** After the commit (never on rollback): a listener that read before it would see the old thread. */
function announceThreadsChanged(tx: Tx, documentId: string): void {
  afterCommit(tx, () => {
    announceThreadsChangedHere(documentId);
    relay?.(documentId);
  });
}

export type CommentRow = typeof comments.$inferSelect;
export type NewCommentRow = typeof comments.$inferInsert;
export type CommentReplyRow = typeof commentReplies.$inferSelect;

export async function insertComments(tx: Tx, rows: readonly NewCommentRow[]): Promise<CommentRow[]> {
  if (rows.length === 0) return [];
  const inserted = await tx
    .insert(comments)
    .values([...rows])
    .returning();
  for (const documentId of new Set(inserted.map((r) => r.documentId))) announceThreadsChanged(tx, documentId);
  return inserted;
}

/** The comments written on a branch of a document (those whose anchor may be only in its draft, or lost with it). */
export async function commentsWrittenOn(tx: Tx, documentId: string, branchName: string): Promise<CommentRow[]> {
  return tx
    .select()
    .from(comments)
    .where(and(eq(comments.documentId, documentId), eq(comments.branchName, branchName)))
    .orderBy(asc(comments.createdAt), asc(comments.id));
}

/** Comments of one document by id (ids that belong elsewhere are simply absent). */
export async function getComments(tx: Tx, documentId: string, ids: readonly string[]): Promise<CommentRow[]> {
  if (ids.length === 0) return [];
  return tx
    .select()
    .from(comments)
    .where(and(eq(comments.documentId, documentId), anyOf(comments.id, [...new Set(ids)])));
}

/** The replies to these comments, oldest first. */
export async function getReplies(tx: Tx, commentIds: readonly string[]): Promise<CommentReplyRow[]> {
  if (commentIds.length === 0) return [];
  return tx
    .select()
    .from(commentReplies)
    .where(anyOf(commentReplies.commentId, [...new Set(commentIds)]))
    .orderBy(asc(commentReplies.createdAt), asc(commentReplies.id));
}

/** Adds a reply to a comment of `documentId`. */
export async function insertReply(
  tx: Tx,
  documentId: string,
  row: { commentId: string; authorId: string; agent: AgentIdentity | null; body: string; mentions: readonly string[]; createdAt: Date },
): Promise<CommentReplyRow> {
  const [inserted] = await tx
    .insert(commentReplies)
    .values({ ...row, mentions: [...row.mentions] })
    .returning();
  announceThreadsChanged(tx, documentId);
  return inserted!;
}

/**
 * Marks a comment resolved, or open again (`resolution` null). Returns whether
 * the state changed: resolving a resolved thread keeps who resolved it and when.
 */
export async function setCommentResolution(tx: Tx, commentId: string, resolution: { by: string; at: Date } | null): Promise<boolean> {
  const changed = await tx
    .update(comments)
    .set(resolution ? { resolvedAt: resolution.at, resolvedBy: resolution.by } : { resolvedAt: null, resolvedBy: null })
    .where(and(eq(comments.id, commentId), resolution ? isNull(comments.resolvedAt) : isNotNull(comments.resolvedAt)))
    .returning({ documentId: comments.documentId });
  if (changed[0]) announceThreadsChanged(tx, changed[0].documentId);
  return changed.length > 0;
}
