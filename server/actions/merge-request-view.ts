/**
 * A merge request as every `merge_requests` action opens and shows it: the
 * fields that name one, loading one the caller may see (NOT_FOUND otherwise,
 * like a missing id), the refusal to change a merged or closed one, and
 * its view, with its reviews judged by the approval rule on the branches as
 * they are now.
 */
import { z } from "zod";
import type { MergeRequestStatus, ReviewPrincipal, ReviewState } from "@/db/schema";
import { DomainError, isDomainError } from "@/server/core/errors";
import type { Tx } from "@/server/store/db";
import type { DocumentRow } from "@/server/store/documents";
import {
  getMergeRequestWithDocument,
  listReviewers,
  type MergeRequestRow,
  mergeRequestNotFound,
  type ReviewerView,
} from "@/server/store/merge-requests";
import { admitActor, type DocumentAccess } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { isStale, reviewCoverage } from "./merge-approvals";
import { type BranchSides, branchSides } from "./merge-state";
import { uuidSchema } from "./tool";

export const mergeRequestIdField = uuidSchema;
/** analyze's opt-in: each conflicting section's proposedMerge (merge_requests and changesets alike). */
export const proposalsField = z.boolean().optional().describe("Add each conflict's proposedMerge.");

/** The heads a caller reviewed, for the actions that must not act on anything else. */
export const expectedHeadFields = {
  expectedSourceHeadCommitId: uuidSchema.optional().describe("analyze's sourceHeadCommitId (moved: BRANCH_MOVED)."),
  expectedTargetHeadCommitId: uuidSchema.optional().describe("analyze's targetHeadCommitId (moved: BRANCH_MOVED)."),
};

export interface MergeRequestView {
  mergeRequestId: string;
  documentId: string;
  sourceBranch: string;
  targetBranch: string;
  title: string;
  description: string | null;
  status: MergeRequestStatus;
  authorId: string;
  /** The agent that opened the request for its author; null when the author did. */
  agentName: string | null;
  createdAt: string;
  updatedAt: string;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommitId: string | null;
  /** Where the target stood before the merge (its changes are this commit against mergeCommitId); null while open and for requests merged before it was recorded. */
  mergedOntoCommitId: string | null;
  closedAt: string | null;
  reviewers: Array<{
    userId: string;
    name: string;
    email: string;
    state: ReviewState;
    reviewedAt: string | null;
    /** An approval given before a section it saw changed on either branch: it no longer covers that section. */
    stale: boolean;
    /** The heads an approval was given on (null unless approved). */
    approvedSourceHeadCommitId: string | null;
    approvedTargetHeadCommitId: string | null;
    /** Who gave the review: a person, or an agent (API token), whose review is shown and never counts. Null while pending. */
    reviewedAs: ReviewPrincipal | null;
    /** Which agent gave the review when reviewedAs is agent. */
    agentName: string | null;
  }>;
  /** The document's rule: approvals needed before execute (0 = none), for every section the request brings. */
  requiredApprovals: number;
  /** The fewest approvals that count on any section the request brings (see reviewCoverage); execute needs requiredApprovals. */
  approvals: number;
  /** Each section the request brings that the caller may see, with the people whose approval covers it (open requests only). */
  sectionReviews: Array<{ sectionId: string; name: string; approvedBy: string[]; needsReview: boolean }>;
  /** Sections the request brings that the caller may not see and that still need a review. */
  hiddenSectionsNeedingReview: number;
}

/** Reviews are judged on the branches as they are now, for open requests only (a merged request's approvals are history). */
export async function sidesIfOpen(tx: Tx, row: MergeRequestRow, access: DocumentAccess): Promise<BranchSides | null> {
  return row.status === "open" ? branchSides(tx, row, access) : null;
}

export function present(
  row: MergeRequestRow,
  reviewers: ReviewerView[],
  document: DocumentRow,
  sides: BranchSides | null,
): MergeRequestView {
  const coverage = reviewCoverage(row, document, reviewers, sides);
  return {
    mergeRequestId: row.id,
    documentId: row.documentId,
    sourceBranch: row.sourceBranch,
    targetBranch: row.targetBranch,
    title: row.title,
    description: row.description,
    status: row.status,
    authorId: row.authorId,
    agentName: row.agent?.name ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    mergedAt: row.mergedAt?.toISOString() ?? null,
    mergedBy: row.mergedBy,
    mergeCommitId: row.mergeCommitId,
    mergedOntoCommitId: row.mergedOntoCommitId,
    closedAt: row.closedAt?.toISOString() ?? null,
    reviewers: reviewers.map((r) => ({
      userId: r.userId,
      name: r.name,
      email: r.email,
      state: r.state,
      reviewedAt: r.reviewedAt?.toISOString() ?? null,
      stale: isStale(r, sides),
      approvedSourceHeadCommitId: r.approvedSourceHead,
      approvedTargetHeadCommitId: r.approvedTargetHead,
      reviewedAs: r.reviewedAs,
      agentName: r.agent?.name ?? null,
    })),
    requiredApprovals: document.requiredApprovals,
    approvals: coverage.approvals,
    sectionReviews: coverage.sections
      .filter(({ section }) => !section.hidden)
      .map(({ section, approvedBy, needsReview }) => ({ sectionId: section.sectionId, name: section.name, approvedBy, needsReview })),
    hiddenSectionsNeedingReview: coverage.sections.filter(({ section, needsReview }) => section.hidden && needsReview).length,
  };
}

export async function presentOne(tx: Tx, row: MergeRequestRow, access: DocumentAccess): Promise<MergeRequestView> {
  const reviewers = (await listReviewers(tx, [row.id])).get(row.id)!;
  return present(row, reviewers, access.document, await sidesIfOpen(tx, row, access));
}

/** Merged and closed requests are final. */
export function assertOpen(row: MergeRequestRow, doing: string): void {
  if (row.status !== "open") {
    const when = row.status === "merged" ? `merged${row.mergedAt ? ` at ${row.mergedAt.toISOString()}` : ""}` : "closed";
    throw new DomainError(
      "MERGE_REQUEST_NOT_OPEN",
      `Merge request ${row.id} is already ${when}, so it cannot ${doing}. Merged and closed requests are final; create a new merge request to merge further changes.`,
      { mergeRequestId: row.id, status: row.status },
    );
  }
}

/** Loads a merge request the caller may see: one on a document they can read (else NOT_FOUND, like a missing id). */
export async function openMergeRequest(tx: Tx, ctx: ActionContext, mergeRequestId: string, options: { forUpdate?: boolean } = {}) {
  const { row, document, grant } = await getMergeRequestWithDocument(tx, ctx.actor.workspaceId, mergeRequestId, ctx.actor.userId, options);
  try {
    return { row, access: admitActor(ctx.actor, row.documentId, { document, grants: new Map([[ctx.actor.userId, grant]]) }, "read") };
  } catch (error) {
    if (isDomainError(error) && error.code === "NOT_FOUND") throw mergeRequestNotFound(mergeRequestId);
    throw error;
  }
}
