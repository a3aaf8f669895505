/**
 * The `changesets` tool (issue 27): one review and one atomic merge for a
 * change that spans documents. A changeset gathers, per document, a merge
 * request from one source branch name into one target branch name (created,
 * or an open one adopted), so analysis, reviews, approvals and staleness are
 * each request's own (merge-requests.ts, merge-state.ts, merge-approvals.ts);
 * this module only groups them and merges them together: `execute` merges
 * every item in one database transaction or none.
 */
import { z } from "zod";
import { DomainError, type ErrorCode, isDomainError } from "@/server/core/errors";
import { branchNameSchema, commitMessageSchema, descriptionSchema, documentPathSchema } from "@/server/core/names";
import { getMembership, nonMembers } from "@/server/store/accounts";
import {
  type ChangesetItemRow,
  type ChangesetRow,
  deleteChangesetItems,
  documentsWithBranch,
  getChangeset,
  insertChangeset,
  insertChangesetItems,
  listChangesetItems,
  listChangesets,
  mergeRequestsInOpenChangesets,
  updateChangeset,
} from "@/server/store/changesets";
import { CommitGraph, isAncestor } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, findBranch, getBranch } from "@/server/store/documents";
import { addReviewers, findOpenMergeRequest, type MergeRequestRow, updateMergeRequest } from "@/server/store/merge-requests";
import { loadTree } from "@/server/store/objects";
import { getTags } from "@/server/store/tags";
import { accessFor, atLeastEdit, type DocumentAccess, openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import type { MergeExecution } from "./merge-execution";
import { reviewHandlers } from "./merge-request-reviews";
import { type MergeRequestView, openMergeRequest, presentOne } from "./merge-request-view";
import { mergeLockedRequest, proposeMerge, sectionResolutionSchema, sideSchema } from "./merge-requests";
import { analyzeMergeRequest, type MergeAnalysisView } from "./merge-state";
import { cursorSchema, DEFAULT_PAGE_SIZE, decodeCursor, defineTool, encodeCursor, pageLimitSchema, uuidSchema } from "./tool";

/** The most documents one changeset holds: enough for a handbook-wide rename, few enough to merge in one transaction. */
export const MAX_CHANGESET_ITEMS = 200;
/** The most documents a path prefix or tag looks at (before the tag, access and "something to merge" narrow them). */
const MAX_CANDIDATES = 5_000;

const changesetIdField = uuidSchema.describe("The changeset.");
const documentIdsField = z
  .array(uuidSchema)
  .min(1)
  .max(MAX_CHANGESET_ITEMS)
  .describe("Documents (each must have both branches and changes on the source not yet in the target).");
const expectedHeadsField = z
  .array(
    z.strictObject({
      documentId: uuidSchema.describe("An item's document."),
      sourceHeadCommitId: uuidSchema.optional().describe("The source head you reviewed (analyze's)."),
      targetHeadCommitId: uuidSchema.optional().describe("The target head you reviewed (analyze's)."),
    }),
  )
  .max(MAX_CHANGESET_ITEMS)
  .optional()
  .describe("Heads you reviewed, per document: if one moved since, nothing happens (BRANCH_MOVED).");

export const changesetsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("create"),
    sourceBranch: branchNameSchema.describe("The branch (by name, in every document) whose changes are brought in."),
    targetBranch: branchNameSchema.describe("The branch that receives them (usually main)."),
    title: z
      .string()
      .trim()
      .min(1, "title must not be empty")
      .max(300)
      .describe("Title of the changeset and of the merge requests it opens."),
    description: descriptionSchema.optional().describe("What the change is and why."),
    documentIds: documentIdsField.optional(),
    pathPrefix: z.string().max(500).optional().describe('Gather every document whose path starts with this, e.g. "handbook/".'),
    tagId: uuidSchema.optional().describe("Gather every document tagged with this tag on the source branch."),
    reviewerIds: z
      .array(uuidSchema)
      .max(50)
      .optional()
      .describe("Members to review; each is added to the items whose document they can read."),
  }),
  z.strictObject({
    action: z.literal("list"),
    status: z.enum(["open", "merged", "closed"]).optional().describe("Only changesets in this state."),
    documentId: uuidSchema.optional().describe("Only changesets with an item on this document."),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({ action: z.literal("get"), changesetId: changesetIdField }),
  z.strictObject({ action: z.literal("add_items"), changesetId: changesetIdField, documentIds: documentIdsField }),
  z.strictObject({
    action: z.literal("remove_items"),
    changesetId: changesetIdField,
    documentIds: z.array(uuidSchema).min(1).max(MAX_CHANGESET_ITEMS).describe("Items to take out; their merge requests stay open."),
  }),
  z.strictObject({ action: z.literal("analyze"), changesetId: changesetIdField }),
  z.strictObject({
    action: z.literal("approve"),
    changesetId: changesetIdField,
    expectedHeads: expectedHeadsField,
  }),
  z.strictObject({ action: z.literal("request_changes"), changesetId: changesetIdField }),
  z.strictObject({
    action: z.literal("execute"),
    changesetId: changesetIdField,
    itemResolutions: z
      .array(
        z.strictObject({
          documentId: uuidSchema.describe("The item's document."),
          resolutions: z.array(sectionResolutionSchema).max(10_000).optional().describe("As merge_requests execute's resolutions."),
          tagResolution: sideSchema.optional().describe("Which side's tags win."),
          scalarPropertyResolutions: z.record(uuidSchema, sideSchema).optional().describe("Column UUID -> source | target."),
          resolvedPath: documentPathSchema.optional().describe("The path to use on a path collision."),
          documentDeletionResolution: z.enum(["delete", "keep"]).optional().describe("When one side deleted the document."),
        }),
      )
      .max(MAX_CHANGESET_ITEMS)
      .optional()
      .describe("Per document, what merge_requests execute would take for it; only items with conflicts need one."),
    commitMessage: commitMessageSchema
      .optional()
      .describe("Message of every merge commit (max 1000 characters); generated per document when omitted."),
    expectedHeads: expectedHeadsField,
  }),
  z.strictObject({
    action: z.literal("close"),
    changesetId: changesetIdField,
    closeItems: z.boolean().optional().describe("Also close every open item's merge request (default: they stay open)."),
  }),
]);

