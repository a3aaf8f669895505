/**
 * The `merge_requests` tool (spec §2.6–2.8, §3, §4.2): list, get, create,
 * analyze, execute, close and update here; the reviews (approve,
 * request_changes, reset, set_required_approvals) in merge-request-reviews.ts.
 * A request is opened and shown by merge-request-view.ts; its merge is read
 * by merge-state.ts (the pure engine in server/core does the analysis) and
 * carried out by merge-execution.ts.
 */
import { z } from "zod";
import { DomainError, isDomainError } from "@/server/core/errors";
import { branchNameSchema, commitMessageSchema, descriptionSchema, documentPathSchema } from "@/server/core/names";
import { contentSchema } from "@/server/core/blocks";
import { passedBack, shownElsewhere } from "@/server/core/schema-listing";
import { getMembership, nonMembers } from "@/server/store/accounts";
import type { Tx } from "@/server/store/db";
import { CommitGraph, isAncestor } from "@/server/store/commits";
import { mergeRequestsInOpenChangesets } from "@/server/store/changesets";
import { getBranch } from "@/server/store/documents";
import {
  addReviewers,
  findOpenMergeRequest,
  insertMergeRequest,
  listMergeRequests,
  listReviewers,
  type MergeRequestRow,
  removeReviewers,
  updateMergeRequest,
} from "@/server/store/merge-requests";
import { accessFor, atLeastEdit, type DocumentAccess, openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { assertApprovalsMet, isStale } from "./merge-approvals";
import { assertMayProposeMerge, executeMerge, type MergeExecution } from "./merge-execution";
import { reviewActionInputs, reviewHandlers } from "./merge-request-reviews";
import {
  assertOpen,
  expectedHeadFields,
  mergeRequestIdField,
  proposalsField,
  openMergeRequest,
  present,
  presentOne,
  sidesIfOpen,
} from "./merge-request-view";
import { analyzeMergeRequest, type MergeAnalysisView } from "./merge-state";
import { notifyAuthor, notifyRequestOpened, notifyReviewRequested } from "./notification-events";
import { cursorSchema, DEFAULT_PAGE_SIZE, decodeCursor, defineTool, encodeCursor, pageLimitSchema, uuidSchema, visiblePage } from "./tool";

export const sideSchema = z.enum(["source", "target"]);

const f = {
  title: z.string().trim().min(1, "title must not be empty").max(300),
  reviewerIds: z.array(uuidSchema).max(50).describe("Reviewers' user ids (`members`)."),
};

export const sectionResolutionSchema = z.discriminatedUnion("resolution", [
  z.strictObject({
    sectionId: uuidSchema.describe("A section in conflict."),
    resolution: sideSchema.describe("source or target: that side's version (a deletion too)."),
  }),
  z.strictObject({
    sectionId: uuidSchema.describe("A section in conflict."),
    resolution: z
      .literal("merged")
      .describe("merged: the section becomes your `content` (and `name`), e.g. analyze's proposedMerge.text without its markers."),
    content: shownElsewhere(contentSchema, "With merged: content blocks, as `sections` takes them."),
    name: z.string().trim().min(1).max(300).optional().describe("With merged: the name."),
  }),
]);

export const mergeRequestsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("list"),
    documentId: uuidSchema.optional().describe("The document."),
    status: z.enum(["open", "merged", "closed"]).optional().describe("Only requests in this state."),
    authorId: uuidSchema.optional().describe("Only by this author."),
    awaitingReviewBy: uuidSchema.optional().describe("Only requests awaiting this user's review."),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({ action: z.literal("get"), mergeRequestId: mergeRequestIdField }),
  z.strictObject({
    action: z.literal("create"),
    documentId: uuidSchema.describe("The document."),
    sourceBranch: passedBack(branchNameSchema).describe("Branch merged from."),
    targetBranch: passedBack(branchNameSchema).describe("Branch merged into (usually main)."),
    title: f.title,
    description: descriptionSchema.optional().describe("What the change is and why."),
    reviewerIds: f.reviewerIds.optional(),
  }),
  z.strictObject({ action: z.literal("analyze"), mergeRequestId: mergeRequestIdField, proposals: proposalsField }),
  z.strictObject({
    action: z.literal("execute"),
    mergeRequestId: mergeRequestIdField,
    resolutions: z.array(sectionResolutionSchema).max(10_000).optional().describe("One per conflicting section."),
    tagResolution: sideSchema.optional().describe("Which side's tags win."),
    scalarPropertyResolutions: z.record(uuidSchema, sideSchema).optional().describe("Column id -> source | target."),
    resolvedPath: documentPathSchema.optional().describe("Path on a collision."),
    documentDeletionResolution: z.enum(["delete", "keep"]).optional().describe("When one side deleted it."),
    commitMessage: commitMessageSchema.optional().describe("Commit message; default: generated (COMMIT_MESSAGE_TOO_LONG: give one)."),
    ...expectedHeadFields,
  }),
  z.strictObject({ action: z.literal("close"), mergeRequestId: mergeRequestIdField }),
  z.strictObject({
    action: z.literal("update"),
    mergeRequestId: mergeRequestIdField,
    newTitle: f.title.optional().describe("New title."),
    newDescription: descriptionSchema.nullable().optional().describe("null clears it."),
    reviewerIds: f.reviewerIds.optional(),
    removeReviewerIds: z.array(uuidSchema).max(50).optional().describe("Reviewers to remove."),
  }),
  ...reviewActionInputs,
]);

