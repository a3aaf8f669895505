/**
 * Three-way merge analysis of two document trees against their merge base
 * (DESIGN.md §4). Pure: compares blob hashes, needs section content only for
 * the sections whose hashes differ (names and diffs), and never does I/O.
 *
 *   planMerge(base, source, target)       hash-only decisions, no content
 *   analyzeMerge({ ..., sectionsByHash }) plan + names + unified diffs (the analyze result)
 *   buildMergedTree(analysis, resolutions) the merged tree, or exactly what is missing
 *
 * Statuses describe what the merge brings into the target (three-dot view):
 *
 * | base | source          | target               | status    | merged result |
 * |------|-----------------|----------------------|-----------|---------------|
 * | =    | =               | =                    | (not listed: nothing differs) | base |
 * | x    | changed         | = base               | modified  | source        |
 * | x    | = base          | changed / deleted    | unchanged | target        |
 * | x    | changed         | changed, same hash   | unchanged | either        |
 * | x    | changed         | changed, different   | conflict  | resolution    |
 * | x    | deleted         | = base               | deleted   | removed       |
 * | x    | deleted         | changed              | conflict  | resolution    |
 * | x    | changed         | deleted              | conflict  | resolution    |
 * | x    | deleted         | deleted              | unchanged | removed       |
 * | -    | added           | -                    | added     | source        |
 * | -    | -               | added                | unchanged | target (kept) |
 * | -    | added           | added, same hash     | unchanged | either        |
 * | -    | added           | added, different     | conflict  | resolution    |
 *
 * The last two rows (the same section id added on both sides) are not in the
 * DESIGN table; they can happen after criss-cross merges and follow git's
 * add/add rule.
 *
 * Only sections whose three hashes are not all equal are listed in
 * `sections` (their names need their content, and unchanged sections are
 * never loaded — see hashesNeededForAnalysis).
 */
import type { DocumentTree, PropertyValue, SectionVersion, TreeEntry } from "./document-model";
import { sectionToMarkdown } from "./section-markdown";
import { unifiedDiff } from "./text-diff";
import { sameList } from "./lists";

export type SectionStatus = "added" | "deleted" | "modified" | "conflict" | "unchanged";
export type Side = "source" | "target";

/** One entry of the analyze result (spec §2.7). */
export interface MergeSectionEntry {
  sectionId: string;
  name: string;
  status: SectionStatus;
  /**
   * Unified diff base → source of the section's markdown: what the merge brings. "" for an unchanged section (the
   * merge leaves the target's version, whatever either side did) and when the source did not change it.
   */
  sourceDiff: string;
  /** Unified diff base → target, for a conflict only (what the source's change meets); "" for every other status. */
  targetDiff: string;
}

export interface PropertyConflict {
  columnId: string;
  base: PropertyValue | null;
  source: PropertyValue | null;
  target: PropertyValue | null;
}

/** A three-way merged value: decided, or a conflict that needs a resolution. */
export type MergedValue<T> = { conflict: false; value: T } | { conflict: true };

/** The hash-level decision for one section whose hashes are not all equal. */
export interface SectionPlan {
  sectionId: string;
  status: SectionStatus;
  /** Blob hash on each side; null = absent on that side. */
  base: string | null;
  source: string | null;
  target: string | null;
  /** Merged blob hash (null = removed) when decided; conflict when a resolution is needed. */
  merged: MergedValue<string | null>;
}

/** Everything buildMergedTree needs; JSON-serialisable. Not meant for clients. */
export interface MergePlan {
  base: DocumentTree;
  source: DocumentTree;
  target: DocumentTree;
  /** Every section id of base ∪ source ∪ target in merged order, including ids the merge removes. */
  order: string[];
  /** Sections whose hashes are not all equal, in merged order. */
  sections: SectionPlan[];
  /** Sorted unique tag ids. Set-level three-way: conflict only when both sides changed the set differently. */
  tags: MergedValue<string[]>;
  /** Merged value of every column that is not in conflict (absent key = unset). */
  properties: Record<string, PropertyValue>;
  propertyConflicts: PropertyConflict[];
  /** The three-way merged path; conflict when both sides changed it differently. */
  path: MergedValue<string>;
  /** True when the merged path is held by another live document (reported by the caller's callback). */
  pathTaken: boolean;
  /** Conflict = both sides changed it differently; buildMergedTree then takes the source's value. */
  name: MergedValue<string>;
  description: MergedValue<string | null>;
  /** Conflict = deleted on one side and changed (anything) on the other. */
  deleted: MergedValue<boolean>;
}