type ChangesetsInput = z.infer<typeof changesetsInput>;
type ActionInput<A extends ChangesetsInput["action"]> = Extract<ChangesetsInput, { action: A }>;

/** One item as the caller may see it: its document and merge request, loaded with the caller's access. */
interface VisibleItem {
  item: ChangesetItemRow;
  row: MergeRequestRow;
  access: DocumentAccess;
}

/** The items the caller may read (by document id) and how many they may not: those are counted, never named. */
async function openItems(
  tx: Tx,
  ctx: ActionContext,
  items: readonly ChangesetItemRow[],
  options: { forUpdate?: boolean } = {},
): Promise<{ visible: VisibleItem[]; hidden: number }> {
  const visible: VisibleItem[] = [];
  let hidden = 0;
  // One at a time, in document order: with forUpdate these are the locks every changeset execute takes in the same order.
  for (const item of items) {
    try {
      const { row, access } = await openMergeRequest(tx, ctx, item.mergeRequestId, options);
      visible.push({ item, row, access });
    } catch (error) {
      if (isDomainError(error) && error.code === "NOT_FOUND") hidden += 1;
      else throw error;
    }
  }
  return { visible, hidden };
}

const byPath = <T extends { access: DocumentAccess }>(items: readonly T[]): T[] =>
  [...items].sort((a, b) => a.access.document.path.localeCompare(b.access.document.path));

async function itemsOf(tx: Tx, changesetId: string): Promise<ChangesetItemRow[]> {
  return (await listChangesetItems(tx, [changesetId])).get(changesetId)!;
}

