/**
 * The `documents` actions that manage documents and branches beyond editing
 * them: list deleted documents, restore one, delete a branch. Restoring is a
 * commit through the one write path (writeBranch); deleting a branch is not a
 * head move, so it runs on the branch's live line (LiveDrafts.dropBranch),
 * which closes the branch's open rooms.
 */
import { z } from "zod";
import { DomainError } from "@/server/core/errors";
import { branchNameSchema, documentPathSchema, quoteForMessage } from "@/server/core/names";
import {
  type DeletedDocument,
  type DeletedListPosition,
  deleteBranchRow,
  deleteDraft,
  listDeletedDocuments,
  openMergeRequestsOn,
} from "@/server/store/document-management";
import { assertPathFree, getBranch, pathTaken } from "@/server/store/documents";
import { openDocument, type ListedDocumentFacts, readableAmong } from "@/server/access/documents";
import { writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { commitMessageField, documentIdField } from "./document-fields";
import { cursorSchema, DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, pageLimitSchema, visiblePage } from "./tool";

const listDeletedInput = z.strictObject({
  action: z.literal("list_deleted"),
  pathPrefix: z.string().max(500).optional().describe('Path prefix, e.g. "handbook/".'),
  limit: pageLimitSchema,
  cursor: cursorSchema,
});

const restoreInput = z.strictObject({
  action: z.literal("restore"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The default branch, or a branch merging into it."),
  newPath: documentPathSchema.optional().describe("New path."),
  commitMessage: commitMessageField,
});

const deleteBranchInput = z.strictObject({
  action: z.literal("delete_branch"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The branch."),
  discardDraft: z.boolean().optional().describe("Also drop uncommitted live edits."),
});

/** The input schemas of these actions, in the order agents read them. */
export const managementActionInputs = [listDeletedInput, restoreInput, deleteBranchInput] as const;

const deletedCursor = z
  .object({ afterDeletedAt: z.iso.datetime(), afterId: z.guid() })
  .transform(({ afterDeletedAt, afterId }): DeletedListPosition => ({ deletedAt: new Date(afterDeletedAt), documentId: afterId }));

const presentDeleted = (row: DeletedDocument) => ({
  documentId: row.id,
  path: row.path,
  name: row.name,
  defaultBranch: row.defaultBranch,
  requiredApprovals: row.requiredApprovals,
  deletedAt: row.deletedAt.toISOString(),
  deletedBy: { userId: row.deletedById, name: row.deletedByName },
  headCommitId: row.headCommitId,
});

/** Deleted documents the caller could see were they live (the same rule as `list`: a hidden document is never named). */
async function listDeleted(ctx: ActionContext, input: z.output<typeof listDeletedInput>) {
  let readable: (row: ListedDocumentFacts) => boolean = () => false;
  const page = await visiblePage<DeletedDocument, DeletedListPosition>({
    limit: input.limit ?? DEFAULT_PAGE_SIZE,
    start: input.cursor ? decodeCursor(input.cursor, deletedCursor) : undefined,
    fetch: async (after, batchSize) => {
      const rows = await listDeletedDocuments(ctx.db, {
        workspaceId: ctx.actor.workspaceId,
        pathPrefix: input.pathPrefix?.replace(/^\/+/, ""),
        after,
        limit: batchSize,
      });
      readable = await readableAmong(ctx.db, ctx.actor, rows);
      return rows;
    },
    visible: (row) => readable(row),
    position: (row) => ({ deletedAt: row.deletedAt, documentId: row.id }),
  });
  return {
    deletedDocuments: page.rows.map(presentDeleted),
    nextCursor:
      page.next === null ? null : encodeCursor({ afterDeletedAt: page.next.deletedAt.toISOString(), afterId: page.next.documentId }),
  };
}

/**
 * Restoring brings back the document exactly as it was before its deletion,
 * so, unlike a deletion, it may commit straight to an unprotected default
 * branch: it loses nothing, and `revert` could already do the same there.
 */
function restore(ctx: ActionContext, input: z.output<typeof restoreInput>) {
  return writeBranch(ctx, input, "edit", async ({ tree, document }, tx) => {
    if (!tree.deleted) return { tree, message: "", result: { path: tree.path } };
    const path = input.newPath ?? tree.path;
    try {
      await assertPathFree(tx, document.workspaceId, path, document.id);
    } catch (error) {
      if (!(error instanceof DomainError && error.code === "PATH_TAKEN")) throw error;
      throw new DomainError(
        "PATH_TAKEN",
        `${pathTaken(path).message.replace(/ Choose a different path\.$/, "")} Restore it under another path: give \`newPath\` (or move the other document first).`,
        { path },
      );
    }
    const moved = path === tree.path ? "" : `, moved to ${quoteForMessage(path)}`;
    return { tree: { ...tree, deleted: false, path }, message: `Restore document ${quoteForMessage(tree.path)}${moved}`, result: { path } };
  });
}

async function deleteBranch(ctx: ActionContext, input: z.output<typeof deleteBranchInput>) {
  const { document } = await openDocument(ctx.db, ctx.actor, input.documentId, "edit");
  const key = { documentId: document.id, branchName: input.branchName };
  const branch = JSON.stringify(input.branchName);
  if (input.branchName === document.defaultBranch) {
    throw new DomainError(
      "DEFAULT_BRANCH_PROTECTED",
      `Branch ${branch} is the document's default branch and cannot be deleted. To remove the document, delete it on another branch and merge that (\`documents\` action \`delete\`).`,
      { branchName: input.branchName },
    );
  }
  return ctx.live.dropBranch(key, async ({ editorIds }) => {
    if (editorIds.length > 0 && input.discardDraft !== true) {
      throw new DomainError(
        "UNCOMMITTED_DRAFT",
        `Branch ${branch} has uncommitted live edits by ${editorIds.length} editor(s). Commit them first (\`documents\` action \`commit\`), or delete it anyway with discardDraft: true. Nothing was deleted.`,
        { branchName: input.branchName, editorIds },
      );
    }
    return ctx.db.transaction(async (tx) => {
      // Locked, so no merge moves or reads it while it goes.
      const row = await getBranch(tx, document.id, input.branchName, { forUpdate: true });
      const requests = await openMergeRequestsOn(tx, key);
      if (requests.length > 0) {
        throw new DomainError(
          "BRANCH_IN_USE",
          `Branch ${branch} is the source or target of open merge request(s) ${requests.map((r) => r.id).join(", ")}. Merge or close them first (\`merge_requests\` action \`execute\` or \`close\`). Nothing was deleted.`,
          { branchName: input.branchName, mergeRequestIds: requests.map((r) => r.id) },
        );
      }
      await deleteDraft(tx, key);
      await deleteBranchRow(tx, key);
      return {
        documentId: document.id,
        branchName: row.name,
        headCommitId: row.headCommitId,
        discardedDraft: editorIds.length > 0,
      };
    });
  });
}

export const managementHandlers = { list_deleted: listDeleted, restore, delete_branch: deleteBranch };
