/**
 * The approval rule (DESIGN §6): which reviews count (a person's approval, not
 * the author's own; an agent's is shown and never counts), which sections an
 * approval covers (those its approver saw, as they saw them), when it goes
 * stale, and the refusal of a merge whose sections lack approvals.
 */
import type { ApprovedSection } from "@/db/schema";
import { DomainError } from "@/server/core/errors";
import type { DocumentTree } from "@/server/core/document-model";
import type { DocumentRow } from "@/server/store/documents";
import type { MergeRequestRow, ReviewerView } from "@/server/store/merge-requests";
import type { BranchSides, BroughtSection } from "./merge-state";

/** An approval can count when a person gave it (an agent's is shown, never counted) and it is not the author's own. */
function isPersonsApproval(row: MergeRequestRow, reviewer: ReviewerView): boolean {
  return reviewer.state === "approved" && reviewer.reviewedAs === "person" && reviewer.userId !== row.authorId;
}

/** An approval covers a section when its approver saw it, and saw it as it is now on both sides. */
function covers(reviewer: ReviewerView, section: BroughtSection): boolean {
  return (reviewer.approvedSections ?? []).some(
    (seen) => seen.sectionId === section.sectionId && seen.source === section.source && seen.target === section.target,
  );
}

interface ReviewCoverage {
  /** Each section the merge brings, with the people whose approval covers it; it needs a review while they are fewer than required. */
  sections: Array<{ section: BroughtSection; approvedBy: string[]; needsReview: boolean }>;
  /**
   * The fewest approvals covering any of those sections, and never more than the approvals that can count: a merge
   * that brings no section (only the document's own fields) still needs its approvals.
   */
  approvals: number;
}

/**
 * The review rule: a merge request is approved when every section it brings is covered by `requiredApprovals`
 * people's approvals. An approval covers only the sections its approver could see, at the versions they saw, so a
 * section added or changed since needs its own review.
 */
export function reviewCoverage(
  row: MergeRequestRow,
  document: DocumentRow,
  reviewers: ReviewerView[],
  sides: BranchSides | null,
): ReviewCoverage {
  const approvers = reviewers.filter((r) => isPersonsApproval(row, r));
  const sections = (sides?.brought ?? []).map((section) => {
    const approvedBy = approvers.filter((r) => covers(r, section)).map((r) => r.userId);
    return { section, approvedBy, needsReview: approvedBy.length < document.requiredApprovals };
  });
  return { sections, approvals: Math.min(approvers.length, ...sections.map((s) => s.approvedBy.length)) };
}

/** Whether a reviewer's approval no longer covers what it saw (false for any other review, and while the request is not open). */
export function isStale(reviewer: ReviewerView, sides: BranchSides | null): boolean {
  if (reviewer.state !== "approved" || sides === null || reviewer.approvedSourceHead === null || reviewer.approvedTargetHead === null)
    return false;
  return approvalIsStale(
    { sourceHead: reviewer.approvedSourceHead, targetHead: reviewer.approvedTargetHead, sections: reviewer.approvedSections ?? [] },
    sides,
  );
}

/**
 * The review rule: an approval is stale once a section the approver saw has another version on either branch than
 * when they approved (sections they did not see, new ones included, do not matter).
 */
function approvalIsStale(
  approved: { sourceHead: string; targetHead: string; sections: readonly ApprovedSection[] },
  now: BranchSides,
): boolean {
  if (approved.sourceHead === now.sourceHeadCommitId && approved.targetHead === now.targetHeadCommitId) return false;
  const hashes = (tree: DocumentTree) => new Map(tree.sections.map((e) => [e.sectionId, e.blobHash]));
  const [source, target] = [hashes(now.sourceTree), hashes(now.targetTree)];
  return approved.sections.some(
    (seen) => (source.get(seen.sectionId) ?? null) !== seen.source || (target.get(seen.sectionId) ?? null) !== seen.target,
  );
}

/**
 * The document's rule (reviewCoverage) on the heads being merged. The refusal names the sections still needing a
 * review that the caller may see and counts the others without naming them.
 */
export function assertApprovalsMet(row: MergeRequestRow, document: DocumentRow, reviewers: ReviewerView[], sides: BranchSides): void {
  const required = document.requiredApprovals;
  const coverage = reviewCoverage(row, document, reviewers, sides);
  if (coverage.approvals >= required) return;
  const short = coverage.sections.filter((s) => s.needsReview).map((s) => s.section);
  const named = short.filter((s) => !s.hidden);
  const hidden = short.length - named.length;
  const listed = [
    ...named.map((s) => `${JSON.stringify(s.name)} (${s.sectionId})`),
    ...(hidden > 0 ? [`${hidden} section(s) you may not see`] : []),
  ];
  throw new DomainError(
    "APPROVALS_REQUIRED",
    `Merge request ${row.id} is not approved: this document requires ${required} approval(s) from people of every section a merge brings, each given on the section as it is now; ${
      listed.length > 0 ? `still needing a review: ${listed.join(", ")}` : `it has ${coverage.approvals}`
    }. Ask reviewers who can see them to look at the current changes and approve, signed in: an approval made with an API token (an agent's) or by the author does not count. Nothing was changed.`,
    {
      mergeRequestId: row.id,
      requiredApprovals: required,
      approvals: coverage.approvals,
      sectionsNeedingReview: named.map((s) => s.sectionId),
      hiddenSectionsNeedingReview: hidden,
    },
  );
}