function assertChangesetOpen(row: ChangesetRow, doing: string): void {
  if (row.status !== "open") {
    throw new DomainError(
      "CHANGESET_NOT_OPEN",
      `Changeset ${row.id} is already ${row.status}, so it cannot ${doing}. Merged and closed changesets are final; create a new one.`,
      { changesetId: row.id, status: row.status },
    );
  }
}

/** Changing a changeset (its items, closing it) is for its author in person or someone who can edit every document in it. */
function requireAuthorOrEditor(ctx: ActionContext, row: ChangesetRow, items: { visible: VisibleItem[]; hidden: number }): void {
  if (row.authorId === ctx.actor.userId && ctx.actor.principal === "person") return;
  if (items.hidden === 0 && items.visible.every((v) => atLeastEdit(v.access))) return;
  throw new DomainError(
    "PERMISSION_DENIED",
    `Only the author of changeset ${row.id} (signed in) or someone who can edit every document in it can change it. Nothing was changed.`,
    { changesetId: row.id },
  );
}

function summary(row: ChangesetRow) {
  return {
    changesetId: row.id,
    title: row.title,
    description: row.description,
    sourceBranch: row.sourceBranch,
    targetBranch: row.targetBranch,
    status: row.status,
    authorId: row.authorId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    mergedAt: row.mergedAt?.toISOString() ?? null,
    mergedBy: row.mergedBy,
    closedAt: row.closedAt?.toISOString() ?? null,
  };
}

export interface ChangesetItemView {
  documentId: string;
  path: string;
  name: string;
  mergeRequest: MergeRequestView;
}

/** The changeset with each item the caller may see (its merge request's status, reviewers and approvals); the others counted. */
async function present(tx: Tx, ctx: ActionContext, row: ChangesetRow) {
  const { visible, hidden } = await openItems(tx, ctx, await itemsOf(tx, row.id));
  const items: ChangesetItemView[] = [];
  // Shown by path; locks are taken by document id (openItems).
  for (const { row: request, access } of byPath(visible)) {
    items.push({
      documentId: access.document.id,
      path: access.document.path,
      name: access.document.name,
      mergeRequest: await presentOne(tx, request, access),
    });
  }
  return {
    ...summary(row),
    items,
    hiddenItems: hidden,
    /** Open items the caller sees whose request lacks the approvals its document requires. */
    itemsNeedingApprovals: items
      .filter((i) => i.mergeRequest.status === "open" && i.mergeRequest.approvals < i.mergeRequest.requiredApprovals)
      .map((i) => i.documentId),
  };
}

/** The caller's access to a document when they may read it, else null (so it is skipped or refused like a missing id). */
async function readable(tx: Tx, ctx: ActionContext, documentId: string): Promise<DocumentAccess | null> {
  try {
    return await openDocument(tx, ctx.actor, documentId, "read");
  } catch (error) {
    if (isDomainError(error) && error.code === "NOT_FOUND") return null;
    throw error;
  }
}

/**
 * The documents a create or add_items brings in. Named documents must each be readable, have both branches and
 * something to merge (else the coded error of merge_requests create); a path prefix or tag skips documents that do
 * not fit (unreadable ones included: they are never named).
 */
