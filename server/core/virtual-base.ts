/**
 * Virtual merge base for criss-cross histories (several merge bases), the way
 * git's recursive/ort strategy builds one: the bases are folded pairwise, left
 * to right, and the merge of two of them uses their own merge bases
 * (recursively). The result is a tree that is never stored; it is only the
 * base of the outer merge.
 *
 * Values taken inside the virtual base where the inner merge conflicts:
 * - A section changed differently on both sides (or added on both sides with
 *   different content) gets a synthetic version equal to neither side: one
 *   text block holding git-style conflict markers with both sides' markdown
 *   and hashes. The outer merge therefore reports that section as a conflict
 *   unless both outer sides hold the same content (git writes the file with
 *   conflict markers into the virtual base; same effect).
 * - A section modified on one side and deleted on the other keeps its version
 *   from the inner merge base (git's merge-ort does exactly this at
 *   call depth > 0: "stage 0").
 * - Tag set, scalar property, path, name or description changed differently
 *   on both sides: a synthetic value equal to neither side (tag set: the union
 *   plus a marker tag id; the others: a marker string naming both values), so
 *   the outer merge again conflicts unless both outer sides agree. These
 *   markers never reach a stored tree: the outer merge only ever keeps a
 *   source or target value.
 * - Deleted on one side and changed on the other: not deleted (the inner
 *   base's value, as for modify/delete sections), everything else merged.
 * - Section order: mergeSectionOrder with the earlier base as "source".
 * - "Merged path taken by another document" is not evaluated inside the
 *   virtual base.
 *
 * Synthetic markers are symmetric in the two sides (sorted), so the order of
 * the bases changes at most the section order of the virtual base.
 *
 * "Pure" here means no I/O of its own: commits, merge bases and section blobs
 * come in through the injected `io`.
 */
import type { DocumentTree, PropertyValue, SectionVersion } from "./document-model";
import { hashSection } from "./document-model";
import { sha256Hex } from "./hashing";
import { assembleMergedTree, planMerge, type MergePlan } from "./merge-analysis";
import { sectionToMarkdown } from "./section-markdown";

export interface VirtualBaseIo {
  treeOf(commitId: string): Promise<DocumentTree>;
  /** The best common ancestors of two commits (empty when unrelated). */
  mergeBasesOf(a: string, b: string): Promise<readonly string[]>;
  /** Section blobs by hash; may be asked only for hashes of stored sections. */
  loadSections(hashes: string[]): Promise<Map<string, SectionVersion>>;
}

export interface VirtualBase {
  tree: DocumentTree;
  /**
   * The synthetic section versions the virtual base created, by hash. Put them
   * in sectionsByHash for analyzeMerge (they are not in the store; filter them
   * out of hashesNeededForAnalysis before loading).
   */
  sections: Map<string, SectionVersion>;
}

/** Prefix of every synthetic marker value. */
export const VIRTUAL_BASE_MARKER = "quire:virtual-merge-base-conflict";

/** A node of the fold: a real commit, or a virtual merge whose ancestry is that of its tips. */
interface Node {
  tips: string[];
  tree: DocumentTree;
}

class Folder {
  private readonly trees = new Map<string, Promise<DocumentTree>>();
  private readonly mergeBases = new Map<string, Promise<readonly string[]>>();
  private readonly folds = new Map<string, Promise<DocumentTree>>();
  private readonly loaded = new Map<string, SectionVersion>();
  readonly synthetic = new Map<string, SectionVersion>();

  constructor(private readonly io: VirtualBaseIo) {}

  treeOf(commitId: string): Promise<DocumentTree> {
    let tree = this.trees.get(commitId);
    if (!tree) {
      tree = this.io.treeOf(commitId);
      this.trees.set(commitId, tree);
    }
    return tree;
  }

  private basesOf(a: string, b: string): Promise<readonly string[]> {
    const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
    let bases = this.mergeBases.get(key);
    if (!bases) {
      bases = a === b ? Promise.resolve([a]) : this.io.mergeBasesOf(a, b);
      this.mergeBases.set(key, bases);
    }
    return bases;
  }

  /** Is `a` an ancestor of (or equal to) `b`? */
  private async isAncestor(a: string, b: string): Promise<boolean> {
    if (a === b) return true;
    const bases = await this.basesOf(a, b);
    return bases.length === 1 && bases[0] === a;
  }

  /**
   * Merge bases of two nodes. The common ancestors of two tip sets are the
   * union of the common ancestors of every tip pair, so the best ones are
   * among the pairwise merge bases: keep those that are not an ancestor of
   * another candidate.
   */
  private async nodeBases(x: Node, y: Node): Promise<readonly string[]> {
    if (x.tips.length === 1 && y.tips.length === 1) return this.basesOf(x.tips[0]!, y.tips[0]!);
    const candidates: string[] = [];
    for (const a of x.tips)
      for (const b of y.tips) for (const c of await this.basesOf(a, b)) if (!candidates.includes(c)) candidates.push(c);
    const best: string[] = [];
    for (const c of candidates) {
      let dominated = false;
      for (const d of candidates) {
        if (d !== c && (await this.isAncestor(c, d))) {
          dominated = true;
          break;
        }
      }
      if (!dominated) best.push(c);
    }
    return best;
  }

  /** The (possibly virtual) merge base tree of a list of bases. */
  fold(bases: readonly string[]): Promise<DocumentTree> {
    const key = bases.join("\u0000");
    let tree = this.folds.get(key);
    if (!tree) {
      tree = this.foldUncached(bases);
      this.folds.set(key, tree);
    }
    return tree;
  }

