/** Changeset records and their items (each item a document and the merge request that carries it). */
import { and, asc, desc, eq, exists, getTableColumns, like, lt, ne, or, type SQL, sql } from "drizzle-orm";
import { branches, changesetItems, changesets, type ChangesetStatus, documents } from "@/db/schema";
import { notFound } from "@/server/core/errors";
import { anyOf, type Tx } from "./db";
import type { DocumentRow } from "./documents";

export type ChangesetRow = typeof changesets.$inferSelect;
export type ChangesetItemRow = typeof changesetItems.$inferSelect;

export const changesetNotFound = (id: string) => notFound("Changeset", id, "Use `changesets` action `list` to find changesets.");

export async function insertChangeset(tx: Tx, values: typeof changesets.$inferInsert): Promise<ChangesetRow> {
  const [row] = await tx.insert(changesets).values(values).returning();
  return row!;
}

/** A changeset of the workspace (NOT_FOUND otherwise); with `forUpdate` its row is locked, which serialises every change to it. */
export async function getChangeset(tx: Tx, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<ChangesetRow> {
  const query = tx
    .select()
    .from(changesets)
    .where(and(eq(changesets.id, id), eq(changesets.workspaceId, workspaceId)));
  const [row] = options.forUpdate ? await query.for("update") : await query;
  if (!row) throw changesetNotFound(id);
  return row;
}

export async function updateChangeset(tx: Tx, id: string, values: Partial<typeof changesets.$inferInsert>): Promise<ChangesetRow> {
  const [row] = await tx.update(changesets).set(values).where(eq(changesets.id, id)).returning();
  return row!;
}

export interface ChangesetListQuery {
  workspaceId: string;
  status?: ChangesetStatus;
  /** Only changesets with an item on this document. */
  documentId?: string;
  /** Keyset cursor: rows strictly older than this (createdAt, id). */
  before?: { createdAt: Date; id: string };
  limit: number;
}

/** Newest first. */
export async function listChangesets(tx: Tx, q: ChangesetListQuery): Promise<ChangesetRow[]> {
  const conditions: Array<SQL | undefined> = [
    eq(changesets.workspaceId, q.workspaceId),
    q.status ? eq(changesets.status, q.status) : undefined,
    q.documentId
      ? exists(
          tx
            .select({ one: sql`1` })
            .from(changesetItems)
            .where(and(eq(changesetItems.changesetId, changesets.id), eq(changesetItems.documentId, q.documentId))),
        )
      : undefined,
    q.before
      ? or(lt(changesets.createdAt, q.before.createdAt), and(eq(changesets.createdAt, q.before.createdAt), lt(changesets.id, q.before.id)))
      : undefined,
  ];
  return tx
    .select()
    .from(changesets)
    .where(and(...conditions))
    .orderBy(desc(changesets.createdAt), desc(changesets.id))
    .limit(q.limit);
}

/** Each changeset's items, by document id: the order every lock over them is taken in, so two executes cannot deadlock. */
export async function listChangesetItems(tx: Tx, changesetIds: readonly string[]): Promise<Map<string, ChangesetItemRow[]>> {
  const byChangeset = new Map<string, ChangesetItemRow[]>(changesetIds.map((id) => [id, []]));
  if (changesetIds.length === 0) return byChangeset;
  const rows = await tx
    .select()
    .from(changesetItems)
    .where(anyOf(changesetItems.changesetId, [...changesetIds]))
    .orderBy(asc(changesetItems.documentId));
  for (const row of rows) byChangeset.get(row.changesetId)!.push(row);
  return byChangeset;
}

export async function insertChangesetItems(tx: Tx, rows: ReadonlyArray<typeof changesetItems.$inferInsert>): Promise<void> {
  if (rows.length > 0) await tx.insert(changesetItems).values([...rows]);
}

export async function deleteChangesetItems(tx: Tx, changesetId: string, documentIds: readonly string[]): Promise<void> {
  if (documentIds.length === 0) return;
  await tx
    .delete(changesetItems)
    .where(and(eq(changesetItems.changesetId, changesetId), anyOf(changesetItems.documentId, [...documentIds])));
}

/** Of these merge requests, those that are items of an open changeset other than `exceptChangesetId`: mergeRequestId -> changesetId. */
export async function mergeRequestsInOpenChangesets(
  tx: Tx,
  mergeRequestIds: readonly string[],
  exceptChangesetId?: string,
): Promise<Map<string, string>> {
  if (mergeRequestIds.length === 0) return new Map();
  const rows = await tx
    .select({ mergeRequestId: changesetItems.mergeRequestId, changesetId: changesetItems.changesetId })
    .from(changesetItems)
    .innerJoin(changesets, eq(changesets.id, changesetItems.changesetId))
    .where(
      and(
        anyOf(changesetItems.mergeRequestId, [...mergeRequestIds]),
        eq(changesets.status, "open"),
        exceptChangesetId ? ne(changesets.id, exceptChangesetId) : undefined,
      ),
    );
  return new Map(rows.map((r) => [r.mergeRequestId, r.changesetId]));
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * Live documents of the workspace that have branch `branchName` (with its head), by path; narrowed to `documentIds`
 * and/or to paths starting with `pathPrefix`.
 */
export async function documentsWithBranch(
  tx: Tx,
  q: { workspaceId: string; branchName: string; documentIds?: readonly string[]; pathPrefix?: string; limit: number },
): Promise<Array<{ document: DocumentRow; headCommitId: string }>> {
  return tx
    .select({ document: getTableColumns(documents), headCommitId: branches.headCommitId })
    .from(documents)
    .innerJoin(branches, and(eq(branches.documentId, documents.id), eq(branches.name, q.branchName)))
    .where(
      and(
        eq(documents.workspaceId, q.workspaceId),
        eq(documents.deleted, false),
        q.documentIds ? anyOf(documents.id, [...q.documentIds]) : undefined,
        q.pathPrefix === undefined ? undefined : like(documents.path, `${escapeLike(q.pathPrefix)}%`),
      ),
    )
    .orderBy(asc(documents.path))
    .limit(q.limit);
}