async function gather(
  tx: Tx,
  ctx: ActionContext,
  branches: { sourceBranch: string; targetBranch: string },
  by: { documentIds?: readonly string[]; pathPrefix?: string; tagId?: string },
): Promise<DocumentAccess[]> {
  const named = by.documentIds !== undefined;
  if (named) {
    for (const documentId of new Set(by.documentIds)) {
      const access = await openDocument(tx, ctx.actor, documentId, "read");
      for (const branch of [branches.sourceBranch, branches.targetBranch]) {
        if (!(await findBranch(tx, access.document.id, branch))) {
          throw new DomainError(
            "NOT_FOUND",
            `Document ${access.document.path} (${documentId}) has no branch ${JSON.stringify(branch)}. Create it first, or leave the document out.`,
            { documentId, branchName: branch },
          );
        }
      }
    }
  }
  if (by.tagId !== undefined && (await getTags(tx, ctx.actor.workspaceId, [by.tagId])).length === 0) {
    throw new DomainError("NOT_FOUND", `Tag ${by.tagId} not found in this workspace. A document's tags are in its \`read\` answer.`, {
      tagId: by.tagId,
    });
  }
  const candidates = await documentsWithBranch(tx, {
    workspaceId: ctx.actor.workspaceId,
    branchName: branches.sourceBranch,
    documentIds: by.documentIds,
    pathPrefix: by.pathPrefix?.replace(/^\/+/, ""),
    limit: MAX_CANDIDATES + 1,
  });
  if (candidates.length > MAX_CANDIDATES) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `More than ${MAX_CANDIDATES} documents have branch ${JSON.stringify(branches.sourceBranch)}${by.pathPrefix !== undefined ? ` under ${JSON.stringify(by.pathPrefix)}` : ""}. Narrow pathPrefix, or name the documents. Nothing was created.`,
      { issues: [{ path: "pathPrefix", message: "too many documents to look at" }], limit: MAX_CANDIDATES },
    );
  }
  const gathered: DocumentAccess[] = [];
  for (const { document, headCommitId } of candidates) {
    const access = await readable(tx, ctx, document.id);
    if (!access) continue;
    const target = await findBranch(tx, document.id, branches.targetBranch);
    if (!target) continue;
    if (by.tagId !== undefined) {
      const graph = new CommitGraph(tx, document.id);
      const tree = await loadTree(tx, (await graph.get(headCommitId)).treeHash);
      if (!tree.tagIds.includes(by.tagId)) continue;
    }
    // A document the source brings nothing to is no item, unless named (then merge_requests create says NOTHING_TO_MERGE).
    if (!named && (await isAncestor(new CommitGraph(tx, document.id), headCommitId, target.headCommitId))) continue;
    gathered.push(access);
  }
  if (gathered.length > MAX_CHANGESET_ITEMS) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `More than ${MAX_CHANGESET_ITEMS} documents match; a changeset holds at most ${MAX_CHANGESET_ITEMS}. Narrow pathPrefix or split the change.`,
      { issues: [{ path: "pathPrefix", message: "too many documents" }], limit: MAX_CHANGESET_ITEMS },
    );
  }
  if (gathered.length === 0) {
    throw new DomainError(
      "NOTHING_TO_MERGE",
      `No document you can read has changes on ${JSON.stringify(branches.sourceBranch)} that ${JSON.stringify(branches.targetBranch)} lacks${by.pathPrefix !== undefined ? ` under ${JSON.stringify(by.pathPrefix)}` : ""}${by.tagId ? " with that tag" : ""}. Nothing was created.`,
      { sourceBranch: branches.sourceBranch, targetBranch: branches.targetBranch },
    );
  }
  return gathered;
}

/**
 * Live edits not yet committed on the source branch would be left out of the merge without anyone noticing, so they are
 * refused, naming the documents: commit them first (`documents` commit credits every editor), then gather again.
 */
async function assertNoUncommittedDrafts(ctx: ActionContext, sourceBranch: string, documents: readonly DocumentRow[]): Promise<void> {
  const drafted: DocumentRow[] = [];
  for (const document of documents) {
    const status = await ctx.live.status({ documentId: document.id, branchName: sourceBranch });
    if (status.uncommittedChanges) drafted.push(document);
  }
  if (drafted.length === 0) return;
  throw new DomainError(
    "UNCOMMITTED_DRAFT",
    `Branch ${JSON.stringify(sourceBranch)} has uncommitted live edits in ${drafted.map((d) => `${d.path} (${d.id})`).join(", ")}. Commit them first (\`documents\` action \`commit\`), then try again. Nothing was changed.`,
    { branchName: sourceBranch, documentIds: drafted.map((d) => d.id) },
  );
}

