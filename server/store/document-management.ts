/**
 * Managing documents and branches: deleted documents as a list, and deleting a
 * branch with its draft. A document's deletion and restoration are commits
 * (commit-to-branch.ts); only a branch's removal is not a head move.
 */
import { and, desc, eq, getTableColumns, like, lt, or } from "drizzle-orm";
import { branches, commits, draftAgentEditors, draftSections, drafts, draftUpdates, documents, mergeRequests, users } from "@/db/schema";
import type { Tx } from "./db";
import type { DocumentRow } from "./documents";
import type { DraftKey } from "./drafts";

/** Where a page of deleted documents resumes: after this (deletion time, id), newest first. */
export interface DeletedListPosition {
  deletedAt: Date;
  documentId: string;
}

/** A deleted document with the commit its default branch points at (the deletion, unless something merged after it). */
export type DeletedDocument = DocumentRow & {
  deletedAt: Date;
  headCommitId: string;
  deletedById: string;
  deletedByName: string | null;
};

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Documents of the workspace deleted on their default branch, most recently deleted first (callers filter by access). */
export async function listDeletedDocuments(
  tx: Tx,
  q: { workspaceId: string; pathPrefix?: string; after?: DeletedListPosition; limit: number },
): Promise<DeletedDocument[]> {
  const { after } = q;
  return tx
    .select({
      ...getTableColumns(documents),
      deletedAt: branches.updatedAt,
      headCommitId: branches.headCommitId,
      deletedById: commits.authorId,
      deletedByName: users.name,
    })
    .from(documents)
    .innerJoin(branches, and(eq(branches.documentId, documents.id), eq(branches.name, documents.defaultBranch)))
    .innerJoin(commits, eq(commits.id, branches.headCommitId))
    .leftJoin(users, eq(users.id, commits.authorId))
    .where(
      and(
        eq(documents.workspaceId, q.workspaceId),
        eq(documents.deleted, true),
        q.pathPrefix === undefined ? undefined : like(documents.path, `${escapeLike(q.pathPrefix)}%`),
        after === undefined
          ? undefined
          : or(lt(branches.updatedAt, after.deletedAt), and(eq(branches.updatedAt, after.deletedAt), lt(documents.id, after.documentId))),
      ),
    )
    .orderBy(desc(branches.updatedAt), desc(documents.id))
    .limit(q.limit);
}

/** Open merge requests that have the branch as their source or target. */
export async function openMergeRequestsOn(tx: Tx, key: DraftKey): Promise<Array<{ id: string; title: string }>> {
  return tx
    .select({ id: mergeRequests.id, title: mergeRequests.title })
    .from(mergeRequests)
    .where(
      and(
        eq(mergeRequests.documentId, key.documentId),
        eq(mergeRequests.status, "open"),
        or(eq(mergeRequests.sourceBranch, key.branchName), eq(mergeRequests.targetBranch, key.branchName)),
      ),
    );
}

/** Removes a branch's draft: its base, its sections' states and its update log. */
export async function deleteDraft(tx: Tx, key: DraftKey): Promise<void> {
  await tx
    .delete(draftAgentEditors)
    .where(and(eq(draftAgentEditors.documentId, key.documentId), eq(draftAgentEditors.branchName, key.branchName)));
  await tx.delete(draftUpdates).where(and(eq(draftUpdates.documentId, key.documentId), eq(draftUpdates.branchName, key.branchName)));
  await tx.delete(draftSections).where(and(eq(draftSections.documentId, key.documentId), eq(draftSections.branchName, key.branchName)));
  await tx.delete(drafts).where(and(eq(drafts.documentId, key.documentId), eq(drafts.branchName, key.branchName)));
}

/** Removes a branch row (its commits stay: history and merge requests still name them). */
export async function deleteBranchRow(tx: Tx, key: DraftKey): Promise<void> {
  await tx.delete(branches).where(and(eq(branches.documentId, key.documentId), eq(branches.name, key.branchName)));
}
