/**
 * `documents` `undo`: takes back a branch's newest commit (the editor's Undo
 * after deleting a section). It is a revert to that commit's first parent,
 * made only while the commit is still the head: the head is checked inside
 * the write, on the head the write is built on, so nothing committed after
 * the one being undone can be lost with it (a check made before the revert,
 * in its own call, would race with a write landing in between).
 */
import { z } from "zod";
import { subjectOf } from "@/server/core/commit-messages";
import { DomainError } from "@/server/core/errors";
import { quoteForMessage } from "@/server/core/names";
import { CommitGraph } from "@/server/store/commits";
import { writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { commitMessageField, documentIdField, writeBranchField } from "./document-fields";
import { assertHeadUnmoved, restoreState } from "./history";
import { uuidSchema } from "./tool";

const undoInput = z.strictObject({
  action: z.literal("undo"),
  documentId: documentIdField,
  branchName: writeBranchField,
  expectedHeadCommitId: uuidSchema.describe("Head you saw (moved: BRANCH_MOVED)."),
  commitMessage: commitMessageField,
});

/** The input schemas of these actions, in the order agents read them. */
export const undoActionInputs = [undoInput] as const;

function undo(ctx: ActionContext, input: z.output<typeof undoInput>) {
  return writeBranch(ctx, input, "edit", async ({ head, tree, document, loadSections }, tx, access) => {
    assertHeadUnmoved(
      head.id,
      input.expectedHeadCommitId,
      "undo takes back only the newest commit; restore from the history (`documents` `revert`) instead",
    );
    const parentId = head.parentIds[0];
    if (!parentId) {
      throw new DomainError("NOT_FOUND", "This is the document's first commit: there is nothing before it to go back to.", {
        commitId: head.id,
      });
    }
    const graph = new CommitGraph(tx, document.id);
    const parent = await graph.get(parentId);
    // The commit undone is the one whose message is quoted, and which must not touch a section hidden from the caller.
    const { restored, quotable } = await restoreState(
      { tx, access, document, graph, tree, loadSections },
      head,
      parent.treeHash,
      "undo that commit",
    );
    const message = quotable ? `Undo ${quoteForMessage(subjectOf(quotable))}` : `Undo ${head.id.slice(0, 8)}`;
    return { tree: restored, message, kind: "revert", result: { undoneCommitId: head.id } };
  });
}

export const undoHandlers = { undo };