type MergeRequestsInput = z.infer<typeof mergeRequestsInput>;
type ActionInput<A extends MergeRequestsInput["action"]> = Extract<MergeRequestsInput, { action: A }>;

async function assertMembers(tx: Tx, workspaceId: string, userIds: readonly string[]): Promise<void> {
  const strangers = await nonMembers(tx, workspaceId, userIds);
  if (strangers.length > 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `reviewerIds ${strangers.join(", ")} are not members of this workspace. Find member ids with the \`members\` tool.`,
      { issues: [{ path: "reviewerIds", message: "not a workspace member" }], userIds: strangers },
    );
  }
}

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const cursorSchema = z.object({ createdAt: z.string().datetime(), id: uuidSchema });
  const start = input.cursor ? decodeCursor(input.cursor, cursorSchema) : undefined;
  if (input.documentId) await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const readable = new Map<string, Promise<DocumentAccess | null>>();
  const page = await visiblePage({
    limit: input.limit ?? DEFAULT_PAGE_SIZE,
    start,
    fetch: (after, batchSize) =>
      listMergeRequests(ctx.db, {
        workspaceId: ctx.actor.workspaceId,
        documentId: input.documentId,
        status: input.status,
        authorId: input.authorId,
        awaitingReviewBy: input.awaitingReviewBy,
        before: after ? { createdAt: new Date(after.createdAt), id: after.id } : undefined,
        limit: batchSize,
      }),
    // Requests on documents the caller may not read are left out; so is an approval that only looked stale.
    visible: async (row) => {
      if (!readable.has(row.documentId)) readable.set(row.documentId, readableAccess(ctx, row.documentId));
      const access = await readable.get(row.documentId)!;
      if (access === null) return false;
      return input.awaitingReviewBy === undefined || awaitsReview(ctx, row, access, input.awaitingReviewBy);
    },
    position: (row) => ({ createdAt: row.createdAt.toISOString(), id: row.id }),
  });
  const reviewers = await listReviewers(
    ctx.db,
    page.rows.map((r) => r.id),
  );
  const mergeRequests = await Promise.all(
    page.rows.map(async (r) => {
      const access = (await readable.get(r.documentId))!;
      return present(r, reviewers.get(r.id)!, access.document, await sidesIfOpen(ctx.db, r, access));
    }),
  );
  return { mergeRequests, nextCursor: page.next ? encodeCursor(page.next) : null };
}

