import { DomainError, isDomainError } from "@/server/core/errors";
import { getMembership, nonMembers } from "@/server/store/accounts";
import {
  type ChangesetItemRow,
  type ChangesetRow,
  documentsWithBranch,
  insertChangesetItems,
  listChangesetItems,
  mergeRequestsInOpenChangesets,
} from "@/server/store/changesets";
import { CommitGraph, isAncestor } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, findBranch } from "@/server/store/documents";
import { addReviewers, findOpenMergeRequest, type MergeRequestRow } from "@/server/store/merge-requests";
import { loadTree } from "@/server/store/objects";
import { getTags } from "@/server/store/tags";
import { accessFor, atLeastEdit, type DocumentAccess, openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { type MergeRequestView, openMergeRequest, presentOne } from "./merge-request-view";
import { proposeMerge } from "./merge-requests";
import { uuidSchema } from "./tool";

/** The most documents one changeset holds: enough for a handbook-wide rename, few enough to merge in one transaction. */
export const MAX_CHANGESET_ITEMS = 200;
/** The most documents a path prefix or tag looks at (before the tag, access and "something to merge" narrow them). */
const MAX_CANDIDATES = 5_000;

export const changesetIdField = uuidSchema;

/** One item as the caller may see it: its document and merge request, loaded with the caller's access. */
export interface VisibleItem {
  item: ChangesetItemRow;
  row: MergeRequestRow;
  access: DocumentAccess;
}

/** The items the caller may read (by document id) and how many they may not: those are counted, never named. */
export async function openItems(
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

export const byPath = <T extends { access: DocumentAccess }>(items: readonly T[]): T[] =>
  [...items].sort((a, b) => a.access.document.path.localeCompare(b.access.document.path));

export async function itemsOf(tx: Tx, changesetId: string): Promise<ChangesetItemRow[]> {
  return (await listChangesetItems(tx, [changesetId])).get(changesetId)!;
}

export function assertChangesetOpen(row: ChangesetRow, doing: string): void {
  if (row.status !== "open") {
    throw new DomainError(
      "CHANGESET_NOT_OPEN",
      `Changeset ${row.id} is already ${row.status}, so it cannot ${doing}. Merged and closed changesets are final; create a new one.`,
      { changesetId: row.id, status: row.status },
    );
  }
}

/** Changing a changeset (its items, closing it) is for its author in person or someone who can edit every document in it. */
export function requireAuthorOrEditor(ctx: ActionContext, row: ChangesetRow, items: { visible: VisibleItem[]; hidden: number }): void {
  if (row.authorId === ctx.actor.userId && ctx.actor.principal === "person") return;
  if (items.hidden === 0 && items.visible.every((v) => atLeastEdit(v.access))) return;
  throw new DomainError(
    "PERMISSION_DENIED",
    `Only the author of changeset ${row.id} (signed in) or someone who can edit every document in it can change it. Nothing was changed.`,
    { changesetId: row.id },
  );
}

export function summary(row: ChangesetRow) {
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
export async function present(tx: Tx, ctx: ActionContext, row: ChangesetRow) {
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
export async function gather(
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
export async function assertNoUncommittedDrafts(
  ctx: ActionContext,
  sourceBranch: string,
  documents: readonly DocumentRow[],
): Promise<void> {
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
export async function addDocuments(
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