export interface MergeAnalysis {
  hasConflicts: boolean;
  hasTagConflicts: boolean;
  hasPathCollision: boolean;
  hasDocumentDeletionConflict: boolean;
  /** Sections whose hashes are not all equal, in merged order. */
  sections: MergeSectionEntry[];
  propertyConflicts: PropertyConflict[];
  plan: MergePlan;
}

export interface AnalyzeMergeInput {
  base: DocumentTree;
  source: DocumentTree;
  target: DocumentTree;
  /** Every blob of hashesNeededForAnalysis(base, source, target). */
  sectionsByHash: ReadonlyMap<string, SectionVersion>;
  /**
   * Whether another live document of the workspace holds `path`. Asked only for
   * the merged path, only when it differs from the target's path.
   */
  isPathTakenByAnotherDocument?: (path: string) => boolean;
  /** The plan of these trees when the caller already made one (to know which blobs to load). */
  plan?: MergePlan;
}

/** A section version the reviewer wrote for a conflicting section, by the hash of its (already stored) blob. */
export interface MergedSection {
  blobHash: string;
}

export interface MergeResolutions {
  /**
   * Per section in conflict: `source` keeps the incoming version (removed if the source deleted it), `target` the
   * target's, a MergedSection the version the reviewer wrote.
   */
  sections?: Record<string, Side | MergedSection>;
  tagResolution?: Side;
  scalarPropertyResolutions?: Record<string, Side>;
  resolvedPath?: string;
  documentDeletionResolution?: "delete" | "keep";
}

export interface MissingResolutions {
  /** Section ids in conflict without a resolution, in merged order. */
  sections: string[];
  tags: boolean;
  /** Column ids in conflict without a resolution. */
  properties: string[];
  path: boolean;
  documentDeletion: boolean;
}

export type MergeBuildResult = { tree: DocumentTree; ignored: string[] } | { missing: MissingResolutions; ignored: string[] };

// ---------------------------------------------------------------------------
// Helpers

function entryMap(tree: DocumentTree): Map<string, string> {
  const map = new Map<string, string>();
  for (const e of tree.sections) map.set(e.sectionId, e.blobHash);
  return map;
}

function sortedTags(tags: readonly string[]): string[] {
  return [...new Set(tags)].sort();
}

function sameSections(a: readonly TreeEntry[], b: readonly TreeEntry[]): boolean {
  return a.length === b.length && a.every((e, i) => e.sectionId === b[i]!.sectionId && e.blobHash === b[i]!.blobHash);
}

