/** The `documents` actions on branches: create one, list them. */
import { z } from "zod";
import { branchNameSchema } from "@/server/core/names";
import { createBranch } from "@/server/store/commit-to-branch";
import { getBranch, listBranches } from "@/server/store/documents";
import { openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { documentIdField } from "./document-fields";
import { passedBack } from "@/server/core/schema-listing";

const createBranchInput = z.strictObject({
  action: z.literal("create_branch"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("Name of the new branch."),
  sourceBranch: passedBack(branchNameSchema).optional().describe("Default: the default branch."),
});

const listBranchesInput = z.strictObject({ action: z.literal("list_branches"), documentId: documentIdField });

/** The input schemas of these actions, in the order agents read them. */
export const branchActionInputs = [createBranchInput, listBranchesInput] as const;

async function createBranchAction(ctx: ActionContext, input: z.output<typeof createBranchInput>) {
  return ctx.db.transaction(async (tx) => {
    const { document } = await openDocument(tx, ctx.actor, input.documentId, "edit");
    const source = await getBranch(tx, document.id, input.sourceBranch ?? document.defaultBranch);
    const branch = await createBranch(tx, {
      document,
      name: input.branchName,
      headCommitId: source.headCommitId,
      authorId: ctx.actor.userId,
      now: ctx.clock(),
    });
    return { documentId: document.id, branchName: branch.name, sourceBranch: source.name, headCommitId: branch.headCommitId };
  });
}

async function listBranchesAction(ctx: ActionContext, input: z.output<typeof listBranchesInput>) {
  const { document } = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const rows = await listBranches(ctx.db, document.id);
  const draftOf = await ctx.live.statuses(document.id);
  return {
    documentId: document.id,
    branches: rows.map((b) => ({
      name: b.name,
      headCommitId: b.headCommitId,
      isDefault: b.name === document.defaultBranch,
      createdAt: b.createdAt.toISOString(),
      updatedAt: b.updatedAt.toISOString(),
      draft: draftOf(b.name),
    })),
  };
}

export const branchHandlers = { create_branch: createBranchAction, list_branches: listBranchesAction };
