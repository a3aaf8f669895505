/**
 * The `merge_requests` actions on reviews: approve, request_changes and reset
 * (a reviewer's verdict; an approval records the heads and the sections its
 * approver saw), and set_required_approvals (the document's merge rule). The
 * rule that judges approvals is merge-approvals.ts.
 */
import { z } from "zod";
import { DomainError } from "@/server/core/errors";
import type { Tx } from "@/server/store/db";
import { type MergeRequestRow, setRequiredApprovals, setReviewState } from "@/server/store/merge-requests";
import { type DocumentAccess, openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { assertOpen, expectedHeadFields, mergeRequestIdField, openMergeRequest, presentOne } from "./merge-request-view";
import { assertHeadsAsReviewed, reviewSnapshot } from "./merge-state";
import { notifyAuthor } from "./notification-events";
import { uuidSchema } from "./tool";

const MAX_REQUIRED_APPROVALS = 20;

const approveInput = z.strictObject({ action: z.literal("approve"), mergeRequestId: mergeRequestIdField, ...expectedHeadFields });
const requestChangesInput = z.strictObject({ action: z.literal("request_changes"), mergeRequestId: mergeRequestIdField });
const resetInput = z.strictObject({ action: z.literal("reset"), mergeRequestId: mergeRequestIdField });
const setRequiredApprovalsInput = z.strictObject({
  action: z.literal("set_required_approvals"),
  documentId: uuidSchema.describe("The document."),
  requiredApprovals: z
    .number()
    .int()
    .min(0)
    .max(MAX_REQUIRED_APPROVALS)
    .describe("Approvals each section a merge request brings needs; 0: none."),
});

/** The input schemas of these actions, in the order agents read them. */
export const reviewActionInputs = [approveInput, requestChangesInput, resetInput, setRequiredApprovalsInput] as const;

const REVIEW_STATES = { approve: "approved", request_changes: "changes_requested", reset: "pending" } as const;

function review(ctx: ActionContext, input: z.output<typeof approveInput | typeof requestChangesInput | typeof resetInput>) {
  return ctx.db.transaction(async (tx) => {
    const { row, access } = await openMergeRequest(tx, ctx, input.mergeRequestId, { forUpdate: true });
    assertOpen(row, "be reviewed");
    // An approval records what the approver was shown: both heads and the sections they could see.
    const approval = input.action === "approve" ? await approvalRecord(tx, row, access, input) : undefined;
    const state = REVIEW_STATES[input.action];
    const verdict = {
      state,
      reviewedAs: state === "pending" ? null : ctx.actor.principal,
      agent: state === "pending" ? null : ctx.actor.agent,
    };
    const recorded = await setReviewState(tx, row.id, ctx.actor.userId, verdict, ctx.clock(), approval);
    if (!recorded) {
      throw new DomainError(
        "PERMISSION_DENIED",
        `You are not a reviewer of merge request ${row.id}. Ask its author to add you (\`update\` with reviewerIds), then review.`,
        { mergeRequestId: row.id },
      );
    }
    if (state !== "pending") await notifyAuthor(tx, row, ctx.actor, state, ctx.clock());
    return presentOne(tx, row, access);
  });
}

async function approvalRecord(tx: Tx, row: MergeRequestRow, access: DocumentAccess, input: z.output<typeof approveInput>) {
  const { analysis, seen, sides } = await reviewSnapshot(tx, row, access);
  assertHeadsAsReviewed(
    row,
    analysis,
    { source: input.expectedSourceHeadCommitId, target: input.expectedTargetHeadCommitId },
    "approve what it shows now",
  );
  // An approval covers only what its approver saw; one that could cover nothing would only mislead.
  if (sides.brought.length > 0 && sides.brought.every((s) => s.hidden)) {
    throw new DomainError(
      "PERMISSION_DENIED",
      `You can see none of the sections merge request ${row.id} changes, so your approval would cover nothing. Ask someone who can see them to review it. Nothing was changed.`,
      { mergeRequestId: row.id },
    );
  }
  return { sourceHead: analysis.sourceHeadCommitId, targetHead: analysis.targetHeadCommitId, sections: seen };
}

/** Setting the document's merge rule is managing the document: its creator and workspace owners and admins, in person. */
function requiredApprovals(ctx: ActionContext, input: z.output<typeof setRequiredApprovalsInput>) {
  return ctx.db.transaction(async (tx) => {
    await openDocument(tx, ctx.actor, input.documentId, "manage");
    await setRequiredApprovals(tx, input.documentId, input.requiredApprovals);
    return { documentId: input.documentId, requiredApprovals: input.requiredApprovals };
  });
}

export const reviewHandlers = { approve: review, request_changes: review, reset: review, set_required_approvals: requiredApprovals };
