"use server";

/** Reverting from the history page: a new commit on the branch restoring the document as a commit left it. */
import { runAsUser, type ActionResult } from "@/app/_lib/action-result";
import { getBridge } from "@/server/bridge";

const text = (value: unknown): string => (typeof value === "string" ? value : "");

export async function revertToCommit(input: {
  documentId: unknown;
  branchName: unknown;
  commitId: unknown;
}): Promise<ActionResult<{ commitId: string; changed: boolean }>> {
  return runAsUser("revert", async (userId) => {
    const reverted = await getBridge().callTool("documents", userId, {
      action: "revert",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      commitId: text(input.commitId),
    });
    return { commitId: reverted.commitId, changed: reverted.changed };
  });
}