/** Whether `userId` has yet to review the request: no verdict yet, or an approval gone stale (the approval rule's isStale). */
async function awaitsReview(ctx: ActionContext, row: MergeRequestRow, access: DocumentAccess, userId: string): Promise<boolean> {
  const reviewer = (await listReviewers(ctx.db, [row.id])).get(row.id)!.find((r) => r.userId === userId);
  if (!reviewer) return false;
  if (reviewer.state === "pending") return true;
  return reviewer.state === "approved" && isStale(reviewer, await sidesIfOpen(ctx.db, row, access));
}

/** The caller's access to the document when they may read it, else null. */
async function readableAccess(ctx: ActionContext, documentId: string): Promise<DocumentAccess | null> {
  try {
    return await openDocument(ctx.db, ctx.actor, documentId, "read");
  } catch (error) {
    if (isDomainError(error) && error.code === "NOT_FOUND") return null;
    throw error;
  }
}

/**
 * Closing, retitling and managing reviewers is for the document's editors and
 * the request's author — in person: an agent (API token) needs edit like any other write.
 */
function requireAuthorOrEditor(ctx: ActionContext, row: MergeRequestRow, access: DocumentAccess): void {
  const isAuthor = row.authorId === ctx.actor.userId;
  if (!(isAuthor && ctx.actor.principal === "person") && !atLeastEdit(access)) {
    const message = isAuthor
      ? `You wrote merge request ${row.id}, but an API token acts as an agent, and an agent may change it only with edit access to the document. Sign in to do this.`
      : `Only the author of merge request ${row.id} or someone who can edit the document can change it.`;
    throw new DomainError("PERMISSION_DENIED", message, { mergeRequestId: row.id });
  }
}

/** Reviewers must be members who can read the document. */
async function assertReviewers(tx: Tx, ctx: ActionContext, access: DocumentAccess, userIds: readonly string[]): Promise<void> {
  await assertMembers(tx, ctx.actor.workspaceId, userIds);
  for (const userId of new Set(userIds)) {
    const membership = await getMembership(tx, userId);
    const reviewerAccess = await accessFor(tx, access.document, { kind: "member", userId, role: membership!.role, principal: "person" });
    if (reviewerAccess.permission === "none") {
      throw new DomainError(
        "VALIDATION_FAILED",
        `Reviewer ${userId} cannot read this document. Grant them access first (documents set_permissions).`,
        {
          issues: [{ path: "reviewerIds", message: "reviewer cannot read the document" }],
          userIds: [userId],
        },
      );
    }
  }
}

async function get(ctx: ActionContext, input: ActionInput<"get">) {
  const { row, access } = await openMergeRequest(ctx.db, ctx, input.mergeRequestId);
  return presentOne(ctx.db, row, access);
}

function create(ctx: ActionContext, input: ActionInput<"create">) {
  return ctx.db.transaction(async (tx) => {
    const access = await openDocument(tx, ctx.actor, input.documentId, "read");
    return presentOne(tx, await proposeMerge(tx, ctx, access, input), access);
  });
}