function sameProperties(a: Record<string, PropertyValue>, b: Record<string, PropertyValue>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

/** Plain three-way merge of a scalar. */
function merge3<T>(base: T, source: T, target: T, eq: (x: T, y: T) => boolean = Object.is): MergedValue<T> {
  if (eq(source, target)) return { conflict: false, value: source };
  if (eq(source, base)) return { conflict: false, value: target };
  if (eq(target, base)) return { conflict: false, value: source };
  return { conflict: true };
}

/** Did `side` change anything at all (other than the deleted flag) relative to `base`? */
export function changedApartFromDeletion(base: DocumentTree, side: DocumentTree): boolean {
  return (
    !sameSections(base.sections, side.sections) ||
    !sameList(sortedTags(base.tagIds), sortedTags(side.tagIds)) ||
    !sameProperties(base.properties, side.properties) ||
    base.path !== side.path ||
    base.name !== side.name ||
    base.description !== side.description
  );
}

/** Section decision from the three hashes (null = absent); undefined when all are equal. */
export function classifySection(
  base: string | null,
  source: string | null,
  target: string | null,
): { status: SectionStatus; merged: MergedValue<string | null> } | undefined {
  if (base === source && source === target) return undefined;
  if (source === target) return { status: "unchanged", merged: { conflict: false, value: source } };
  if (source === base) return { status: "unchanged", merged: { conflict: false, value: target } };
  if (target === base) {
    // Only the source changed it.
    const status: SectionStatus = base === null ? "added" : source === null ? "deleted" : "modified";
    return { status, merged: { conflict: false, value: source } };
  }
  return { status: "conflict", merged: { conflict: true } };
}

// ---------------------------------------------------------------------------
// Order

/**
 * The ids of `before` that `after` keeps in their relative order: a longest
 * common subsequence of the two orders (a longest increasing subsequence of
 * `before` positions along `after`, ties broken deterministically). Ids of
 * `before` outside it, and present in `after`, are the ones `after` moved.
 */
export function keptInPlace(before: readonly string[], after: readonly string[]): Set<string> {
  const beforeIndex = new Map(before.map((id, i) => [id, i]));
  const shared = after.filter((id) => beforeIndex.has(id));
  const seq = shared.map((id) => beforeIndex.get(id)!);
  const tails: number[] = [];
  const prev = new Array<number>(seq.length).fill(-1);
  for (let k = 0; k < seq.length; k++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (seq[tails[mid]!]! < seq[k]!) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[k] = tails[lo - 1]!;
    tails[lo] = k;
  }
  const kept = new Set<string>();
  for (let k = tails.length > 0 ? tails[tails.length - 1]! : -1; k !== -1; k = prev[k]!) kept.add(shared[k]!);
  return kept;
}

/**
 * Three-way merge of section order. Returns every id of base ∪ source ∪ target
 * exactly once (callers drop the ids the merge removes).
 *
 * 1. Shared ids (present on all three sides) form the skeleton. The ids the
 *    source moved are those outside a longest common subsequence of the base
 *    order and the source order of the shared ids (computed as a longest
 *    increasing subsequence, ties broken deterministically). The skeleton is
 *    the target's order of the shared ids minus the ones the source moved.
 *    So: only the target reordered → the target's order; only the source
 *    reordered → the source's order (see 2); both → the source's order wins
 *    for the sections the source moved, the rest keeps the target's order.
 * 2. Every other id is placed right after the id that precedes it on its
 *    anchor side, or at the front when nothing precedes it: ids present in the
 *    source (the ones the source moved, and additions) anchor on the source,
 *    in source order; then ids present in the target but not in the source on
 *    the target; then ids only in the base on the base. Several ids placed
 *    after the same predecessor keep that pass order (source, target, base),
 *    and a chain of additions stays together.
 */
export function mergeSectionOrder(base: readonly string[], source: readonly string[], target: readonly string[]): string[] {
  const inS = new Set(source);
  const inT = new Set(target);
  const kept = keptInPlace(
    base.filter((id) => inS.has(id) && inT.has(id)),
    source,
  );

  const skeleton = target.filter((id) => kept.has(id));
  const placed = new Set(skeleton);
  const children = new Map<string, string[]>();
  const front: string[] = [];
  const attach = (id: string, parent: string | undefined) => {
    if (placed.has(id)) return;
    placed.add(id);
    if (parent === undefined) front.push(id);
    else {
      const list = children.get(parent);
      if (list) list.push(id);
      else children.set(parent, [id]);
    }
  };
  for (const order of [source, target, base]) {
    order.forEach((id, i) => {
      attach(id, i > 0 ? order[i - 1] : undefined);
    });
  }

  const out: string[] = [];
  const stack = [...front, ...skeleton].reverse();
  while (stack.length > 0) {
    const id = stack.pop()!;
    out.push(id);
    const kids = children.get(id);
    if (kids) for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Plan and analysis

/** Blob hashes analyzeMerge needs: every side's hash of each section whose hashes are not all equal. */
export function hashesNeededForAnalysis(base: DocumentTree, source: DocumentTree, target: DocumentTree): string[] {
  return hashesNeededForPlan(planMerge(base, source, target));
}

/** The blob hashes analyzeMerge needs for a plan: those of the sections whose hashes differ. */
export function hashesNeededForPlan(plan: MergePlan): string[] {
  const needed = new Set<string>();
  for (const p of plan.sections) {
    if (p.base !== null) needed.add(p.base);
    if (p.source !== null) needed.add(p.source);
    if (p.target !== null) needed.add(p.target);
  }
  return [...needed];
}

export interface PlanOptions {
  isPathTakenByAnotherDocument?: (path: string) => boolean;
}

/** The hash-only part of the analysis: decisions, conflicts and merged order; needs no content. */
export function planMerge(base: DocumentTree, source: DocumentTree, target: DocumentTree, options: PlanOptions = {}): MergePlan {
  const b = entryMap(base);
  const s = entryMap(source);
  const t = entryMap(target);
  const order = mergeSectionOrder(
    base.sections.map((e) => e.sectionId),
    source.sections.map((e) => e.sectionId),
    target.sections.map((e) => e.sectionId),
  );
  const sections: SectionPlan[] = [];
  for (const sectionId of order) {
    const hb = b.get(sectionId) ?? null;
    const hs = s.get(sectionId) ?? null;
    const ht = t.get(sectionId) ?? null;
    const decided = classifySection(hb, hs, ht);
    if (decided) sections.push({ sectionId, base: hb, source: hs, target: ht, ...decided });
  }

  const tags = merge3(sortedTags(base.tagIds), sortedTags(source.tagIds), sortedTags(target.tagIds), sameList);

  const properties: Record<string, PropertyValue> = {};
  const propertyConflicts: PropertyConflict[] = [];
  const columns = [
    ...new Set([...Object.keys(base.properties), ...Object.keys(source.properties), ...Object.keys(target.properties)]),
  ].sort();
  for (const columnId of columns) {
    const pb = Object.hasOwn(base.properties, columnId) ? base.properties[columnId]! : null;
    const ps = Object.hasOwn(source.properties, columnId) ? source.properties[columnId]! : null;
    const pt = Object.hasOwn(target.properties, columnId) ? target.properties[columnId]! : null;
    const m = merge3<PropertyValue | null>(pb, ps, pt);
    if (m.conflict) propertyConflicts.push({ columnId, base: pb, source: ps, target: pt });
    else if (m.value !== null) properties[columnId] = m.value;
  }

  const path = merge3(base.path, source.path, target.path);
  const name = merge3(base.name, source.name, target.name);
  const description = merge3(base.description, source.description, target.description);

  let deleted = merge3(base.deleted, source.deleted, target.deleted);
  if (!base.deleted) {
    if (source.deleted && !target.deleted && changedApartFromDeletion(base, target)) deleted = { conflict: true };
    if (target.deleted && !source.deleted && changedApartFromDeletion(base, source)) deleted = { conflict: true };
  }

  // A merged path that differs from the target's must not be held by another
  // live document. Not asked when the merge certainly ends deleted.
  const definitelyDeleted = !deleted.conflict && deleted.value;
  const pathTaken =
    !path.conflict && !definitelyDeleted && path.value !== target.path && (options.isPathTakenByAnotherDocument?.(path.value) ?? false);

  return { base, source, target, order, sections, tags, properties, propertyConflicts, path, pathTaken, name, description, deleted };
}

function versionOf(sectionsByHash: ReadonlyMap<string, SectionVersion>, hash: string | null): SectionVersion | null {
  if (hash === null) return null;
  const version = sectionsByHash.get(hash);
  if (!version) throw new Error(`analyzeMerge: section blob ${hash} was not provided (see hashesNeededForAnalysis)`);
  return version;
}

/** The analyze result (spec §2.7) plus the plan buildMergedTree needs. */
export function analyzeMerge(input: AnalyzeMergeInput): MergeAnalysis {
  const { base, source, target, sectionsByHash } = input;
  const plan = input.plan ?? planMerge(base, source, target, { isPathTakenByAnotherDocument: input.isPathTakenByAnotherDocument });
  const markdown = new Map<string, string>();
  const md = (version: SectionVersion | null, hash: string | null): string => {
    if (version === null || hash === null) return "";
    let text = markdown.get(hash);
    if (text === undefined) {
      text = sectionToMarkdown(version);
      markdown.set(hash, text);
    }
    return text;
  };
  const sections: MergeSectionEntry[] = plan.sections.map((p) => {
    const vb = versionOf(sectionsByHash, p.base);
    const vs = versionOf(sectionsByHash, p.source);
    const vt = versionOf(sectionsByHash, p.target);
    // Diffs show what the merge brings (every status but unchanged) and, for a conflict, what it meets on the target.
    const brought = p.status !== "unchanged";
    return {
      sectionId: p.sectionId,
      name: (vs ?? vt ?? vb)!.name,
      status: p.status,
      sourceDiff: brought && p.source !== p.base ? unifiedDiff(md(vb, p.base), md(vs, p.source), { before: "base", after: "source" }) : "",
      targetDiff:
        p.status === "conflict" && p.target !== p.base
          ? unifiedDiff(md(vb, p.base), md(vt, p.target), { before: "base", after: "target" })
          : "",
    };
  });
  return {
    hasConflicts: plan.sections.some((p) => p.merged.conflict),
    hasTagConflicts: plan.tags.conflict,
    hasPathCollision: plan.path.conflict || plan.pathTaken,
    hasDocumentDeletionConflict: plan.deleted.conflict,
    sections,
    propertyConflicts: plan.propertyConflicts,
    plan,
  };
}

// ---------------------------------------------------------------------------
// Building the merged tree

/** Fully decided values for every conflict of a plan (used by buildMergedTree and the virtual base). */
export interface MergeChoices {
  /** Merged hash (null = removed) of every section in conflict. */
  sections: ReadonlyMap<string, string | null>;
  tagIds: readonly string[];
  /** Values (null = unset) of every column in conflict. */
  properties: Record<string, PropertyValue | null>;
  path: string;
  name: string;
  description: string | null;
  deleted: boolean;
}

/** Assembles the merged tree from a plan and the values chosen for its conflicts. */
export function assembleMergedTree(plan: MergePlan, choices: MergeChoices): DocumentTree {
  const decided = new Map<string, string | null>();
  for (const p of plan.sections) {
    if (p.merged.conflict) {
      const chosen = choices.sections.get(p.sectionId);
      if (chosen === undefined) throw new Error(`assembleMergedTree: no choice for section ${p.sectionId}`);
      decided.set(p.sectionId, chosen);
    } else decided.set(p.sectionId, p.merged.value);
  }
  const targetHashes = entryMap(plan.target);
  const sections: TreeEntry[] = [];
  for (const sectionId of plan.order) {
    // Ids not in plan.sections have the same hash on all three sides.
    const blobHash = decided.has(sectionId) ? decided.get(sectionId)! : (targetHashes.get(sectionId) ?? null);
    if (blobHash !== null) sections.push({ sectionId, blobHash });
  }
  const properties: Record<string, PropertyValue> = { ...plan.properties };
  for (const [columnId, value] of Object.entries(choices.properties)) if (value !== null) properties[columnId] = value;
  return {
    path: choices.path,
    name: choices.name,
    description: choices.description,
    deleted: choices.deleted,
    tagIds: sortedTags(choices.tagIds),
    properties,
    sections,
  };
}

/**
 * The merged tree for the given resolutions, or the list of exactly the
 * resolutions still missing. `ignored` lists resolutions given for things
 * that are not in conflict (they are not applied).
 *
 * Choices made here:
 * - name / description changed differently on both sides: the source's value
 *   wins and nothing is reported (they are labels, not content; the target's
 *   value stays in history). Keeps the spec's result shape unchanged.
 * - documentDeletionResolution "delete": the result is the target's tree
 *   marked deleted (the target keeps its content for a later restore; the
 *   source's other changes are not merged), and no other resolution is
 *   needed. "keep": not deleted, everything else merged as usual.
 * - resolvedPath is used as given; validating its syntax and that no other
 *   live document holds it is the caller's job.
 */
export function buildMergedTree(analysis: { plan: MergePlan }, resolutions: MergeResolutions): MergeBuildResult {
  const { plan } = analysis;
  const ignored: string[] = [];
  const missing: MissingResolutions = { sections: [], tags: false, properties: [], path: false, documentDeletion: false };

  const conflictSections = new Map(plan.sections.filter((p) => p.merged.conflict).map((p) => [p.sectionId, p]));
  for (const sectionId of Object.keys(resolutions.sections ?? {})) {
    if (!conflictSections.has(sectionId)) ignored.push(`resolution for section ${sectionId} ignored: that section is not in conflict`);
  }
  if (resolutions.tagResolution !== undefined && !plan.tags.conflict) ignored.push("tagResolution ignored: there is no tag conflict");
  const conflictColumns = new Set(plan.propertyConflicts.map((c) => c.columnId));
  for (const columnId of Object.keys(resolutions.scalarPropertyResolutions ?? {})) {
    if (!conflictColumns.has(columnId))
      ignored.push(`scalarPropertyResolutions entry for column ${columnId} ignored: that property is not in conflict`);
  }
  const pathCollision = plan.path.conflict || plan.pathTaken;
  if (resolutions.resolvedPath !== undefined && !pathCollision) ignored.push("resolvedPath ignored: there is no path collision");
  if (resolutions.documentDeletionResolution !== undefined && !plan.deleted.conflict) {
    ignored.push("documentDeletionResolution ignored: there is no document deletion conflict");
  }

  let deleted: boolean;
  if (plan.deleted.conflict) {
    const choice = resolutions.documentDeletionResolution;
    if (choice === "delete") {
      return { tree: { ...plan.target, tagIds: sortedTags(plan.target.tagIds), deleted: true }, ignored };
    }
    if (choice === undefined) missing.documentDeletion = true;
    deleted = false;
  } else deleted = plan.deleted.value;

  const sectionChoices = new Map<string, string | null>();
  for (const p of conflictSections.values()) {
    const side = resolutions.sections?.[p.sectionId];
    if (side === undefined) missing.sections.push(p.sectionId);
    else sectionChoices.set(p.sectionId, side === "source" ? p.source : side === "target" ? p.target : side.blobHash);
  }

  let tagIds: readonly string[] = [];
  if (plan.tags.conflict) {
    if (resolutions.tagResolution === undefined) missing.tags = true;
    else tagIds = resolutions.tagResolution === "source" ? plan.source.tagIds : plan.target.tagIds;
  } else tagIds = plan.tags.value;

  const properties: Record<string, PropertyValue | null> = {};
  for (const c of plan.propertyConflicts) {
    const side = resolutions.scalarPropertyResolutions?.[c.columnId];
    if (side === undefined) missing.properties.push(c.columnId);
    else properties[c.columnId] = side === "source" ? c.source : c.target;
  }

  let path = "";
  if (pathCollision) {
    if (resolutions.resolvedPath === undefined) missing.path = true;
    else path = resolutions.resolvedPath;
  } else if (!plan.path.conflict) path = plan.path.value;

  if (missing.documentDeletion || missing.sections.length > 0 || missing.tags || missing.properties.length > 0 || missing.path) {
    return { missing, ignored };
  }

  const tree = assembleMergedTree(plan, {
    sections: sectionChoices,
    tagIds,
    properties,
    path,
    name: plan.name.conflict ? plan.source.name : plan.name.value,
    description: plan.description.conflict ? plan.source.description : plan.description.value,
    deleted,
  });
  return { tree, ignored };
}
