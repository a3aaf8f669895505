/** One write on a branch, as its own commit: the path every writing action takes. */
import type { DocumentTree, SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import type { Tx } from "@/server/store/db";
import { type BranchChange, type BranchState, writeOnBranch } from "@/server/store/group-commit";
import type { NewCommentRow } from "@/server/store/comments";
import { admitActor, type DocumentAccess } from "./access";
import type { ActionContext } from "./context";

export interface WriteResult {
  documentId: string;
  branchName: string;
  /** The branch head after the write. */
  commitId: string;
  /** False when the write left the document as it was (no commit was made). */
  changed: boolean;
}

export interface BranchEdit<R> {
  tree: DocumentTree;
  newSections?: SectionVersion[];
  /** Comments the new content introduces, stored with the commit (see prepareSectionContent). */
  newComments?: NewCommentRow[];
  /** Generated message, used unless the caller gave `commitMessage`. */
  message: string;
  kind?: BranchChange<R>["kind"];
  result: R;
}

/**
 * `need` is the document-level permission the write requires up front: "edit"
 * for changes to the document itself, "read" for writes that check each
 * section they touch themselves (section permissions can be stricter or looser
 * than the document's).
 *
 * Access is checked in the write's transaction; `edit` then runs against the
 * branch as the writes before it left it (writes to a branch are grouped into
 * one transaction under load, see store/group-commit.ts), reading through
 * `tx` and returning everything it wants stored.
 */
export async function writeBranch<R>(
  ctx: ActionContext,
  input: { documentId: string; branchName: string; commitMessage?: string },
  need: "read" | "edit",
  edit: (state: BranchState, tx: Tx, access: DocumentAccess) => Promise<BranchEdit<R>>,
): Promise<WriteResult & R> {
  let access: DocumentAccess | undefined;
  const written = await writeOnBranch(ctx.db, {
    documentId: input.documentId,
    branchName: input.branchName,
    authorId: ctx.actor.userId,
    now: ctx.clock(),
    admit(found) {
      access = admitActor(ctx.actor, input.documentId, found, need);
    },
    async change(state, tx) {
      const next = await edit(state, tx, access!);
      return {
        tree: next.tree,
        newSections: next.newSections ?? [],
        newComments: next.newComments ?? [],
        message: input.commitMessage ?? next.message,
        kind: next.kind,
        result: next.result,
      };
    },
  });
  return {
    documentId: input.documentId,
    branchName: input.branchName,
    commitId: written.commitId,
    changed: written.changed,
    ...written.result,
  };
}

export function assertNotDeleted(tree: DocumentTree, branchName: string): void {
  if (tree.deleted) {
    throw new DomainError(
      "DOCUMENT_DELETED",
      `The document is deleted on branch ${JSON.stringify(branchName)}. Revert the deletion (\`documents\` action \`revert\` to an earlier commit) or write on another branch.`,
      { branchName },
    );
  }
}