/** Opens a merge request on the document in the caller's transaction: `create`, and each document a changeset gathers. */
export async function proposeMerge(
  tx: Tx,
  ctx: ActionContext,
  access: DocumentAccess,
  input: Omit<ActionInput<"create">, "action" | "documentId">,
): Promise<MergeRequestRow> {
  const { document } = access;
  if (input.sourceBranch === input.targetBranch) {
    throw new DomainError(
      "VALIDATION_FAILED",
      "sourceBranch and targetBranch must differ: a merge request brings one branch into another.",
      {
        issues: [{ path: "targetBranch", message: "same as sourceBranch" }],
      },
    );
  }
  const source = await getBranch(tx, document.id, input.sourceBranch);
  const target = await getBranch(tx, document.id, input.targetBranch);
  // A request that brings nothing could only be closed; say so now rather than at execute.
  if (await isAncestor(new CommitGraph(tx, document.id), source.headCommitId, target.headCommitId)) {
    throw new DomainError(
      "NOTHING_TO_MERGE",
      `Nothing to merge: branch ${JSON.stringify(input.targetBranch)} already contains every commit of ${JSON.stringify(input.sourceBranch)}. Commit to ${JSON.stringify(input.sourceBranch)} first, then open the request.`,
      { sourceBranch: input.sourceBranch, targetBranch: input.targetBranch },
    );
  }
  const existing = await findOpenMergeRequest(tx, document.id, input.sourceBranch, input.targetBranch);
  if (existing) {
    throw new DomainError(
      "MERGE_REQUEST_EXISTS",
      `Merge request ${existing.id} already proposes ${input.sourceBranch} -> ${input.targetBranch} and is open. Update or close it instead of opening another.`,
      { mergeRequestId: existing.id },
    );
  }
  await assertReviewers(tx, ctx, access, input.reviewerIds ?? []);
  const now = ctx.clock();
  const row = await insertMergeRequest(tx, {
    workspaceId: ctx.actor.workspaceId,
    documentId: document.id,
    sourceBranch: input.sourceBranch,
    targetBranch: input.targetBranch,
    title: input.title,
    description: input.description ?? null,
    authorId: ctx.actor.userId,
    agent: ctx.actor.agent,
    createdAt: now,
    updatedAt: now,
  });
  await addReviewers(tx, row.id, input.reviewerIds ?? [], now);
  await assertMayProposeMerge(tx, row, access);
  await notifyRequestOpened(tx, row, ctx.actor, input.reviewerIds ?? [], now);
  return row;
}

async function analyze(ctx: ActionContext, input: ActionInput<"analyze">): Promise<MergeAnalysisView> {
  const { row, access } = await openMergeRequest(ctx.db, ctx, input.mergeRequestId);
  return analyzeMergeRequest(ctx.db, row, access, { proposals: input.proposals });
}

function execute(ctx: ActionContext, input: ActionInput<"execute">): Promise<MergeExecution> {
  return ctx.db.transaction(async (tx) => {
    // Lock order everywhere: merge request row, then branch row.
    const { row, access } = await openMergeRequest(tx, ctx, input.mergeRequestId, { forUpdate: true });
    // An item of an open changeset merges with the changeset's other documents, never alone: main is not left half-changed.
    const changesetId = (await mergeRequestsInOpenChangesets(tx, [row.id])).get(row.id);
    if (changesetId) {
      throw new DomainError(
        "MERGE_REQUEST_IN_CHANGESET",
        `Merge request ${row.id} is an item of open changeset ${changesetId}, so it merges with that changeset's other documents (\`changesets\` action \`execute\`), or alone once removed from it (\`remove_items\`). Nothing was changed.`,
        { mergeRequestId: row.id, changesetId },
      );
    }
    return mergeLockedRequest(tx, ctx, row, access, input);
  });
}

/** Merges an open request in the caller's transaction, which holds its row locked: `execute`, and each item of a changeset's. */
export async function mergeLockedRequest(
  tx: Tx,
  ctx: ActionContext,
  row: MergeRequestRow,
  access: DocumentAccess,
  input: Omit<ActionInput<"execute">, "action" | "mergeRequestId">,
): Promise<MergeExecution> {
  assertOpen(row, "be merged");
  const reviewers = (await listReviewers(tx, [row.id])).get(row.id)!;
  const { mergedOntoCommitId, ...execution } = await executeMerge(tx, row, access, {
    authorId: ctx.actor.userId,
    agent: ctx.actor.agent,
    now: ctx.clock(),
    expectedHeads: { source: input.expectedSourceHeadCommitId, target: input.expectedTargetHeadCommitId },
    assertMayMerge: (sides) => assertApprovalsMet(row, access.document, reviewers, sides),
    resolutions: {
      sections: Object.fromEntries(
        (input.resolutions ?? []).map((r) => [
          r.sectionId,
          r.resolution === "merged" ? { content: r.content, name: r.name } : r.resolution,
        ]),
      ),
      tagResolution: input.tagResolution,
      scalarPropertyResolutions: input.scalarPropertyResolutions,
      resolvedPath: input.resolvedPath,
      documentDeletionResolution: input.documentDeletionResolution,
    },
    commitMessage: input.commitMessage,
  });
  await updateMergeRequest(tx, row.id, {
    status: "merged",
    mergedAt: ctx.clock(),
    mergedBy: ctx.actor.userId,
    mergeCommitId: execution.mergeCommitId,
    mergedOntoCommitId,
    updatedAt: ctx.clock(),
  });
  await notifyAuthor(tx, row, ctx.actor, "merged", ctx.clock());
  return execution;
}

