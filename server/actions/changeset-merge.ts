/**
 * The `changesets` actions that act on every item at once: analyze (each
 * item's merge request analysed, with totals), approve / request_changes (the
 * caller's review on each item they review, as merge_requests records it) and
 * execute (every item merged in one transaction, or none).
 */
import { z } from "zod";
import { DomainError, type ErrorCode, isDomainError } from "@/server/core/errors";
import { commitMessageSchema, documentPathSchema } from "@/server/core/names";
import { type ChangesetRow, getChangeset, updateChangeset } from "@/server/store/changesets";
import { getBranch } from "@/server/store/documents";
import type { ActionContext } from "./context";
import type { MergeExecution } from "./merge-execution";
import { reviewHandlers } from "./merge-request-reviews";
import { presentOne, proposalsField } from "./merge-request-view";
import { mergeLockedRequest, sectionResolutionSchema, sideSchema } from "./merge-requests";
import { shownElsewhere } from "@/server/core/schema-listing";
import { analyzeMergeRequest, type MergeAnalysisView } from "./merge-state";
import {
  assertChangesetOpen,
  byPath,
  changesetIdField,
  itemsOf,
  MAX_CHANGESET_ITEMS,
  openItems,
  present,
  summary,
} from "./changeset-items";
import { uuidSchema } from "./tool";

const expectedHeadsField = z
  .array(
    z.strictObject({
      documentId: uuidSchema.describe("An item's document."),
      sourceHeadCommitId: uuidSchema.optional().describe("Source head analyzed."),
      targetHeadCommitId: uuidSchema.optional().describe("Target head analyzed."),
    }),
  )
  .max(MAX_CHANGESET_ITEMS)
  .optional()
  .describe("Heads you analyzed, per document (moved: BRANCH_MOVED).");

const analyzeInput = z.strictObject({ action: z.literal("analyze"), changesetId: changesetIdField, proposals: proposalsField });
const approveInput = z.strictObject({ action: z.literal("approve"), changesetId: changesetIdField, expectedHeads: expectedHeadsField });
const requestChangesInput = z.strictObject({ action: z.literal("request_changes"), changesetId: changesetIdField });
const executeInput = z.strictObject({
  action: z.literal("execute"),
  changesetId: changesetIdField,
  itemResolutions: z
    .array(
      z.strictObject({
        documentId: uuidSchema.describe("The item's document."),
        resolutions: shownElsewhere(z.array(sectionResolutionSchema).max(10_000), "As merge_requests execute's resolutions.").optional(),
        tagResolution: sideSchema.optional().describe("Which side's tags win."),
        scalarPropertyResolutions: z.record(uuidSchema, sideSchema).optional().describe("Column id -> source | target."),
        resolvedPath: documentPathSchema.optional().describe("Path on a collision."),
        documentDeletionResolution: z.enum(["delete", "keep"]).optional().describe("delete or keep."),
      }),
    )
    .max(MAX_CHANGESET_ITEMS)
    .optional()
    .describe("Per document with conflicts."),
  commitMessage: commitMessageSchema.optional().describe("Commit message; default: generated."),
  expectedHeads: expectedHeadsField,
});

/** The input schemas of these actions, in the order agents read them. */
export const changesetMergeInputs = [analyzeInput, approveInput, requestChangesInput, executeInput] as const;

/** How many item analyses run at once: each is a few queries and some CPU, and the pool is shared with every other request. */
const ANALYZE_CONCURRENCY = 4;

