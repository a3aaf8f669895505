/**
 * The `changesets` tool (issue 27): one review and one atomic merge for a
 * change that spans documents. A changeset gathers, per document, a merge
 * request from one source branch name into one target branch name (created,
 * or an open one adopted), so analysis, reviews, approvals and staleness are
 * each request's own (merge-requests.ts, merge-state.ts, merge-approvals.ts);
 * this module only groups them and merges them together: `execute` merges
 * every item in one database transaction or none. Here: the tool and the
 * changeset's lifecycle (create, list, get, add/remove items, close);
 * changeset-items.ts gathers and shows the items, changeset-merge.ts analyses,
 * reviews and merges them.
 */
import { z } from "zod";
import { DomainError } from "@/server/core/errors";
import { branchNameSchema, descriptionSchema } from "@/server/core/names";
import {
  deleteChangesetItems,
  getChangeset,
  insertChangeset,
  listChangesetItems,
  listChangesets,
  updateChangeset,
} from "@/server/store/changesets";
import { type MergeRequestRow, updateMergeRequest } from "@/server/store/merge-requests";
import { openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import {
  addDocuments,
  assertChangesetOpen,
  assertNoUncommittedDrafts,
  changesetIdField,
  gather,
  itemsOf,
  MAX_CHANGESET_ITEMS,
  openItems,
  present,
  requireAuthorOrEditor,
  summary,
} from "./changeset-items";
import { changesetMergeHandlers, changesetMergeInputs } from "./changeset-merge";
import { cursorSchema, DEFAULT_PAGE_SIZE, decodeCursor, defineTool, encodeCursor, pageLimitSchema, uuidSchema } from "./tool";
import { passedBack } from "@/server/core/schema-listing";

const documentIdsField = z.array(uuidSchema).min(1).max(MAX_CHANGESET_ITEMS);

export const changesetsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("create"),
    sourceBranch: passedBack(branchNameSchema).describe("Branch merged from."),
    targetBranch: passedBack(branchNameSchema).describe("Branch merged into (usually main)."),
    title: z.string().trim().min(1, "title must not be empty").max(300),
    description: descriptionSchema.optional().describe("What the change is and why."),
    documentIds: documentIdsField.optional(),
    pathPrefix: z.string().max(500).optional().describe("Gather by path prefix."),
    tagId: uuidSchema.optional().describe("Gather documents with this tag."),
    reviewerIds: z.array(uuidSchema).max(50).optional().describe("Reviewers' user ids."),
  }),
  z.strictObject({
    action: z.literal("list"),
    status: z.enum(["open", "merged", "closed"]).optional().describe("Only changesets in this state."),
    documentId: uuidSchema.optional().describe("Only with this document."),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({ action: z.literal("get"), changesetId: changesetIdField }),
  z.strictObject({ action: z.literal("add_items"), changesetId: changesetIdField, documentIds: documentIdsField }),
  z.strictObject({
    action: z.literal("remove_items"),
    changesetId: changesetIdField,
    documentIds: documentIdsField,
  }),
  ...changesetMergeInputs,
  z.strictObject({
    action: z.literal("close"),
    changesetId: changesetIdField,
    closeItems: z.boolean().optional().describe("Also close their merge requests."),
  }),
]);

type ChangesetsInput = z.infer<typeof changesetsInput>;
type ActionInput<A extends ChangesetsInput["action"]> = Extract<ChangesetsInput, { action: A }>;

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
    "One review and one atomic merge across documents: a merge request per document from sourceBranch into targetBranch, gathered (create: by documentIds, pathPrefix or tagId).",
    "execute merges every item in one transaction, or none (its error's details.items: each item's reason).",
  ].join("\n"),
  input: changesetsInput,
  readOnly: false,
  handlers: {
    create,
    list,
    get,
    add_items: addItems,
    remove_items: removeItems,
    ...changesetMergeHandlers,
    close,
  },
});
