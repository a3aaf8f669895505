/**
 * Documents and their branches: rows, paths and lookups. Every change of a
 * branch head goes through commit-to-branch.ts.
 */
import { and, asc, desc, eq, getTableColumns, gt, ilike, like, lt, ne, or } from "drizzle-orm";
import { branches, documentGrants, documents } from "@/db/schema";
import type { Permission } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import { createAccessCache } from "./access-cache";
import { anyOf, isUniqueViolation, type Tx } from "./db";

export type DocumentRow = typeof documents.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;

/** Every document starts with this branch, its default. */
export const DEFAULT_BRANCH = "main";

const LIVE_PATH_CONSTRAINT = "documents_live_path_uq";

export function pathTaken(path: string): DomainError {
  return new DomainError("PATH_TAKEN", `Another live document already has the path ${JSON.stringify(path)}. Choose a different path.`, {
    path,
  });
}

export const documentNotFound = (documentId: string): DomainError =>
  notFound("Document", documentId, "Use `documents` action `list` to find documents.");

export async function getDocument(tx: Tx, workspaceId: string, documentId: string): Promise<DocumentRow> {
  const [row] = await tx
    .select()
    .from(documents)
    .where(and(eq(documents.id, documentId), eq(documents.workspaceId, workspaceId)));
  if (!row) throw documentNotFound(documentId);
  return row;
}

/** A document with the grants of some users on it; null records that a user has none. */
export interface DocumentWithGrants {
  document: DocumentRow;
  grants: ReadonlyMap<string, Permission | null>;
}

/**
 * A document with the grants the given users hold on it, in one query (every
 * call that opens a document runs it); undefined when there is no such
 * document. Callers check the workspace.
 */
export async function findDocumentWithGrants(
  tx: Tx,
  documentId: string,
  userIds: readonly string[],
): Promise<DocumentWithGrants | undefined> {
  const rows = await tx
    .select({ document: documents, userId: documentGrants.userId, permission: documentGrants.permission })
    .from(documents)
    .leftJoin(documentGrants, and(eq(documentGrants.documentId, documents.id), anyOf(documentGrants.userId, [...new Set(userIds)])))
    .where(eq(documents.id, documentId));
  if (rows.length === 0) return undefined;
  const grants = new Map<string, Permission | null>(userIds.map((id) => [id, null]));
  for (const row of rows) if (row.userId && row.permission) grants.set(row.userId, row.permission);
  return { document: rows[0]!.document, grants };
}

/** Documents with grants, for writes (see access-cache.ts for how changes clear it). */
const documentFacts = createAccessCache<DocumentWithGrants>("documents with their grants, for writes", 10_000);

/**
 * findDocumentWithGrants through a cache, for the write path. The cached row's
 * permission columns and grants are current; its mirror of the default branch
 * (path, name, description, deleted, updatedAt) may lag, so writes read those
 * from the tree.
 */
export async function findDocumentWithGrantsForWrite(
  tx: Tx,
  documentId: string,
  userIds: readonly string[],
): Promise<DocumentWithGrants | undefined> {
  const since = documentFacts.begin();
  const cached = documentFacts.get(documentId);
  if (cached && userIds.every((id) => cached.grants.has(id))) return cached;
  const found = await findDocumentWithGrants(tx, documentId, userIds);
  if (!found) return undefined;
  const facts = { document: found.document, grants: new Map([...(cached?.grants ?? []), ...found.grants]) };
  return documentFacts.set(documentId, facts, since);
}

/** Where a page of the document list resumes: after this path, or after this (last change, id) when newest first. */
export type DocumentListPosition = { path: string } | { updatedAt: Date; documentId: string };

export interface DocumentListQuery {
  workspaceId: string;
  pathPrefix?: string;
  /** Case-insensitive text anywhere in the name or the path. */
  search?: string;
  /** By path, or by last change, newest first. */
  order: "path" | "updated";
  /** Exclusive: the position of the previous page's last row (the cursor). */
  after?: DocumentListPosition;
  limit: number;
}