async function analyze(ctx: ActionContext, input: z.infer<typeof analyzeInput>) {
  const changeset = await getChangeset(ctx.db, ctx.actor.workspaceId, input.changesetId);
  const { visible, hidden } = await openItems(ctx.db, ctx, await itemsOf(ctx.db, changeset.id));
  const analyses: Array<MergeAnalysisView | null> = new Array(visible.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < visible.length) {
      const index = next++;
      const { row, access } = visible[index]!;
      if (row.status === "open") analyses[index] = await analyzeMergeRequest(ctx.db, row, access, { proposals: input.proposals });
    }
  };
  await Promise.all(Array.from({ length: Math.min(ANALYZE_CONCURRENCY, visible.length) }, worker));
  const items = byPath(visible.map((v, i) => ({ ...v, analysis: analyses[i]! }))).map(({ row, access, analysis }) => ({
    documentId: access.document.id,
    path: access.document.path,
    name: access.document.name,
    mergeRequestId: row.id,
    mergeRequestStatus: row.status,
    analysis,
  }));
  const open = items.filter((i) => i.analysis !== null).map((i) => i.analysis!);
  const conflictsOf = (a: MergeAnalysisView) =>
    a.sections.filter((s) => s.status === "conflict").length +
    a.hiddenConflicts +
    (a.hasTagConflicts ? 1 : 0) +
    (a.hasPathCollision ? 1 : 0) +
    (a.hasDocumentDeletionConflict ? 1 : 0) +
    a.propertyConflicts.length;
  return {
    changesetId: changeset.id,
    status: changeset.status,
    analyses: items,
    hiddenItems: hidden,
    totals: {
      items: items.length + hidden,
      openItems: open.length,
      fastForwardItems: open.filter((a) => a.fastForward).length,
      itemsWithConflicts: open.filter((a) => conflictsOf(a) > 0).length,
      conflicts: open.reduce((sum, a) => sum + conflictsOf(a), 0),
      sectionsChanged: open.reduce((sum, a) => sum + a.sections.filter((s) => s.status !== "unchanged").length, 0),
    },
  };
}

/** approve / request_changes: the caller's review, recorded on every open item they review (each as merge_requests records it). */
async function review(ctx: ActionContext, input: z.infer<typeof approveInput> | z.infer<typeof requestChangesInput>) {
  const changeset = await getChangeset(ctx.db, ctx.actor.workspaceId, input.changesetId);
  assertChangesetOpen(changeset, "be reviewed");
  const { visible } = await openItems(ctx.db, ctx, await itemsOf(ctx.db, changeset.id));
  const presented = await Promise.all(visible.map(async (v) => ({ ...v, view: await presentOne(ctx.db, v.row, v.access) })));
  const mine = presented.filter((v) => v.row.status === "open" && v.view.reviewers.some((r) => r.userId === ctx.actor.userId));
  if (mine.length === 0) {
    throw new DomainError(
      "PERMISSION_DENIED",
      `You review no open item of changeset ${changeset.id}. Ask its author to add you as a reviewer. Nothing was changed.`,
      { changesetId: changeset.id },
    );
  }
  const expected = new Map((input.action === "approve" ? (input.expectedHeads ?? []) : []).map((e) => [e.documentId, e]));
  // Each item's review is its own transaction (merge_requests approve's): moved heads are looked for first, so a
  // changeset is not approved in part because one document moved.
  const moved: Array<{ documentId: string; path: string }> = [];
  for (const { row, access } of mine) {
    const heads = expected.get(row.documentId);
    if (!heads) continue;
    const [source, target] = await Promise.all([
      getBranch(ctx.db, row.documentId, row.sourceBranch),
      getBranch(ctx.db, row.documentId, row.targetBranch),
    ]);
    const sourceMoved = heads.sourceHeadCommitId !== undefined && heads.sourceHeadCommitId !== source.headCommitId;
    const targetMoved = heads.targetHeadCommitId !== undefined && heads.targetHeadCommitId !== target.headCommitId;
    if (sourceMoved || targetMoved) moved.push({ documentId: row.documentId, path: access.document.path });
  }
  if (moved.length > 0) {
    throw new DomainError(
      "BRANCH_MOVED",
      `Branches moved since you reviewed changeset ${changeset.id}, in ${moved.map((m) => `${m.path} (${m.documentId})`).join(", ")}. Run \`analyze\` again, look at the fresh changes, then approve what it shows now. Nothing was changed.`,
      { changesetId: changeset.id, documentIds: moved.map((m) => m.documentId) },
    );
  }
  for (const { row } of mine) {
    const heads = expected.get(row.documentId);
    if (input.action === "approve") {
      await reviewHandlers.approve(ctx, {
        action: "approve",
        mergeRequestId: row.id,
        expectedSourceHeadCommitId: heads?.sourceHeadCommitId,
        expectedTargetHeadCommitId: heads?.targetHeadCommitId,
      });
    } else {
      await reviewHandlers.request_changes(ctx, { action: "request_changes", mergeRequestId: row.id });
    }
  }
  return { ...(await present(ctx.db, ctx, changeset)), reviewedItems: mine.map((v) => v.row.documentId) };
}

/** One item's refusal, as execute lists it. */
interface ItemFailure {
  documentId: string;
  path: string;
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Merges every item in ONE transaction. The changeset row is locked first (a second execute waits, then finds it
 * merged), then every item's merge request row in document order (so two executes over shared documents cannot
 * deadlock); each item is then merged as merge_requests execute merges it (target locked and compare-and-swapped,
 * analysis re-run on the current heads, access and approvals checked). A refusal is collected and the next item tried,
 * so the error names everything missing; any refusal rolls the whole transaction back: all items merge or none.
 */
