/**
 * The I/O around the pure merge engine (server/core/merge-analysis.ts):
 * loads what it needs for a merge request (both heads, their merge bases, a
 * virtual base for criss-cross histories, and only the section blobs whose
 * hashes differ), runs the analysis, and executes the merge it decides
 * through commitToBranch.
 */
import type { ApprovedSection } from "@/db/schema";
import type { Block } from "@/server/core/blocks";
import { exceedsCommitMessageLimit, mergeCommitMessage } from "@/server/core/commit-messages";
import { changedSectionIds, type DocumentTree, hashTree, normalizeTree, type SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import {
  analyzeMerge,
  buildMergedTree,
  hashesNeededForPlan,
  type MergeAnalysis,
  type MergeResolutions,
  type MergedSection,
  type MergeSectionEntry,
  type MissingResolutions,
  planMerge,
  type PropertyConflict,
} from "@/server/core/merge-analysis";
import { MAX_COMMIT_MESSAGE_CHARS } from "@/server/core/names";
import { assertSectionContentAllowed } from "@/server/core/section-rules";
import { type ProposedSectionMerge, proposeSectionMerge } from "@/server/core/section-three-way";
import { buildVirtualBase } from "@/server/core/virtual-base";
import { createCache } from "@/server/store/caches";
import { commitToBranch } from "@/server/store/commit-to-branch";
import { CommitGraph, type CommitRecord, commitsOnlyIn, mergeBases, newCommitRecord } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { assertPathFree, type DocumentRow, getBranch, pathsHeldByOtherDocuments } from "@/server/store/documents";
import type { MergeRequestRow } from "@/server/store/merge-requests";
import { loadSections, loadTree, putSections } from "@/server/store/objects";
import {
  assertSectionChangesAllowed,
  atLeastEdit,
  type DocumentAccess,
  type SectionRules,
  sectionChangesRefused,
  sectionRules,
  sectionsHidingAtDefaultHead,
} from "@/server/access/documents";
import { assertAgentKeepsSectionAccess } from "./branch-write";
import { quotableMessages } from "./history";

export interface MergeAnalysisView {
  mergeRequestId: string;
  hasConflicts: boolean;
  hasTagConflicts: boolean;
  hasPathCollision: boolean;
  hasDocumentDeletionConflict: boolean;
  /** Scalar properties changed differently on both sides; resolve each with scalarPropertyResolutions. */
  propertyConflicts: PropertyConflict[];
  /** Sections that differ between base, source and target, in merged order. Sections identical on all three, and sections you may not see, are omitted. */
  sections: MergeSectionView[];
  /** Conflicting sections you may not see: they still block the merge until someone allowed to see them resolves it. */
  hiddenConflicts: number;
  /** The target has no commits of its own: execute just moves it to the source head. */
  fastForward: boolean;
  /** The target already contains every source commit: there is nothing to merge. */
  upToDate: boolean;
  sourceHeadCommitId: string;
  targetHeadCommitId: string;
  mergeBaseCommitIds: string[];
  /** The message execute writes when given no commitMessage (null for a fast-forward or nothing to merge); may exceed the 1000-character limit. */
  generatedCommitMessage: string | null;
}

export interface MergeSectionView extends MergeSectionEntry {
  /**
   * For a section in conflict whose versions hold only text: a line-level three-way merge of its text, the starting
   * point for a `merged` resolution. Null otherwise.
   */
  proposedMerge: ProposedSectionMerge | null;
}

/** A conflicting section's content as the reviewer wrote it; the name defaults to the source's (else the target's). */
export interface WrittenSection {
  content: Block[];
  name?: string;
}

/** Resolutions as execute receives them: a conflicting section may take a version the reviewer wrote. */
export type ExecuteResolutions = Omit<MergeResolutions, "sections"> & { sections?: Record<string, "source" | "target" | WrittenSection> };

/** The heads of both branches, their trees and the sections the merge brings, as reviews are judged on them. */
export interface BranchSides {
  sourceHeadCommitId: string;
  targetHeadCommitId: string;
  sourceTree: DocumentTree;
  targetTree: DocumentTree;
  /** Every section the merge brings (a status other than unchanged), sections the reader may not see included. */
  brought: BroughtSection[];
}

/** A section the merge brings, with its version on each side now; `hidden` when the reader may not see it (then its name is never shown). */
export interface BroughtSection extends ApprovedSection {
  name: string;
  hidden: boolean;
}

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

interface MergeState {
  document: DocumentRow;
  graph: CommitGraph;
  sourceHead: CommitRecord;
  targetHead: CommitRecord;
  bases: readonly string[];
  sourceTree: DocumentTree;
  targetTree: DocumentTree;
  analysis: MergeAnalysis;
  /** Every section version the analysis looked at, by hash. */
  sectionsByHash: Map<string, SectionVersion>;
  /** What the reader may do with each section of the versions involved. */
  rules: SectionRules;
  /** Section ids of the analysis the reader may not see (in any of the versions involved). */
  hidden: Set<string>;
}

async function loadMergeState(
  tx: Tx,
  request: MergeRequestRow,
  access: DocumentAccess,
  options: { lockTarget: boolean },
): Promise<MergeState> {
  const { document } = access;
  const [target, source] = await Promise.all([
    getBranch(tx, document.id, request.targetBranch, { forUpdate: options.lockTarget }),
    getBranch(tx, document.id, request.sourceBranch),
  ]);
  const graph = new CommitGraph(tx, document.id);
  const [sourceHead, targetHead] = await graph.getMany([source.headCommitId, target.headCommitId]);
  // The heads' trees, and which of their paths other documents hold, do not depend on the merge-base walk: fetch them alongside it.
  const [sourceTree, targetTree] = await Promise.all([loadTree(tx, sourceHead!.treeHash), loadTree(tx, targetHead!.treeHash)]);
  const [bases, heldAtHeads] = await Promise.all([
    mergeBases(graph, sourceHead!.id, targetHead!.id),
    pathsHeldByOtherDocuments(tx, document.workspaceId, document.id, [sourceTree.path, targetTree.path]),
  ]);
  const treeOf = async (commitId: string) => loadTree(tx, (await graph.get(commitId)).treeHash);
  const virtual = await buildVirtualBase(bases, {
    treeOf,
    mergeBasesOf: (a, b) => mergeBases(graph, a, b),
    loadSections: (hashes) => loadSections(tx, hashes),
  });
  const basePathUnchecked = virtual.tree.path !== sourceTree.path && virtual.tree.path !== targetTree.path;
  const held = basePathUnchecked
    ? new Set([...heldAtHeads, ...(await pathsHeldByOtherDocuments(tx, document.workspaceId, document.id, [virtual.tree.path]))])
    : heldAtHeads;
  // Plan on hashes first; only the sections whose hashes differ are then loaded.
  const plan = planMerge(virtual.tree, sourceTree, targetTree, { isPathTakenByAnotherDocument: (path) => held.has(path) });
  const needed = hashesNeededForPlan(plan).filter((h) => !virtual.sections.has(h));
  const sectionsByHash = new Map<string, SectionVersion>([...(await loadSections(tx, needed)), ...virtual.sections]);
  const analysis = analyzeMerge({ base: virtual.tree, source: sourceTree, target: targetTree, sectionsByHash, plan });
  const versionOf = (hash: string | null) => (hash === null ? null : sectionsByHash.get(hash));
  const rules = await sectionRules(tx, access, null);
  const hidden = new Set(
    analysis.plan.sections
      .filter((p) =>
        [p.base, p.source, p.target].some((hash) => hash !== null && rules.permission(p.sectionId, versionOf(hash)!) === "none"),
      )
      .map((p) => p.sectionId),
  );
  return {
    document,
    graph,
    sourceHead: sourceHead!,
    targetHead: targetHead!,
    bases,
    sourceTree,
    targetTree,
    analysis,
    sectionsByHash,
    rules,
    hidden,
  };
}

function view(request: MergeRequestRow, state: MergeState): MergeAnalysisView {
  const { analysis } = state;
  const plans = new Map(analysis.plan.sections.map((p) => [p.sectionId, p]));
  const versionOf = (hash: string | null) => (hash === null ? null : state.sectionsByHash.get(hash)!);
  const withProposal = (entry: MergeSectionEntry): MergeSectionView => {
    const p = plans.get(entry.sectionId)!;
    return {
      ...entry,
      proposedMerge: entry.status === "conflict" ? proposeSectionMerge(versionOf(p.base), versionOf(p.source), versionOf(p.target)) : null,
    };
  };
  return {
    mergeRequestId: request.id,
    hasConflicts: analysis.hasConflicts,
    hasTagConflicts: analysis.hasTagConflicts,
    hasPathCollision: analysis.hasPathCollision,
    hasDocumentDeletionConflict: analysis.hasDocumentDeletionConflict,
    propertyConflicts: analysis.propertyConflicts,
    sections: analysis.sections.filter((entry) => !state.hidden.has(entry.sectionId)).map(withProposal),
    hiddenConflicts: analysis.sections.filter((entry) => entry.status === "conflict" && state.hidden.has(entry.sectionId)).length,
    // A fast-forward cannot rename onto a path another document holds; that merge needs a commit with resolvedPath.
    fastForward: state.bases.includes(state.targetHead.id) && state.targetHead.id !== state.sourceHead.id && !analysis.hasPathCollision,
    upToDate: state.bases.includes(state.sourceHead.id),
    sourceHeadCommitId: state.sourceHead.id,
    targetHeadCommitId: state.targetHead.id,
    mergeBaseCommitIds: [...state.bases],
    generatedCommitMessage: null,
  };
}

/**
 * The message `analyze` proposes, by branch names and heads and the sections
 * the default branch hides now: it is the same for every reader, and the
 * commits and trees it is made from never change.
 */
const proposedMessages = createCache<string, string>({
  name: "proposed merge messages",
  keptTrueBy:
    "keyed by both branch names, both head commits (their commits and trees are immutable) and the sections hidden at the default head, all quoting depends on",
  max: 2_000,
});

export async function analyzeMergeRequest(tx: Tx, request: MergeRequestRow, access: DocumentAccess): Promise<MergeAnalysisView> {
  const state = await loadMergeState(tx, request, access, { lockTarget: false });
  const current = view(request, state);
  if (current.fastForward || current.upToDate) return current;
  const hidingNow = [...(await sectionsHidingAtDefaultHead(tx, state.document)).keys()].sort();
  const key = JSON.stringify([request.sourceBranch, request.targetBranch, state.sourceHead.id, state.targetHead.id, hidingNow]);
  let message = proposedMessages.get(key);
  if (message === undefined) {
    // Before resolutions are known, the merged tree is judged by the source's: the message quotes the same commits either way.
    message = (await generatedMessage(tx, request, state, state.sourceTree)).message;
    proposedMessages.set(key, message);
  }
  return { ...current, generatedCommitMessage: message };
}

/** The generated merge message: the source commits since the merge base, never quoting one that touched a section some reader may not see. */
async function generatedMessage(tx: Tx, request: MergeRequestRow, state: MergeState, merged: DocumentTree) {
  const sourceCommits = await commitsOnlyIn(state.graph, state.sourceHead.id, [state.targetHead.id]);
  const message = mergeCommitMessage(
    request.sourceBranch,
    request.targetBranch,
    await quotableMessages(tx, state.document, state.graph, sourceCommits, [state.targetTree, merged]),
  );
  return { message, sourceCommits: sourceCommits.length };
}

function sidesOf(state: MergeState): BranchSides {
  const plans = new Map(state.analysis.plan.sections.map((p) => [p.sectionId, p]));
  return {
    sourceHeadCommitId: state.sourceHead.id,
    targetHeadCommitId: state.targetHead.id,
    sourceTree: state.sourceTree,
    targetTree: state.targetTree,
    brought: state.analysis.sections
      .filter((entry) => entry.status !== "unchanged")
      .map((entry) => {
        const { source, target } = plans.get(entry.sectionId)!;
        return { sectionId: entry.sectionId, source, target, name: entry.name, hidden: state.hidden.has(entry.sectionId) };
      }),
  };
}

/** What an approval records: the analysis the approver was shown, with each section they saw and its hash on both sides. */
export async function reviewSnapshot(
  tx: Tx,
  request: MergeRequestRow,
  access: DocumentAccess,
): Promise<{ analysis: MergeAnalysisView; seen: ApprovedSection[]; sides: BranchSides }> {
  const state = await loadMergeState(tx, request, access, { lockTarget: false });
  const seen = state.analysis.plan.sections
    .filter((p) => !state.hidden.has(p.sectionId))
    .map((p) => ({ sectionId: p.sectionId, source: p.source, target: p.target }));
  return { analysis: view(request, state), seen, sides: sidesOf(state) };
}

/** Both branches now and the sections the merge brings, `hidden` as the reader with `access` sees them. */
export async function branchSides(tx: Tx, request: MergeRequestRow, access: DocumentAccess): Promise<BranchSides> {
  return sidesOf(await loadMergeState(tx, request, access, { lockTarget: false }));
}

/**
 * The review rule: an approval is stale once a section the approver saw has another version on either branch than
 * when they approved (sections they did not see, new ones included, do not matter).
 */
export function approvalIsStale(
  approved: { sourceHead: string; targetHead: string; sections: readonly ApprovedSection[] },
  now: BranchSides,
): boolean {
  if (approved.sourceHead === now.sourceHeadCommitId && approved.targetHead === now.targetHeadCommitId) return false;
  const hashes = (tree: DocumentTree) => new Map(tree.sections.map((e) => [e.sectionId, e.blobHash]));
  const [source, target] = [hashes(now.sourceTree), hashes(now.targetTree)];
  return approved.sections.some(
    (seen) => (source.get(seen.sectionId) ?? null) !== seen.source || (target.get(seen.sectionId) ?? null) !== seen.target,
  );
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
    now: Date;
    resolutions: ExecuteResolutions;
    commitMessage?: string;
    /** The heads the caller reviewed: when a branch has moved since, nothing is merged. */
    expectedHeads?: { source?: string; target?: string };
    /** Further checks on the heads the merge will use and what it brings (the approval rule), run before anything is written. */
    assertMayMerge?: (sides: BranchSides) => void;
  },
): Promise<MergeExecution> {
  const state = await loadMergeState(tx, request, access, { lockTarget: true });
  const current = view(request, state);
  assertHeadsAsReviewed(request, current, options.expectedHeads, "retry with the new head ids");
  options.assertMayMerge?.(sidesOf(state));
  if (current.hiddenConflicts > 0) {
    throw new DomainError(
      "UNRESOLVED_CONFLICTS",
      `The merge has ${current.hiddenConflicts} conflicting section(s) you are not allowed to see. Someone with access to them must resolve and merge this request. Nothing was changed.`,
      { hiddenConflicts: current.hiddenConflicts },
    );
  }
  const base = { mergeRequestId: request.id, status: "merged" as const, targetBranch: request.targetBranch };
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

/** Refuses (BRANCH_MOVED, nothing changed) when either branch is no longer where the caller reviewed it. */
export function assertHeadsAsReviewed(
  request: MergeRequestRow,
  current: Pick<MergeAnalysisView, "sourceHeadCommitId" | "targetHeadCommitId">,
  expected: { source?: string; target?: string } = {},
  then = "retry",
): void {
  const moved = [
    expected.source !== undefined && expected.source !== current.sourceHeadCommitId ? request.sourceBranch : "",
    expected.target !== undefined && expected.target !== current.targetHeadCommitId ? request.targetBranch : "",
  ].filter(Boolean);
  if (moved.length === 0) return;
  throw new DomainError(
    "BRANCH_MOVED",
    `${moved.map((b) => JSON.stringify(b)).join(" and ")} moved since you reviewed merge request ${request.id}. Run \`analyze\` again, look at the fresh changes, then ${then}. Nothing was changed.`,
    { mergeRequestId: request.id, sourceHeadCommitId: current.sourceHeadCommitId, targetHeadCommitId: current.targetHeadCommitId },
  );
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
