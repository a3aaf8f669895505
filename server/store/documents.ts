/**
 * Documents and their branches: rows, paths, and moving a branch head by
 * compare-and-swap (writes on a branch go through branch-writes.ts).
 */
import { and, asc, eq, gt, inArray, like, ne } from "drizzle-orm";
import { branches, documentGrants, documents } from "@/db/schema";
import type { DocumentTree, Permission, SectionVersion } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import { type CommitRecord, insertCommit } from "./commits";
import { isUniqueViolation, type Tx } from "./db";
import { putSections, putTree } from "./objects";

export type DocumentRow = typeof documents.$inferSelect;
export type BranchRow = typeof branches.$inferSelect;

/** Every document starts with this branch, its default. */
export const DEFAULT_BRANCH = "main";

const LIVE_PATH_CONSTRAINT = "documents_live_path_uq";

function pathTaken(path: string): DomainError {
  return new DomainError(
    "PATH_TAKEN",
    `Another live document already has the path ${JSON.stringify(path)}. Choose a different path.`,
    { path },
  );
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

/** A document with the grant `userId` holds on it (one query: every call that opens a document runs it). */
export async function getDocumentWithGrant(
  tx: Tx,
  workspaceId: string,
  documentId: string,
  userId: string,
): Promise<{ document: DocumentRow; grant: Permission | null }> {
  const [row] = await tx
    .select({ document: documents, grant: documentGrants.permission })
    .from(documents)
    .leftJoin(documentGrants, and(eq(documentGrants.documentId, documents.id), eq(documentGrants.userId, userId)))
    .where(and(eq(documents.id, documentId), eq(documents.workspaceId, workspaceId)));
  if (!row) throw documentNotFound(documentId);
  return { document: row.document, grant: row.grant };
}

export interface DocumentListQuery {
  workspaceId: string;
  pathPrefix?: string;
  /** Exclusive lower bound on path (the cursor). */
  afterPath?: string;
  limit: number;
}

/** Live documents ordered by path. */
export async function listDocuments(tx: Tx, q: DocumentListQuery): Promise<DocumentRow[]> {
  const escapedPrefix = q.pathPrefix?.replace(/[\\%_]/g, (c) => `\\${c}`);
  return tx
    .select()
    .from(documents)
    .where(
      and(
        eq(documents.workspaceId, q.workspaceId),
        eq(documents.deleted, false),
        escapedPrefix === undefined ? undefined : like(documents.path, `${escapedPrefix}%`),
        q.afterPath === undefined ? undefined : gt(documents.path, q.afterPath),
      ),
    )
    .orderBy(asc(documents.path))
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
        inArray(documents.path, [...new Set(paths)]),
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
  const hashes = await putSections(tx, sections.map((s) => s.version));
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

export async function getBranch(tx: Tx, documentId: string, name: string, options: { forUpdate?: boolean } = {}) {
  const query = tx
    .select()
    .from(branches)
    .where(and(eq(branches.documentId, documentId), eq(branches.name, name)));
  const [row] = options.forUpdate ? await query.for("update") : await query;
  if (!row) {
    throw notFound("Branch", name, "Use `documents` action `list_branches` to see this document's branches.");
  }
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
    throw new DomainError("BRANCH_EXISTS", `Branch ${JSON.stringify(input.name)} already exists on this document. Pick another name or write to it.`, {
      branchName: input.name,
    });
  }
  return row;
}

/**
 * Moves a branch head only if it still points at `expectedHead` (git update-ref
 * semantics). When the branch is the default branch, the document row's mirror
 * of the head tree moves with it in the same transaction.
 */
export async function moveBranchHead(
  tx: Tx,
  input: { document: DocumentRow; branchName: string; expectedHead: string; newHead: string; tree: DocumentTree; now: Date },
): Promise<void> {
  const moved = await tx
    .update(branches)
    .set({ headCommitId: input.newHead, updatedAt: input.now })
    .where(
      and(
        eq(branches.documentId, input.document.id),
        eq(branches.name, input.branchName),
        eq(branches.headCommitId, input.expectedHead),
      ),
    )
    .returning({ name: branches.name });
  if (moved.length === 0) {
    throw new DomainError(
      "BRANCH_MOVED",
      `Branch ${JSON.stringify(input.branchName)} moved while this change was being written. Nothing was changed; read the branch again and retry.`,
      { branchName: input.branchName },
    );
  }
  if (input.branchName === input.document.defaultBranch) {
    try {
      await tx
        .update(documents)
        .set({
          path: input.tree.path,
          name: input.tree.name,
          description: input.tree.description,
          deleted: input.tree.deleted,
          updatedAt: input.now,
        })
        .where(eq(documents.id, input.document.id));
    } catch (error) {
      if (isUniqueViolation(error, LIVE_PATH_CONSTRAINT)) throw pathTaken(input.tree.path);
      throw error;
    }
  }
}