function execute(ctx: ActionContext, input: z.infer<typeof executeInput>) {
  return ctx.db.transaction(async (tx) => {
    const changeset = await getChangeset(tx, ctx.actor.workspaceId, input.changesetId, { forUpdate: true });
    assertChangesetOpen(changeset, "be merged");
    const items = await itemsOf(tx, changeset.id);
    const { visible, hidden } = await openItems(tx, ctx, items, { forUpdate: true });
    const held = new Set(items.map((i) => i.documentId));
    const given = [...(input.itemResolutions ?? []).map((r) => r.documentId), ...(input.expectedHeads ?? []).map((e) => e.documentId)];
    const strangers = [...new Set(given.filter((id) => !held.has(id)))];
    const repeated = (input.itemResolutions ?? []).map((r) => r.documentId).filter((id, i, all) => all.indexOf(id) !== i);
    if (strangers.length > 0 || repeated.length > 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `itemResolutions and expectedHeads must name each item of changeset ${changeset.id} at most once${strangers.length ? `; not items: ${strangers.join(", ")}` : ""}${repeated.length ? `; repeated: ${repeated.join(", ")}` : ""}. Nothing was changed.`,
        { issues: [{ path: "itemResolutions", message: "unknown or repeated document" }], documentIds: [...strangers, ...repeated] },
      );
    }
    const resolutions = new Map((input.itemResolutions ?? []).map((r) => [r.documentId, r]));
    const heads = new Map((input.expectedHeads ?? []).map((e) => [e.documentId, e]));
    const failures: ItemFailure[] = [];
    const merged: Array<{ documentId: string; path: string } & MergeExecution> = [];
    for (const { item, row, access } of visible) {
      const { documentId: _, ...resolution } = resolutions.get(item.documentId) ?? { documentId: item.documentId };
      const expected = heads.get(item.documentId);
      try {
        const execution = await mergeLockedRequest(tx, ctx, row, access, {
          ...resolution,
          commitMessage: input.commitMessage,
          expectedSourceHeadCommitId: expected?.sourceHeadCommitId,
          expectedTargetHeadCommitId: expected?.targetHeadCommitId,
        });
        merged.push({ documentId: item.documentId, path: access.document.path, ...execution });
      } catch (error) {
        if (!isDomainError(error)) throw error;
        failures.push({
          documentId: item.documentId,
          path: access.document.path,
          code: error.code,
          message: error.message,
          details: error.details,
        });
      }
    }
    if (failures.length > 0 || hidden > 0) throw notMergeable(changeset, failures, hidden);
    const now = ctx.clock();
    const done = await updateChangeset(tx, changeset.id, { status: "merged", mergedAt: now, mergedBy: ctx.actor.userId, updatedAt: now });
    return { ...summary(done), merged };
  });
}

/**
 * The refusal of a changeset execute: the code of its items' refusals when they share one (BRANCH_MOVED,
 * UNRESOLVED_CONFLICTS, APPROVALS_REQUIRED...; PERMISSION_DENIED when the only obstacle is documents the caller may
 * not read), else CHANGESET_NOT_MERGEABLE, with every item's reason.
 */
function notMergeable(changeset: ChangesetRow, failures: ItemFailure[], hidden: number): DomainError {
  const codes = new Set(failures.map((f) => f.code));
  // Only documents the caller may not read: they may not merge what they cannot see.
  const only = hidden === 0 ? (codes.size === 1 ? [...codes][0]! : null) : failures.length === 0 ? "PERMISSION_DENIED" : null;
  const code: ErrorCode = only ?? "CHANGESET_NOT_MERGEABLE";
  const lines = failures.map((f) => `${f.path} (${f.documentId}): ${f.code}: ${f.message}`);
  if (hidden > 0)
    lines.push(`${hidden} item(s) on documents you may not read: someone who can read every document must merge this changeset`);
  return new DomainError(
    code,
    `Changeset ${changeset.id} was not merged, nothing was changed: ${failures.length + hidden} item(s) cannot merge. ${lines.join(" | ")}`,
    { changesetId: changeset.id, items: failures, hiddenItems: hidden },
  );
}

/** The handlers of these actions, by action name. */
export const changesetMergeHandlers = { analyze, approve: review, request_changes: review, execute };
