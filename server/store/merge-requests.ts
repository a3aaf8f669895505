/** Merge request records and their reviewers. */
import { and, desc, eq, exists, lt, or, type SQL, sql } from "drizzle-orm";
import {
  type AgentIdentity,
  type ApprovedSection,
  branches,
  documentGrants,
  documents,
  mergeRequestReviewers,
  mergeRequests,
  type MergeRequestStatus,
  type ReviewPrincipal,
  type ReviewState,
  users,
} from "@/db/schema";
import type { Permission } from "@/server/core/document-model";
import { notFound } from "@/server/core/errors";
import { announceAccessChange } from "./access-cache";
import { anyOf, type Tx } from "./db";
import type { DocumentRow } from "./documents";

export type MergeRequestRow = typeof mergeRequests.$inferSelect;

export async function insertMergeRequest(tx: Tx, values: typeof mergeRequests.$inferInsert): Promise<MergeRequestRow> {
  const [row] = await tx.insert(mergeRequests).values(values).returning();
  return row!;
}

export const mergeRequestNotFound = (id: string) =>
  notFound("Merge request", id, "Use `merge_requests` action `list` to find merge requests.");

/**
 * A merge request of the workspace with its document and the grant `userId`
 * holds on it, in one query (every merge request action starts here); with
 * `forUpdate` the request row is locked.
 */
export async function getMergeRequestWithDocument(
  tx: Tx,
  workspaceId: string,
  id: string,
  userId: string,
  options: { forUpdate?: boolean } = {},
): Promise<{ row: MergeRequestRow; document: DocumentRow; grant: Permission | null }> {
  const query = tx
    .select({ row: mergeRequests, document: documents, grant: documentGrants.permission })
    .from(mergeRequests)
    .innerJoin(documents, eq(documents.id, mergeRequests.documentId))
    .leftJoin(documentGrants, and(eq(documentGrants.documentId, mergeRequests.documentId), eq(documentGrants.userId, userId)))
    .where(and(eq(mergeRequests.id, id), eq(mergeRequests.workspaceId, workspaceId)));
  const [found] = options.forUpdate ? await query.for("update", { of: mergeRequests }) : await query;
  if (!found) throw mergeRequestNotFound(id);
  return found;
}

export async function findOpenMergeRequest(tx: Tx, documentId: string, sourceBranch: string, targetBranch: string) {
  const [row] = await tx
    .select({ id: mergeRequests.id })
    .from(mergeRequests)
    .where(
      and(
        eq(mergeRequests.documentId, documentId),
        eq(mergeRequests.sourceBranch, sourceBranch),
        eq(mergeRequests.targetBranch, targetBranch),
        eq(mergeRequests.status, "open"),
      ),
    );
  return row;
}

export interface MergeRequestListQuery {
  workspaceId: string;
  documentId?: string;
  status?: MergeRequestStatus;
  authorId?: string;
  /**
   * Only requests where this user is a reviewer who has not given a verdict yet (state pending), or whose approval
   * of an open request was given on heads other than the branches' heads now: a candidate for a stale approval,
   * which the caller confirms by the approval rule (isStale), as only the trees tell.
   */
  awaitingReviewBy?: string;
  /** Keyset cursor: rows strictly older than this (createdAt, id). */
  before?: { createdAt: Date; id: string };
  limit: number;
}

/** Newest first. */
export async function listMergeRequests(tx: Tx, q: MergeRequestListQuery): Promise<MergeRequestRow[]> {
  const conditions: Array<SQL | undefined> = [
    eq(mergeRequests.workspaceId, q.workspaceId),
    q.documentId ? eq(mergeRequests.documentId, q.documentId) : undefined,
    q.status ? eq(mergeRequests.status, q.status) : undefined,
    q.authorId ? eq(mergeRequests.authorId, q.authorId) : undefined,
    q.awaitingReviewBy
      ? exists(
          tx
            .select({ one: sql`1` })
            .from(mergeRequestReviewers)
            .where(
              and(
                eq(mergeRequestReviewers.mergeRequestId, mergeRequests.id),
                eq(mergeRequestReviewers.userId, q.awaitingReviewBy),
                or(
                  eq(mergeRequestReviewers.state, "pending"),
                  and(
                    eq(mergeRequestReviewers.state, "approved"),
                    eq(mergeRequests.status, "open"),
                    or(
                      sql`${mergeRequestReviewers.approvedSourceHead} is distinct from (select ${branches.headCommitId} from ${branches} where ${branches.documentId} = ${mergeRequests.documentId} and ${branches.name} = ${mergeRequests.sourceBranch})`,
                      sql`${mergeRequestReviewers.approvedTargetHead} is distinct from (select ${branches.headCommitId} from ${branches} where ${branches.documentId} = ${mergeRequests.documentId} and ${branches.name} = ${mergeRequests.targetBranch})`,
                    ),
                  ),
                ),
              ),
            ),
        )
      : undefined,
    q.before
      ? or(
          lt(mergeRequests.createdAt, q.before.createdAt),
          and(eq(mergeRequests.createdAt, q.before.createdAt), lt(mergeRequests.id, q.before.id)),
        )
      : undefined,
  ];
  return tx
    .select()
    .from(mergeRequests)
    .where(and(...conditions))
    .orderBy(desc(mergeRequests.createdAt), desc(mergeRequests.id))
    .limit(q.limit);
}

