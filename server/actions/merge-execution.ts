/**
 * Carrying out a merge request's merge (state read by merge-state.ts): the
 * check that whoever proposes it may make every change it can bring, and
 * `execute`, which re-reads both branches with the target locked, applies the
 * reviewer's resolutions (storing sections they wrote) and moves the target
 * through commitToBranch (a merge commit, or a fast-forward).
 */
import type { AgentIdentity } from "@/db/schema";
import type { Block } from "@/server/core/blocks";
import { exceedsCommitMessageLimit } from "@/server/core/commit-messages";
import { changedSectionIds, hashTree, normalizeTree, type SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { buildMergedTree, type MergeResolutions, type MergedSection, type MissingResolutions } from "@/server/core/merge-analysis";
import { MAX_COMMIT_MESSAGE_CHARS } from "@/server/core/names";
import { assertSectionContentAllowed } from "@/server/core/section-rules";
import { commitToBranch } from "@/server/store/commit-to-branch";
import { newCommitRecord } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { assertPathFree } from "@/server/store/documents";
import type { MergeRequestRow } from "@/server/store/merge-requests";
import { loadSections, putSections } from "@/server/store/objects";
import { assertSectionChangesAllowed, atLeastEdit, type DocumentAccess, sectionChangesRefused } from "@/server/access/documents";
import { assertAgentKeepsSectionAccess } from "./branch-write";
import {
  analysisView,
  assertHeadsAsReviewed,
  type BranchSides,
  generatedMessage,
  loadMergeState,
  type MergeState,
  sidesOf,
} from "./merge-state";

/** A conflicting section's content as the reviewer wrote it; the name defaults to the source's (else the target's). */
export interface WrittenSection {
  content: Block[];
  name?: string;
}

/** Resolutions as execute receives them: a conflicting section may take a version the reviewer wrote. */
export type ExecuteResolutions = Omit<MergeResolutions, "sections"> & { sections?: Record<string, "source" | "target" | WrittenSection> };

export interface MergeExecution {
  mergeRequestId: string;
  status: "merged";
  targetBranch: string;
  /** The new target head: the merge commit, or the source head after a fast-forward. */
  mergeCommitId: string;
  fastForward: boolean;
  message: string;
  /** Resolutions that were given for something not in conflict, and therefore not applied. */
  warnings: string[];
}

/** A merge carried out, and where the target branch stood before it (recorded on the request, not part of `execute`'s answer). */
export interface ExecutedMerge extends MergeExecution {
  /** The target's head the merge was made onto: a merge commit's first parent, or where a fast-forward started. */
  mergedOntoCommitId: string;
}

/**
 * Proposing a merge needs edit on the target for every section the merge
 * would change (conflicts included: their resolution changes them) and, when
 * it changes the document's own state, edit on the document.
 */
export async function assertMayProposeMerge(tx: Tx, request: MergeRequestRow, access: DocumentAccess): Promise<void> {
  const state = await loadMergeState(tx, request, access, { lockTarget: false });
  const { analysis, targetTree, sectionsByHash } = state;
  // The widest change the merge can make: every conflict resolved towards the source.
  const conflicted = analysis.plan.sections.filter((p) => p.merged.conflict);
  const preview = buildMergedTree(analysis, {
    sections: Object.fromEntries(conflicted.map((p) => [p.sectionId, "source" as const])),
    tagResolution: "source",
    scalarPropertyResolutions: Object.fromEntries(analysis.propertyConflicts.map((c) => [c.columnId, "source" as const])),
    resolvedPath: state.sourceTree.path,
    documentDeletionResolution: "keep",
  });
  if (!("tree" in preview)) return;
  const touched = new Set([...changedSectionIds(targetTree, preview.tree), ...conflicted.map((p) => p.sectionId)]);
  const forbidden = analysis.plan.sections
    .filter((p) => touched.has(p.sectionId))
    .flatMap((p) =>
      [p.source, p.target].flatMap((hash) => (hash === null ? [] : [{ sectionId: p.sectionId, version: sectionsByHash.get(hash)! }])),
    )
    .filter(({ sectionId, version }) => state.rules.permission(sectionId, version) !== "edit")
    .map(({ version }) => version);
  const documentChanged =
    analysis.hasDocumentDeletionConflict || hashTree({ ...preview.tree, sections: [] }) !== hashTree({ ...targetTree, sections: [] });
  if (documentChanged && !atLeastEdit(access)) {
    throw new DomainError(
      "PERMISSION_DENIED",
      "You cannot propose this merge: it changes parts of the document you are not allowed to edit. Ask someone with edit access to open it.",
      { mergeRequestId: request.id },
    );
  }
  if (forbidden.length > 0) throw sectionChangesRefused(access, forbidden, "propose this merge");
}

function describeMissing(missing: MissingResolutions): string {
  const parts = [
    missing.sections.length ? `resolutions for sections ${missing.sections.join(", ")}` : "",
    missing.tags ? "tagResolution" : "",
    missing.properties.length ? `scalarPropertyResolutions for columns ${missing.properties.join(", ")}` : "",
    missing.path ? "resolvedPath" : "",
    missing.documentDeletion ? "documentDeletionResolution" : "",
  ];
  return parts.filter(Boolean).join("; ");
}

/**
 * An agent may not execute a merge that changes any section's overrides (the
 * merged tree against the target's, so resolutions count): permission changes
 * reach a branch only when a person merges them.
 */
const AGENT_MERGE_NEXT_STEP =
  "This merge would change a section's defaultPermission or aiAccess, so a person must merge it, signed in. Nothing was changed. (A conflict resolved with the target's version keeps that section's access as it is.)";

/**
 * Merges inside the caller's transaction (which holds the merge request row).
 * The target branch row is locked and the analysis re-run on the current heads,
 * so resolutions can never apply to a stale analysis.
 */
export async function executeMerge(
  tx: Tx,
  request: MergeRequestRow,
  access: DocumentAccess,
  options: {
    authorId: string;
    /** The agent acting for the author, recorded on a merge commit; null for the author themselves. */
    agent: AgentIdentity | null;
    now: Date;
    resolutions: ExecuteResolutions;
    commitMessage?: string;
    /** The heads the caller reviewed: when a branch has moved since, nothing is merged. */
    expectedHeads?: { source?: string; target?: string };
    /** Further checks on the heads the merge will use and what it brings (the approval rule), run before anything is written. */
    assertMayMerge?: (sides: BranchSides) => void;
  },
): Promise<ExecutedMerge> {
  const state = await loadMergeState(tx, request, access, { lockTarget: true });
  const current = analysisView(request, state);
  assertHeadsAsReviewed(request, current, options.expectedHeads, "retry with the new head ids");
  options.assertMayMerge?.(sidesOf(state));
  if (current.hiddenConflicts > 0) {
    throw new DomainError(
      "UNRESOLVED_CONFLICTS",
      `The merge has ${current.hiddenConflicts} conflicting section(s) you are not allowed to see. Someone with access to them must resolve and merge this request. Nothing was changed.`,
      { hiddenConflicts: current.hiddenConflicts },
    );
  }
  const base = {
    mergeRequestId: request.id,
    status: "merged" as const,
    targetBranch: request.targetBranch,
    mergedOntoCommitId: state.targetHead.id,
  };
  if (current.upToDate) {
    throw new DomainError(
      "NOTHING_TO_MERGE",
      `Branch ${JSON.stringify(request.targetBranch)} already contains every commit of ${JSON.stringify(request.sourceBranch)}. Commit to the source branch first, or close this merge request.`,
      { mergeRequestId: request.id },
    );
  }
  const loadForCheck = (hashes: Iterable<string>) => loadSections(tx, hashes);
  if (current.fastForward) {
    await assertAgentKeepsSectionAccess(access, state.targetTree, state.sourceTree, loadForCheck, AGENT_MERGE_NEXT_STEP);
    await assertSectionChangesAllowed(state.rules, state.targetTree, state.sourceTree, loadForCheck, "merge this request");
    await commitToBranch(tx, {
      document: state.document,
      branchName: request.targetBranch,
      from: { commitId: state.targetHead.id, tree: state.targetTree },
      to: { existing: state.sourceHead, move: "fast-forward" },
      tree: state.sourceTree,
      actorId: options.authorId,
      now: options.now,
    });
    const message = `Fast-forward ${request.targetBranch} to ${request.sourceBranch}`;
    return { ...base, mergeCommitId: state.sourceHead.id, fastForward: true, message, warnings: ignoredResolutions(options.resolutions) };
  }

  const built = buildMergedTree(state.analysis, {
    ...options.resolutions,
    sections: await storeWrittenSections(tx, state, options.resolutions.sections ?? {}),
  });
  if ("missing" in built) {
    throw new DomainError(
      "UNRESOLVED_CONFLICTS",
      `The merge has conflicts without a resolution: ${describeMissing(built.missing)}. Run \`analyze\`, decide each one, and pass the resolutions to \`execute\`. Nothing was changed.`,
      { missing: built.missing },
    );
  }
  await assertAgentKeepsSectionAccess(access, state.targetTree, built.tree, loadForCheck, AGENT_MERGE_NEXT_STEP);
  await assertSectionChangesAllowed(state.rules, state.targetTree, built.tree, loadForCheck, "merge this request");
  if (options.resolutions.resolvedPath !== undefined && state.analysis.hasPathCollision) {
    await assertPathFree(tx, state.document.workspaceId, built.tree.path, state.document.id);
  }
  const generated = options.commitMessage === undefined ? await generatedMessage(tx, request, state, built.tree) : null;
  const message = options.commitMessage ?? generated!.message;
  if (exceedsCommitMessageLimit(message)) {
    throw new DomainError(
      "COMMIT_MESSAGE_TOO_LONG",
      `The generated merge commit message lists ${generated?.sourceCommits ?? 0} source commits and would be ${message.length} characters, over the ${MAX_COMMIT_MESSAGE_CHARS}-character limit. Pass your own commitMessage (at most ${MAX_COMMIT_MESSAGE_CHARS} characters) to execute. Nothing was changed.`,
      { length: message.length, limit: MAX_COMMIT_MESSAGE_CHARS },
    );
  }
  const tree = normalizeTree(built.tree);
  const commit = newCommitRecord(
    {
      documentId: state.document.id,
      parentIds: [state.targetHead.id, state.sourceHead.id],
      treeHash: hashTree(tree),
      message,
      authorId: options.authorId,
      agent: options.agent,
      kind: "merge",
      sectionIds: changedSectionIds(state.targetTree, tree),
      createdAt: options.now,
    },
    [state.targetHead, state.sourceHead],
  );
  await commitToBranch(tx, {
    document: state.document,
    branchName: request.targetBranch,
    from: { commitId: state.targetHead.id, tree: state.targetTree },
    to: { commits: [{ record: commit, move: "merge" }] },
    tree,
    storing: { sections: new Map(), trees: new Map([[commit.treeHash, tree]]), comments: [] },
    actorId: options.authorId,
    now: options.now,
  });
  return { ...base, mergeCommitId: commit.id, fastForward: false, message, warnings: built.ignored };
}

/**
 * Stores the versions the reviewer wrote for conflicting sections (checked like any section write), in the merge's
 * transaction ahead of its commit (the permission check and the generated message load them back), and returns the
 * resolutions as the engine takes them. A written version keeps the permissions and references of the source's
 * version (else the target's): the reviewer chooses content, not access.
 */
async function storeWrittenSections(
  tx: Tx,
  state: MergeState,
  given: NonNullable<ExecuteResolutions["sections"]>,
): Promise<Record<string, "source" | "target" | MergedSection>> {
  const plans = new Map(state.analysis.plan.sections.map((p) => [p.sectionId, p]));
  const resolved: Record<string, "source" | "target" | MergedSection> = {};
  const written: Array<{ sectionId: string; version: SectionVersion }> = [];
  for (const [sectionId, choice] of Object.entries(given)) {
    const plan = plans.get(sectionId);
    if (typeof choice === "string" || !plan?.merged.conflict) {
      // Not in conflict: the engine reports it as ignored; nothing is stored.
      resolved[sectionId] = typeof choice === "string" ? choice : { blobHash: "" };
      continue;
    }
    const like = state.sectionsByHash.get((plan.source ?? plan.target)!)!;
    const name = choice.name ?? like.name;
    assertSectionContentAllowed(name, choice.content, `resolutions[${sectionId}]`);
    written.push({ sectionId, version: { ...like, name, content: choice.content } });
  }
  const hashes = await putSections(
    tx,
    written.map((w) => w.version),
  );
  written.forEach((w, i) => {
    resolved[w.sectionId] = { blobHash: hashes[i]! };
    state.sectionsByHash.set(hashes[i]!, w.version);
  });
  return resolved;
}

/** On a fast-forward nothing is in conflict, so every resolution given is ignored. */
function ignoredResolutions(resolutions: ExecuteResolutions): string[] {
  const given = [
    ...Object.keys(resolutions.sections ?? {}).map((id) => `resolution for section ${id}`),
    resolutions.tagResolution ? "tagResolution" : "",
    ...Object.keys(resolutions.scalarPropertyResolutions ?? {}).map((id) => `scalarPropertyResolutions for column ${id}`),
    resolutions.resolvedPath !== undefined ? "resolvedPath" : "",
    resolutions.documentDeletionResolution ? "documentDeletionResolution" : "",
  ].filter(Boolean);
  return given.map((g) => `${g} ignored: the merge was a fast-forward, nothing was in conflict`);
}