/** Reviewers must be members; each reviews the items whose document they can read, and at least one. */
async function reviewersByDocument(tx: Tx, ctx: ActionContext, documents: readonly DocumentRow[], userIds: readonly string[]) {
  const strangers = await nonMembers(tx, ctx.actor.workspaceId, userIds);
  if (strangers.length > 0) {
    throw new DomainError("VALIDATION_FAILED", `reviewerIds ${strangers.join(", ")} are not members of this workspace.`, {
      issues: [{ path: "reviewerIds", message: "not a workspace member" }],
      userIds: strangers,
    });
  }
  const byDocument = new Map<string, string[]>(documents.map((d) => [d.id, []]));
  for (const userId of new Set(userIds)) {
    const membership = await getMembership(tx, userId);
    let reads = 0;
    for (const document of documents) {
      const access = await accessFor(tx, document, { kind: "member", userId, role: membership!.role, principal: "person" });
      if (access.permission === "none") continue;
      byDocument.get(document.id)!.push(userId);
      reads += 1;
    }
    if (reads === 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `Reviewer ${userId} cannot read any document of this changeset. Grant them access first.`,
        {
          issues: [{ path: "reviewerIds", message: "reviewer cannot read any document" }],
          userIds: [userId],
        },
      );
    }
  }
  return byDocument;
}

/** Opens or adopts a merge request for each gathered document and records it as an item of the changeset. */
async function addDocuments(
  tx: Tx,
  ctx: ActionContext,
  changeset: ChangesetRow,
  gathered: readonly DocumentAccess[],
  reviewerIds: readonly string[],
): Promise<void> {
  const existing = new Set((await itemsOf(tx, changeset.id)).map((i) => i.documentId));
  const fresh = gathered.filter((a) => !existing.has(a.document.id));
  const reviewers = await reviewersByDocument(
    tx,
    ctx,
    fresh.map((a) => a.document),
    reviewerIds,
  );
  const now = ctx.clock();
  const rows: Array<{ changesetId: string; documentId: string; mergeRequestId: string; addedAt: Date }> = [];
  for (const access of fresh) {
    const documentId = access.document.id;
    const open = await findOpenMergeRequest(tx, documentId, changeset.sourceBranch, changeset.targetBranch);
    let mergeRequestId: string;
    if (open) {
      const elsewhere = (await mergeRequestsInOpenChangesets(tx, [open.id], changeset.id)).get(open.id);
      if (elsewhere) {
        throw new DomainError(
          "MERGE_REQUEST_EXISTS",
          `Merge request ${open.id} for ${access.document.path} is already an item of open changeset ${elsewhere}. Remove it there first. Nothing was changed.`,
          { mergeRequestId: open.id, changesetId: elsewhere, documentId },
        );
      }
      mergeRequestId = open.id;
      await addReviewers(tx, open.id, reviewers.get(documentId)!, now);
    } else {
      const row = await proposeMerge(tx, ctx, access, {
        sourceBranch: changeset.sourceBranch,
        targetBranch: changeset.targetBranch,
        title: changeset.title,
        description: changeset.description ?? undefined,
        reviewerIds: reviewers.get(documentId)!,
      });
      mergeRequestId = row.id;
    }
    rows.push({ changesetId: changeset.id, documentId, mergeRequestId, addedAt: now });
  }
  if (existing.size + rows.length > MAX_CHANGESET_ITEMS) {
    throw new DomainError("VALIDATION_FAILED", `A changeset holds at most ${MAX_CHANGESET_ITEMS} documents. Nothing was added.`, {
      issues: [{ path: "documentIds", message: "too many documents" }],
      limit: MAX_CHANGESET_ITEMS,
    });
  }
  await insertChangesetItems(tx, rows);
}

