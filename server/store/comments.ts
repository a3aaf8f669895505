/** Stored comments; their anchors live in section text as <svc:comment id="…"> markup. */
import { and, eq } from "drizzle-orm";
import { comments } from "@/db/schema";
import { anyOf, type Tx } from "./db";

export type CommentRow = typeof comments.$inferSelect;
export type NewCommentRow = typeof comments.$inferInsert;

export async function insertComments(tx: Tx, rows: readonly NewCommentRow[]): Promise<CommentRow[]> {
  if (rows.length === 0) return [];
  return tx
    .insert(comments)
    .values([...rows])
    .returning();
}

/** Comments of one document by id (ids that belong elsewhere are simply absent). */
export async function getComments(tx: Tx, documentId: string, ids: readonly string[]): Promise<CommentRow[]> {
  if (ids.length === 0) return [];
  return tx
    .select()
    .from(comments)
    .where(and(eq(comments.documentId, documentId), anyOf(comments.id, [...new Set(ids)])));
}