function close(ctx: ActionContext, input: ActionInput<"close">) {
  return ctx.db.transaction(async (tx) => {
    const { row, access } = await openMergeRequest(tx, ctx, input.mergeRequestId, { forUpdate: true });
    assertOpen(row, "be closed");
    requireAuthorOrEditor(ctx, row, access);
    const now = ctx.clock();
    const closed = await updateMergeRequest(tx, row.id, { status: "closed", closedAt: now, closedBy: ctx.actor.userId, updatedAt: now });
    await notifyAuthor(tx, row, ctx.actor, "closed", now);
    return presentOne(tx, closed, access);
  });
}

function update(ctx: ActionContext, input: ActionInput<"update">) {
  if (
    input.newTitle === undefined &&
    input.newDescription === undefined &&
    input.reviewerIds === undefined &&
    input.removeReviewerIds === undefined
  ) {
    throw new DomainError("VALIDATION_FAILED", "Nothing to update: give newTitle, newDescription, reviewerIds and/or removeReviewerIds.", {
      issues: [{ path: "", message: "nothing to update" }],
    });
  }
  return ctx.db.transaction(async (tx) => {
    const { row, access } = await openMergeRequest(tx, ctx, input.mergeRequestId, { forUpdate: true });
    assertOpen(row, "be updated");
    requireAuthorOrEditor(ctx, row, access);
    const now = ctx.clock();
    await assertReviewers(tx, ctx, access, input.reviewerIds ?? []);
    const reviewersBefore = new Set(((await listReviewers(tx, [row.id])).get(row.id) ?? []).map((r) => r.userId));
    await addReviewers(tx, row.id, input.reviewerIds ?? [], now);
    await removeReviewers(tx, row.id, input.removeReviewerIds ?? []);
    const removed = new Set(input.removeReviewerIds ?? []);
    const added = (input.reviewerIds ?? []).filter((id) => !reviewersBefore.has(id) && !removed.has(id));
    await notifyReviewRequested(tx, row, ctx.actor.userId, added, now);
    const updated = await updateMergeRequest(tx, row.id, {
      ...(input.newTitle !== undefined ? { title: input.newTitle } : {}),
      ...(input.newDescription !== undefined ? { description: input.newDescription } : {}),
      updatedAt: now,
    });
    return presentOne(tx, updated, access);
  });
}

export const mergeRequestsTool = defineTool({
  name: "merge_requests",
  // What an agent needs before calling; what to do after a refusal its error's message says.
  description: [
    "Merge one branch of a document into another: create, analyze (diffs and conflicts), execute with a resolution per conflict.",
    "A target without own commits is fast-forwarded. set_required_approvals: creator and admins, signed in.",
    "An approval covers the sections its reviewer saw, as they were; only people's count, not the author's. With requiredApprovals above 0, execute needs them on every section.",
    "An agent's execute that would change access is refused.",
  ].join("\n"),
  input: mergeRequestsInput,
  readOnly: false,
  handlers: {
    list,
    get,
    create,
    analyze,
    execute,
    close,
    update,
    ...reviewHandlers,
  },
});
