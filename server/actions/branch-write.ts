/** One write on a branch, as its own commit: the path every writing action takes. */
import { type DocumentTree, hashSection, type SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { accessChangeRefusal, changesSectionAccess } from "@/server/policies/access";
import type { Tx } from "@/server/store/db";
import type { DocumentRow } from "@/server/store/documents";
import { type BranchChange, type BranchState, writeOnBranch } from "@/server/store/group-commit";
import type { NewCommentRow } from "@/server/store/comments";
import { admitActor, type DocumentAccess, refuse } from "@/server/access/documents";
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
 *
 * Every direct write passes here, whatever the face (MCP, tRPC, the live
 * draft's commit), so the rules that hold for all of them are checked here:
 * a protected default branch takes none (`assertTakesDirectWrites`), and an
 * agent's write changes no section's access (`assertAgentKeepsSectionAccess`).
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
    agent: ctx.actor.agent,
    now: ctx.clock(),
    admit(found) {
      access = admitActor(ctx.actor, input.documentId, found, need);
      assertTakesDirectWrites(access.document, input.branchName);
    },
    async change(state, tx) {
      const next = await edit(state, tx, access!);
      const written = new Map((next.newSections ?? []).map((v) => [hashSection(v), v]));
      await assertAgentKeepsSectionAccess(
        access!,
        state.tree,
        next.tree,
        async (hashes) => new Map([...(await state.loadSections([...hashes].filter((hash) => !written.has(hash)))), ...written]),
        "This write would change a section's defaultPermission or aiAccess: a person makes that change, signed in, on a non-default branch.",
      );
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

/**
 * A document that requires approvals protects its default branch, as a
 * protected branch does on GitLab: changes reach it only through merge
 * requests (merge-execution.ts moves the head itself, never through
 * writeBranch) and the document's creation. Nobody writes to it directly, the
 * owner and the live draft's commit included — an exception would let a
 * change reach it that no approval covers. Whoever manages the document
 * lowers requiredApprovals to 0 to write directly again.
 */
export function assertTakesDirectWrites(document: DocumentRow, branchName: string): void {
  if (branchName !== document.defaultBranch || document.requiredApprovals === 0) return;
  const branch = JSON.stringify(branchName);
  throw new DomainError(
    "DEFAULT_BRANCH_PROTECTED",
    `Branch ${branch} is protected: document ${document.id} requires ${document.requiredApprovals} approval(s), so changes reach ${branch} only through a merge request. Nothing was written (a live draft stays as it is). Create a branch (\`documents\` action \`create_branch\`), write there, and open a merge request to ${branch} (\`merge_requests\` action \`create\`). To write to ${branch} directly again, the document's creator or a workspace owner or admin, signed in, sets requiredApprovals to 0 (\`merge_requests\` action \`set_required_approvals\`).`,
    { branchName, requiredApprovals: document.requiredApprovals },
  );
}

/**
 * A section's `defaultPermission` and `aiAccess` are access, so an agent's
 * change from one tree to another — a write, a revert, a merge and its
 * resolutions — may not alter them for any section it keeps or adds (the one
 * rule, accessChangeRefusal, with `nextStep` saying what to do instead).
 * Only agents' changes are compared, so a person's write loads nothing more.
 */
export async function assertAgentKeepsSectionAccess(
  access: DocumentAccess,
  before: DocumentTree,
  after: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
  nextStep: string,
): Promise<void> {
  const refusal = access.subject.kind === "member" ? accessChangeRefusal(access.subject.principal, nextStep) : null;
  if (!refusal) return;
  const beforeHashes = new Map(before.sections.map((e) => [e.sectionId, e.blobHash]));
  const changed = after.sections.filter((e) => beforeHashes.get(e.sectionId) !== e.blobHash);
  if (changed.length === 0) return;
  const versions = await loadSections([...changed.map((e) => e.blobHash), ...changed.flatMap((e) => beforeHashes.get(e.sectionId) ?? [])]);
  const beforeVersion = (sectionId: string) => {
    const hash = beforeHashes.get(sectionId);
    return hash === undefined ? null : versions.get(hash);
  };
  if (changed.some((e) => changesSectionAccess(beforeVersion(e.sectionId), versions.get(e.blobHash)!))) refuse(refusal);
}
