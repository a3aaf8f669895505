/**
 * Documents and their branches: rows, paths, and moving a branch head by
 * compare-and-swap (writes on a branch go through branch-writes.ts).
 */
import { and, asc, desc, eq, getTableColumns, gt, ilike, like, lt, ne, or, sql } from "drizzle-orm";
import { branches, documentGrants, documents } from "@/db/schema";
import type { DocumentTree, Permission, SectionVersion } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import type { NewCommentRow } from "./comments";
import { type CommitRecord, insertCommit, rememberCommits } from "./commits";
import { AccessCache } from "./access-cache";
import { anyOf, isUniqueViolation, queryRows, type Tx } from "./db";
import { putSections, putTree, rememberObjects } from "./objects";

export type DocumentRow = typeof documents.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;

/** Every document starts with this branch, its default. */
export const DEFAULT_BRANCH = "main";

const LIVE_PATH_CONSTRAINT = "documents_live_path_uq";

function pathTaken(path: string): DomainError {
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
const documentFacts = new AccessCache<DocumentWithGrants>(10_000);

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
  documentFacts.set(documentId, facts, since);
  return facts;
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

export interface CreateDocumentInput {
  documentId: string;
  workspaceId: string;
  authorId: string;
  path: string;
  name: string;
  description: string | null;
  message: string;
  now: Date;
}

/**
 * Creates the document, its first commit and its default branch `main`. The
 * document row exists before `initialSections` runs, so whatever that stores
 * about the sections (comments) can refer to it.
 */
export async function createDocument(
  tx: Tx,
  input: CreateDocumentInput,
  initialSections: (document: DocumentRow) => Promise<Array<{ sectionId: string; version: SectionVersion }>>,
): Promise<{ document: DocumentRow; commit: CommitRecord; tree: DocumentTree }> {
  let document: DocumentRow;
  try {
    [document] = (await tx
      .insert(documents)
      .values({
        id: input.documentId,
        workspaceId: input.workspaceId,
        defaultBranch: DEFAULT_BRANCH,
        path: input.path,
        name: input.name,
        description: input.description,
        createdBy: input.authorId,
        createdAt: input.now,
        updatedAt: input.now,
      })
      .returning()) as [DocumentRow];
  } catch (error) {
    if (isUniqueViolation(error, LIVE_PATH_CONSTRAINT)) throw pathTaken(input.path);
    throw error;
  }
  const sections = await initialSections(document);
  const hashes = await putSections(
    tx,
    sections.map((s) => s.version),
  );
  const tree: DocumentTree = {
    path: input.path,
    name: input.name,
    description: input.description,
    deleted: false,
    tagIds: [],
    properties: {},
    sections: sections.map((s, i) => ({ sectionId: s.sectionId, blobHash: hashes[i]! })),
  };
  const treeHash = await putTree(tx, tree);
  const commit = await insertCommit(tx, {
    documentId: document.id,
    parentIds: [],
    treeHash,
    message: input.message,
    authorId: input.authorId,
    kind: "create",
    sectionIds: tree.sections.map((e) => e.sectionId),
    createdAt: input.now,
  });
  await tx.insert(branches).values({
    documentId: document.id,
    name: document.defaultBranch,
    headCommitId: commit.id,
    createdBy: input.authorId,
    createdAt: input.now,
    updatedAt: input.now,
  });
  return { document, commit, tree };
}

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

export async function createBranch(
  tx: Tx,
  input: { documentId: string; name: string; headCommitId: string; authorId: string; now: Date },
): Promise<BranchRow> {
  const [row] = await tx
    .insert(branches)
    .values({
      documentId: input.documentId,
      name: input.name,
      headCommitId: input.headCommitId,
      createdBy: input.authorId,
      createdAt: input.now,
      updatedAt: input.now,
    })
    .onConflictDoNothing()
    .returning();
  if (!row) {
    throw new DomainError(
      "BRANCH_EXISTS",
      `Branch ${JSON.stringify(input.name)} already exists on this document. Pick another name or write to it.`,
      {
        branchName: input.name,
      },
    );
  }
  return row;
}

/** Rows to store together with a head move, only if the head moves. */
export interface NewObjects {
  sections: ReadonlyMap<string, SectionVersion>;
  trees: ReadonlyMap<string, DocumentTree>;
  commits: readonly CommitRecord[];
  /** Comments whose anchors the new section versions carry. */
  comments: readonly NewCommentRow[];
}

/**
 * Moves a branch head only if it still points at `expectedHead` (git update-ref
 * semantics), and fails with BRANCH_MOVED otherwise. When the branch is the
 * default branch and the path, name, description or deletion differ from
 * `from` (the tree at `expectedHead`), the document row's mirror of them moves
 * with it.
 * `storing` objects (the new commits, their trees and section versions) are
 * inserted by the same statement, and only if the head moved: one statement,
 * atomic without a transaction, is the whole write of a batch of writes.
 */
export async function moveBranchHead(
  tx: Tx,
  input: {
    document: DocumentRow;
    branchName: string;
    expectedHead: string;
    newHead: string;
    from: DocumentTree;
    tree: DocumentTree;
    now: Date;
    storing?: NewObjects;
  },
): Promise<void> {
  const { from, tree } = input;
  const mirrored =
    from.path !== tree.path || from.name !== tree.name || from.description !== tree.description || from.deleted !== tree.deleted;
  const mirror = input.branchName === input.document.defaultBranch && mirrored;
  const now = input.now.toISOString();
  const objects = (map: ReadonlyMap<string, unknown>) => JSON.stringify([...map].map(([hash, body]) => ({ hash, body })));
  const storing = input.storing ?? { sections: new Map(), trees: new Map(), commits: [], comments: [] };
  let rows: Array<{ moved: number }>;
  try {
    rows = await queryRows<{ moved: number }>(
      tx,
      sql`
        WITH moved AS (
          UPDATE branches SET head_commit_id = ${input.newHead}::uuid, updated_at = ${now}::timestamptz
          WHERE document_id = ${input.document.id}::uuid AND name = ${input.branchName} AND head_commit_id = ${input.expectedHead}::uuid
          RETURNING name
        ), mirrored AS (
          UPDATE documents
          SET path = ${input.tree.path}, name = ${input.tree.name}, description = ${input.tree.description},
              deleted = ${input.tree.deleted}, updated_at = ${now}::timestamptz
          WHERE id = ${input.document.id}::uuid AND ${mirror}::boolean AND EXISTS (SELECT 1 FROM moved)
        ), stored_blobs AS (
          INSERT INTO blobs (hash, body)
          SELECT hash, body FROM json_populate_recordset(null::blobs, ${objects(storing.sections)}::json) WHERE EXISTS (SELECT 1 FROM moved)
          ON CONFLICT DO NOTHING
        ), stored_trees AS (
          INSERT INTO trees (hash, body)
          SELECT hash, body FROM json_populate_recordset(null::trees, ${objects(storing.trees)}::json) WHERE EXISTS (SELECT 1 FROM moved)
          ON CONFLICT DO NOTHING
        ), stored_commits AS (
          INSERT INTO commits (id, document_id, parent_ids, generation, tree_hash, message, author_id, kind, section_ids, created_at)
          SELECT id, document_id, parent_ids, generation, tree_hash, message, author_id, kind, section_ids, created_at
          FROM json_populate_recordset(null::commits, ${JSON.stringify(storing.commits.map(commitRow))}::json) WHERE EXISTS (SELECT 1 FROM moved)
        ), stored_comments AS (
          INSERT INTO comments (id, workspace_id, document_id, section_id, branch_name, author_id, body, mentions, created_at)
          SELECT id, workspace_id, document_id, section_id, branch_name, author_id, body, mentions, created_at
          FROM json_populate_recordset(null::comments, ${JSON.stringify(storing.comments.map(commentRow))}::json) WHERE EXISTS (SELECT 1 FROM moved)
        )
        SELECT (SELECT count(*) FROM moved)::int AS moved
      `,
    );
  } catch (error) {
    if (isUniqueViolation(error, LIVE_PATH_CONSTRAINT)) throw pathTaken(input.tree.path);
    throw error;
  }
  if (rows[0]?.moved !== 1) throw branchMoved(input.branchName);
  rememberObjects(storing.sections, storing.trees);
  rememberCommits(storing.commits);
}

/** A new comment as a row of the comments table, for json_populate_recordset. */
const commentRow = (c: NewCommentRow) => ({
  id: c.id,
  workspace_id: c.workspaceId,
  document_id: c.documentId,
  section_id: c.sectionId,
  branch_name: c.branchName,
  author_id: c.authorId,
  body: c.body,
  mentions: c.mentions,
  created_at: (c.createdAt ?? new Date()).toISOString(),
});

/** A commit as a row of the commits table, for json_populate_recordset. */
const commitRow = (c: CommitRecord) => ({
  id: c.id,
  document_id: c.documentId,
  parent_ids: c.parentIds,
  generation: c.generation,
  tree_hash: c.treeHash,
  message: c.message,
  author_id: c.authorId,
  kind: c.kind,
  section_ids: c.sectionIds,
  created_at: c.createdAt.toISOString(),
});