/** A live document with the time its default branch last moved (its last change). */
export type ListedDocument = DocumentRow & { headUpdatedAt: Date };

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listDocuments(tx: Tx, q: DocumentListQuery): Promise<ListedDocument[]> {
  const after = q.after;
  const search = q.search === undefined ? undefined : `%${escapeLike(q.search)}%`;
  return tx
    .select({ ...getTableColumns(documents), headUpdatedAt: branches.updatedAt })
    .from(documents)
    .innerJoin(branches, and(eq(branches.documentId, documents.id), eq(branches.name, documents.defaultBranch)))
    .where(
      and(
        eq(documents.workspaceId, q.workspaceId),
        eq(documents.deleted, false),
        q.pathPrefix === undefined ? undefined : like(documents.path, `${escapeLike(q.pathPrefix)}%`),
        search === undefined ? undefined : or(ilike(documents.name, search), ilike(documents.path, search)),
        after === undefined
          ? undefined
          : "path" in after
            ? gt(documents.path, after.path)
            : or(lt(branches.updatedAt, after.updatedAt), and(eq(branches.updatedAt, after.updatedAt), lt(documents.id, after.documentId))),
      ),
    )
    .orderBy(...(q.order === "path" ? [asc(documents.path)] : [desc(branches.updatedAt), desc(documents.id)]))
    .limit(q.limit);
}

/** Fails with PATH_TAKEN when another live document of the workspace holds `path`. */
export async function assertPathFree(tx: Tx, workspaceId: string, path: string, exceptDocumentId: string): Promise<void> {
  if ((await pathsHeldByOtherDocuments(tx, workspaceId, exceptDocumentId, [path])).has(path)) throw pathTaken(path);
}

/** The paths among `paths` that a live document of the workspace other than `exceptDocumentId` holds. */
export async function pathsHeldByOtherDocuments(
  tx: Tx,
  workspaceId: string,
  exceptDocumentId: string,
  paths: readonly string[],
): Promise<Set<string>> {
  const rows = await tx
    .select({ path: documents.path })
    .from(documents)
    .where(
      and(
        eq(documents.workspaceId, workspaceId),
        anyOf(documents.path, [...new Set(paths)]),
        eq(documents.deleted, false),
        ne(documents.id, exceptDocumentId),
      ),
    );
  return new Set(rows.map((r) => r.path));
}

/** Inserts a document row (its first commit and branch come from commit-to-branch.ts createDocument). */
export async function insertDocumentRow(tx: Tx, row: typeof documents.$inferInsert): Promise<DocumentRow> {
  try {
    const [document] = await tx.insert(documents).values(row).returning();
    return document!;
  } catch (error) {
    if (isPathTaken(error)) throw pathTaken(row.path);
    throw error;
  }
}

/** Whether a database error says another live document holds the path. */
export const isPathTaken = (error: unknown): boolean => isUniqueViolation(error, LIVE_PATH_CONSTRAINT);

export const branchMoved = (name: string): DomainError =>
  new DomainError(
    "BRANCH_MOVED",
    `Branch ${JSON.stringify(name)} moved while this change was being written. Nothing was changed; read the branch again and retry.`,
    { branchName: name },
  );

export const branchNotFound = (name: string): DomainError =>
  notFound("Branch", name, "Use `documents` action `list_branches` to see this document's branches.");

/** A branch row, locked for the rest of the transaction with `forUpdate`; undefined when there is no such branch. */
export async function findBranch(
  tx: Tx,
  documentId: string,
  name: string,
  options: { forUpdate?: boolean } = {},
): Promise<BranchRow | undefined> {
  const query = tx
    .select()
    .from(branches)
    .where(and(eq(branches.documentId, documentId), eq(branches.name, name)));
  const [row] = options.forUpdate ? await query.for("update") : await query;
  return row;
}

export async function getBranch(tx: Tx, documentId: string, name: string, options: { forUpdate?: boolean } = {}): Promise<BranchRow> {
  const row = await findBranch(tx, documentId, name, options);
  if (!row) throw branchNotFound(name);
  return row;
}

export async function listBranches(tx: Tx, documentId: string): Promise<BranchRow[]> {
  return tx.select().from(branches).where(eq(branches.documentId, documentId)).orderBy(asc(branches.name));
}