export async function updateMergeRequest(tx: Tx, id: string, values: Partial<typeof mergeRequests.$inferInsert>): Promise<MergeRequestRow> {
  const [row] = await tx.update(mergeRequests).set(values).where(eq(mergeRequests.id, id)).returning();
  return row!;
}

export interface ReviewerView {
  userId: string;
  name: string;
  email: string;
  state: ReviewState;
  addedAt: Date;
  reviewedAt: Date | null;
  approvedSourceHead: string | null;
  approvedTargetHead: string | null;
  approvedSections: ApprovedSection[] | null;
  /** Who gave the verdict: a person, or an agent (API token) whose review is shown but never counts. */
  reviewedAs: ReviewPrincipal | null;
  /** Which agent gave the verdict when `reviewedAs` is agent. */
  agent: AgentIdentity | null;
}

export async function listReviewers(tx: Tx, mergeRequestIds: readonly string[]): Promise<Map<string, ReviewerView[]>> {
  const byRequest = new Map<string, ReviewerView[]>(mergeRequestIds.map((id) => [id, []]));
  if (mergeRequestIds.length === 0) return byRequest;
  const rows = await tx
    .select({
      mergeRequestId: mergeRequestReviewers.mergeRequestId,
      userId: mergeRequestReviewers.userId,
      name: users.name,
      email: users.email,
      state: mergeRequestReviewers.state,
      addedAt: mergeRequestReviewers.addedAt,
      reviewedAt: mergeRequestReviewers.reviewedAt,
      approvedSourceHead: mergeRequestReviewers.approvedSourceHead,
      approvedTargetHead: mergeRequestReviewers.approvedTargetHead,
      approvedSections: mergeRequestReviewers.approvedSections,
      reviewedAs: mergeRequestReviewers.reviewedAs,
      agent: mergeRequestReviewers.agent,
    })
    .from(mergeRequestReviewers)
    .innerJoin(users, eq(users.id, mergeRequestReviewers.userId))
    .where(anyOf(mergeRequestReviewers.mergeRequestId, [...mergeRequestIds]))
    .orderBy(mergeRequestReviewers.addedAt, users.name);
  for (const { mergeRequestId, ...reviewer } of rows) byRequest.get(mergeRequestId)!.push(reviewer);
  return byRequest;
}

export async function addReviewers(tx: Tx, mergeRequestId: string, userIds: readonly string[], now: Date): Promise<void> {
  if (userIds.length === 0) return;
  await tx
    .insert(mergeRequestReviewers)
    .values(userIds.map((userId) => ({ mergeRequestId, userId, addedAt: now })))
    .onConflictDoNothing();
}

export async function removeReviewers(tx: Tx, mergeRequestId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await tx
    .delete(mergeRequestReviewers)
    .where(and(eq(mergeRequestReviewers.mergeRequestId, mergeRequestId), anyOf(mergeRequestReviewers.userId, [...userIds])));
}

/** What an approval was given on; absent for any other verdict. */
export interface ApprovalRecord {
  sourceHead: string;
  targetHead: string;
  sections: ApprovedSection[];
}

/**
 * Records a reviewer's verdict, who gave it (`reviewedAs`, null when withdrawn) and what an approval saw; returns
 * false when the user is not a reviewer of the request.
 */
export async function setReviewState(
  tx: Tx,
  mergeRequestId: string,
  userId: string,
  verdict: { state: ReviewState; reviewedAs: ReviewPrincipal | null; agent: AgentIdentity | null },
  now: Date,
  approval?: ApprovalRecord,
): Promise<boolean> {
  const rows = await tx
    .update(mergeRequestReviewers)
    .set({
      state: verdict.state,
      reviewedAs: verdict.reviewedAs,
      agent: verdict.agent,
      reviewedAt: now,
      approvedSourceHead: approval?.sourceHead ?? null,
      approvedTargetHead: approval?.targetHead ?? null,
      approvedSections: approval?.sections ?? null,
    })
    .where(and(eq(mergeRequestReviewers.mergeRequestId, mergeRequestId), eq(mergeRequestReviewers.userId, userId)))
    .returning({ userId: mergeRequestReviewers.userId });
  return rows.length > 0;
}

/**
 * The document's merge rule: how many approvals a merge request needs before it may be executed. Document rows are
 * cached with their permission settings, so the change is announced like an access change.
 */
export async function setRequiredApprovals(tx: Tx, documentId: string, requiredApprovals: number): Promise<void> {
  await tx.update(documents).set({ requiredApprovals }).where(eq(documents.id, documentId));
  await announceAccessChange(tx);
}