  private async foldUncached(bases: readonly string[]): Promise<DocumentTree> {
    const [first, ...rest] = bases;
    if (first === undefined) throw new Error("buildVirtualBase: no merge base (unrelated histories)");
    let acc: Node = { tips: [first], tree: await this.treeOf(first) };
    for (const next of rest) {
      const other: Node = { tips: [next], tree: await this.treeOf(next) };
      const innerBase = await this.fold(await this.nodeBases(acc, other));
      acc = { tips: [...new Set([...acc.tips, ...other.tips])], tree: await this.mergeVirtual(innerBase, acc.tree, other.tree) };
    }
    return acc.tree;
  }

  private async versions(hashes: Array<string | null>): Promise<Map<string, SectionVersion>> {
    const wanted = [...new Set(hashes.filter((h): h is string => h !== null))];
    const toLoad = wanted.filter((h) => !this.loaded.has(h) && !this.synthetic.has(h));
    if (toLoad.length > 0) {
      const got = await this.io.loadSections(toLoad);
      for (const h of toLoad) {
        const v = got.get(h);
        if (!v) throw new Error(`buildVirtualBase: section blob ${h} not found`);
        this.loaded.set(h, v);
      }
    }
    const out = new Map<string, SectionVersion>();
    for (const h of wanted) out.set(h, (this.synthetic.get(h) ?? this.loaded.get(h))!);
    return out;
  }

  /** Merges two trees for use as a base: every conflict takes a deterministic value. */
  private async mergeVirtual(base: DocumentTree, a: DocumentTree, b: DocumentTree): Promise<DocumentTree> {
    const plan: MergePlan = planMerge(base, a, b);
    const contentConflicts = plan.sections.filter((p) => p.merged.conflict && p.source !== null && p.target !== null);
    const versions = await this.versions(contentConflicts.flatMap((p) => [p.base, p.source, p.target]));

    const sections = new Map<string, string | null>();
    for (const p of plan.sections) {
      if (!p.merged.conflict) continue;
      if (p.source === null || p.target === null) {
        sections.set(p.sectionId, p.base); // modify/delete: the inner base's version
        continue;
      }
      const version = syntheticSection(
        p.source,
        versions.get(p.source)!,
        p.target,
        versions.get(p.target)!,
        p.base === null ? null : versions.get(p.base)!,
      );
      const hash = hashSection(version);
      this.synthetic.set(hash, version);
      sections.set(p.sectionId, hash);
    }

    const properties: Record<string, PropertyValue | null> = {};
    for (const c of plan.propertyConflicts) properties[c.columnId] = marker("property", c.source, c.target);

    return assembleMergedTree(plan, {
      sections,
      tagIds: plan.tags.conflict ? syntheticTags(a.tagIds, b.tagIds) : plan.tags.value,
      properties,
      path: plan.path.conflict ? marker("path", a.path, b.path) : plan.path.value,
      name: plan.name.conflict ? marker("name", a.name, b.name) : plan.name.value,
      description: plan.description.conflict ? marker("description", a.description, b.description) : plan.description.value,
      deleted: plan.deleted.conflict ? false : plan.deleted.value,
    });
  }
}

/** A string equal to neither value, the same whatever the order of the two. */
function marker(kind: string, x: PropertyValue | null, y: PropertyValue | null): string {
  const [p, q] = [JSON.stringify(x), JSON.stringify(y)].sort() as [string, string];
  return `${VIRTUAL_BASE_MARKER}:${kind}:${sha256Hex(`${p}\u0000${q}`)}`;
}

function syntheticTags(x: readonly string[], y: readonly string[]): string[] {
  const sx = [...new Set(x)].sort();
  const sy = [...new Set(y)].sort();
  const [p, q] = [JSON.stringify(sx), JSON.stringify(sy)].sort() as [string, string];
  return [...new Set([...sx, ...sy, `${VIRTUAL_BASE_MARKER}:tags:${sha256Hex(`${p}\u0000${q}`)}`])].sort();
}

/**
 * A section version equal to neither side: conflict markers around both
 * sides' markdown, ordered by hash so the result does not depend on which
 * side is which. Name and permissions come from the inner base when there is
 * one (else from the side with the smaller hash).
 */
export function syntheticSection(
  hashA: string,
  a: SectionVersion,
  hashB: string,
  b: SectionVersion,
  base: SectionVersion | null,
): SectionVersion {
  const [[h1, v1], [h2, v2]] = hashA < hashB ? [[hashA, a] as const, [hashB, b] as const] : [[hashB, b] as const, [hashA, a] as const];
  const text = `<<<<<<< ${h1}\n${sectionToMarkdown(v1)}=======\n${sectionToMarkdown(v2)}>>>>>>> ${h2}\n<!-- ${VIRTUAL_BASE_MARKER} -->`;
  const from = base ?? v1;
  return {
    name: from.name,
    content: [{ blockType: "text", text }],
    defaultPermission: from.defaultPermission,
    aiAccess: from.aiAccess,
    references: from.references,
  };
}

/**
 * The merge base tree for `bases` (commit ids, as returned by the merge-base
 * walk): the base itself when there is one, else the virtual base folded from
 * all of them, left to right. Throws when `bases` is empty.
 */
export async function buildVirtualBase(bases: readonly string[], io: VirtualBaseIo): Promise<VirtualBase> {
  const folder = new Folder(io);
  if (bases.length === 1) return { tree: await folder.treeOf(bases[0]!), sections: new Map() };
  const tree = await folder.fold(bases);
  // Synthetic sections of inner levels that the final tree no longer refers to are not needed.
  const used = new Set(tree.sections.map((e) => e.blobHash));
  const sections = new Map([...folder.synthetic].filter(([h]) => used.has(h)));
  return { tree, sections };
}