async function create(ctx: ActionContext, input: ActionInput<"create">) {
  if (input.documentIds === undefined && input.pathPrefix === undefined && input.tagId === undefined) {
    throw new DomainError(
      "VALIDATION_FAILED",
      "Say which documents: documentIds, pathPrefix and/or tagId (a document must match each given).",
      {
        issues: [{ path: "documentIds", message: "give documentIds, pathPrefix or tagId" }],
      },
    );
  }
  if (input.sourceBranch === input.targetBranch) {
    throw new DomainError("VALIDATION_FAILED", "sourceBranch and targetBranch must differ: a changeset brings one branch into another.", {
      issues: [{ path: "targetBranch", message: "same as sourceBranch" }],
    });
  }
  // Outside the transaction: the live layer reads drafts on its own connection.
  const gathered = await gather(ctx.db, ctx, input, input);
  await assertNoUncommittedDrafts(
    ctx,
    input.sourceBranch,
    gathered.map((a) => a.document),
  );
  return ctx.db.transaction(async (tx) => {
    const now = ctx.clock();
    const changeset = await insertChangeset(tx, {
      workspaceId: ctx.actor.workspaceId,
      title: input.title,
      description: input.description ?? null,
      sourceBranch: input.sourceBranch,
      targetBranch: input.targetBranch,
      authorId: ctx.actor.userId,
      createdAt: now,
      updatedAt: now,
    });
    // Gathered again inside the transaction: the branches are read where the requests are opened.
    await addDocuments(
      tx,
      ctx,
      changeset,
      await gather(tx, ctx, input, { documentIds: gathered.map((a) => a.document.id) }),
      input.reviewerIds ?? [],
    );
    return present(tx, ctx, changeset);
  });
}

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const start = input.cursor ? decodeCursor(input.cursor, z.object({ createdAt: z.string().datetime(), id: uuidSchema })) : undefined;
  if (input.documentId) await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const rows = await listChangesets(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    status: input.status,
    documentId: input.documentId,
    before: start ? { createdAt: new Date(start.createdAt), id: start.id } : undefined,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const items = await listChangesetItems(
    ctx.db,
    page.map((r) => r.id),
  );
  const changesets = [];
  for (const row of page) {
    const { visible, hidden } = await openItems(ctx.db, ctx, items.get(row.id)!);
    const count = (status: MergeRequestRow["status"]) => visible.filter((v) => v.row.status === status).length;
    changesets.push({
      ...summary(row),
      items: visible.map((v) => ({ documentId: v.access.document.id, path: v.access.document.path, mergeRequestStatus: v.row.status })),
      hiddenItems: hidden,
      itemCounts: { open: count("open"), merged: count("merged"), closed: count("closed") },
    });
  }
  const last = page.at(-1);
  return {
    changesets,
    nextCursor: rows.length > limit && last ? encodeCursor({ createdAt: last.createdAt.toISOString(), id: last.id }) : null,
  };
}

async function get(ctx: ActionContext, input: ActionInput<"get">) {
  return present(ctx.db, ctx, await getChangeset(ctx.db, ctx.actor.workspaceId, input.changesetId));
}

async function addItems(ctx: ActionContext, input: ActionInput<"add_items">) {
  const before = await getChangeset(ctx.db, ctx.actor.workspaceId, input.changesetId);
  assertChangesetOpen(before, "take items");
  // Outside the transaction: the live layer reads drafts on its own connection.
  const gathered = await gather(ctx.db, ctx, before, { documentIds: input.documentIds });
  await assertNoUncommittedDrafts(
    ctx,
    before.sourceBranch,
    gathered.map((a) => a.document),
  );
  return ctx.db.transaction(async (tx) => {
    const changeset = await getChangeset(tx, ctx.actor.workspaceId, input.changesetId, { forUpdate: true });
    assertChangesetOpen(changeset, "take items");
    await addDocuments(tx, ctx, changeset, await gather(tx, ctx, changeset, { documentIds: input.documentIds }), []);
    return present(tx, ctx, await updateChangeset(tx, changeset.id, { updatedAt: ctx.clock() }));
  });
}

