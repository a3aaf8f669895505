/**
 * A merge request's merge as the branches stand now, read and shown: loads
 * what the pure engine (server/core/merge-analysis.ts) needs (both heads,
 * their merge bases, a virtual base for criss-cross histories, and only the
 * section blobs whose hashes differ), runs the analysis, and presents it:
 * `analyze`'s view with the message a merge would write, and the sides
 * (heads, trees, sections brought) that reviews are judged on. Executing the
 * merge is merge-execution.ts; the approval rule is merge-approvals.ts.
 */
import type { ApprovedSection } from "@/db/schema";
import { mergeCommitMessage } from "@/server/core/commit-messages";
import type { DocumentTree, SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import {
  analyzeMerge,
  hashesNeededForPlan,
  type MergeAnalysis,
  type MergeSectionEntry,
  planMerge,
  type PropertyConflict,
} from "@/server/core/merge-analysis";
import { type ProposedSectionMerge, proposeSectionMerge } from "@/server/core/section-three-way";
import { buildVirtualBase } from "@/server/core/virtual-base";
import { createCache } from "@/server/store/caches";
import { CommitGraph, type CommitRecord, commitsOnlyIn, mergeBases } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, getBranch, pathsHeldByOtherDocuments } from "@/server/store/documents";
import type { MergeRequestRow } from "@/server/store/merge-requests";
import { loadSections, loadTree } from "@/server/store/objects";
import { type DocumentAccess, hidingAtDefaultHead, type SectionRules, sectionRules } from "@/server/access/documents";
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
   * Only when asked for (`proposals`): for a section in conflict whose versions hold only text, a line-level three-way
   * merge of its text, the starting point for a `merged` resolution; null otherwise. Asked for, not sent by default: on
   * a large merge the proposals are a fifth of the answer, and only a reader resolving by hand needs them.
   */
  proposedMerge?: ProposedSectionMerge | null;
}

/** What analyze adds on request. */
export interface AnalysisOptions {
  /** Each conflicting section's proposedMerge. */
  proposals?: boolean;
}

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

/** Everything one look at the branches found: the engine's analysis and what the reader may see of it. */
export interface MergeState {
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

export async function loadMergeState(
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

/** `analyze`'s answer: the analysis as the reader may see it (without the generated message, which analyzeMergeRequest adds). */
export function analysisView(request: MergeRequestRow, state: MergeState, options: AnalysisOptions = {}): MergeAnalysisView {
  const { analysis } = state;
  const plans = new Map(analysis.plan.sections.map((p) => [p.sectionId, p]));
  const versionOf = (hash: string | null) => (hash === null ? null : state.sectionsByHash.get(hash)!);
  const withProposal = (entry: MergeSectionEntry): MergeSectionView => {
    if (!options.proposals) return entry;
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

export async function analyzeMergeRequest(
  tx: Tx,
  request: MergeRequestRow,
  access: DocumentAccess,
  options: AnalysisOptions = {},
): Promise<MergeAnalysisView> {
  // The hiding at the default head is read once for this access (the reader's rules use it too), alongside the merge state.
  const [state, hiding] = await Promise.all([loadMergeState(tx, request, access, { lockTarget: false }), hidingAtDefaultHead(tx, access)]);
  const current = analysisView(request, state, options);
  if (current.fastForward || current.upToDate) return current;
  const hidingNow = [...hiding.keys()].sort();
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
export async function generatedMessage(tx: Tx, request: MergeRequestRow, state: MergeState, merged: DocumentTree) {
  const sourceCommits = await commitsOnlyIn(state.graph, state.sourceHead.id, [state.targetHead.id]);
  const message = mergeCommitMessage(
    request.sourceBranch,
    request.targetBranch,
    await quotableMessages(tx, state.document, state.graph, sourceCommits, [state.targetTree, merged]),
  );
  return { message, sourceCommits: sourceCommits.length };
}

/** The sides reviews are judged on, from a loaded merge state. */
export function sidesOf(state: MergeState): BranchSides {
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
  return { analysis: analysisView(request, state), seen, sides: sidesOf(state) };
}

/** Both branches now and the sections the merge brings, `hidden` as the reader with `access` sees them. */
export async function branchSides(tx: Tx, request: MergeRequestRow, access: DocumentAccess): Promise<BranchSides> {
  return sidesOf(await loadMergeState(tx, request, access, { lockTarget: false }));
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