function removeItems(ctx: ActionContext, input: ActionInput<"remove_items">) {
  return ctx.db.transaction(async (tx) => {
    const changeset = await getChangeset(tx, ctx.actor.workspaceId, input.changesetId, { forUpdate: true });
    assertChangesetOpen(changeset, "lose items");
    const opened = await openItems(tx, ctx, await itemsOf(tx, changeset.id));
    requireAuthorOrEditor(ctx, changeset, opened);
    const held = new Set(opened.visible.map((v) => v.item.documentId));
    const strangers = input.documentIds.filter((id) => !held.has(id));
    if (strangers.length > 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `Documents ${strangers.join(", ")} are not items of changeset ${changeset.id}. Nothing was removed.`,
        {
          issues: [{ path: "documentIds", message: "not an item" }],
          documentIds: strangers,
        },
      );
    }
    await deleteChangesetItems(tx, changeset.id, input.documentIds);
    return present(tx, ctx, await updateChangeset(tx, changeset.id, { updatedAt: ctx.clock() }));
  });
}

/** How many item analyses run at once: each is a few queries and some CPU, and the pool is shared with every other request. */
const ANALYZE_CONCURRENCY = 4;

async function analyze(ctx: ActionContext, input: ActionInput<"analyze">) {
  const changeset = await getChangeset(ctx.db, ctx.actor.workspaceId, input.changesetId);
  const { visible, hidden } = await openItems(ctx.db, ctx, await itemsOf(ctx.db, changeset.id));
  const analyses: Array<MergeAnalysisView | null> = new Array(visible.length).fill(null);
  let next = 0;
  const worker = async () => {
    while (next < visible.length) {
      const index = next++;
      const { row, access } = visible[index]!;
      if (row.status === "open") analyses[index] = await analyzeMergeRequest(ctx.db, row, access);
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
async function review(ctx: ActionContext, input: ActionInput<"approve"> | ActionInput<"request_changes">) {
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
function execute(ctx: ActionContext, input: ActionInput<"execute">) {
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

function close(ctx: ActionContext, input: ActionInput<"close">) {
  return ctx.db.transaction(async (tx) => {
    const changeset = await getChangeset(tx, ctx.actor.workspaceId, input.changesetId, { forUpdate: true });
    assertChangesetOpen(changeset, "be closed");
    const opened = await openItems(tx, ctx, await itemsOf(tx, changeset.id), { forUpdate: input.closeItems === true });
    requireAuthorOrEditor(ctx, changeset, opened);
    const now = ctx.clock();
    if (input.closeItems) {
      for (const { row } of opened.visible) {
        if (row.status !== "open") continue;
        await updateMergeRequest(tx, row.id, { status: "closed", closedAt: now, closedBy: ctx.actor.userId, updatedAt: now });
      }
    }
    const closed = await updateChangeset(tx, changeset.id, { status: "closed", closedAt: now, closedBy: ctx.actor.userId, updatedAt: now });
    return present(tx, ctx, closed);
  });
}

export const changesetsTool = defineTool({
  name: "changesets",
  description: [
    "One review and one atomic merge for a change spanning documents: a merge request per document from sourceBranch into targetBranch (opened, or an open one adopted), whose analyses, reviews and approvals it gathers. Actions: create (by documentIds, pathPrefix or tagId), list, get, add_items, remove_items, analyze, approve, request_changes, execute, close.",
    "execute merges every item in one transaction, each as merge_requests execute would; if any item cannot merge, nothing is merged and the error lists each item's reason in details.items. Uncommitted live edits on a gathered source branch are refused (UNCOMMITTED_DRAFT): commit them first. Documents you may not read are counted (hiddenItems), never shown.",
  ].join("\n"),
  input: changesetsInput,
  readOnly: false,
  handlers: {
    create,
    list,
    get,
    add_items: addItems,
    remove_items: removeItems,
    analyze,
    approve: review,
    request_changes: review,
    execute,
    close,
  },
});
