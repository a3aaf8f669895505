import { describe, expect, test } from "vitest";
import { hashSection, newSectionVersion, type DocumentTree, type SectionVersion } from "@/server/core/document-model";
import { analyzeMerge, buildMergedTree, hashesNeededForAnalysis, type MergeAnalysis } from "@/server/core/merge-analysis";
import { buildVirtualBase, VIRTUAL_BASE_MARKER, type VirtualBaseIo } from "@/server/core/virtual-base";

/** An in-memory commit graph with git's merge-base rule (best common ancestors). */
class Graph {
  readonly parents = new Map<string, string[]>();
  readonly trees = new Map<string, DocumentTree>();
  readonly blobs = new Map<string, SectionVersion>();
  readonly loadedHashes: string[] = [];

  commit(id: string, parents: string[], sections: Record<string, string | SectionVersion>, over: Partial<DocumentTree> = {}): string {
    const entries = Object.entries(sections).map(([sectionId, v]) => {
      const version = typeof v === "string" ? newSectionVersion(sectionId, [{ blockType: "text", text: v }]) : v;
      const blobHash = hashSection(version);
      this.blobs.set(blobHash, version);
      return { sectionId, blobHash };
    });
    this.parents.set(id, parents);
    this.trees.set(id, {
      path: "doc",
      name: "Doc",
      description: null,
      deleted: false,
      tagIds: [],
      properties: {},
      sections: entries,
      ...over,
    });
    return id;
  }

  ancestors(id: string): Set<string> {
    const seen = new Set<string>();
    const stack = [id];
    while (stack.length > 0) {
      const c = stack.pop()!;
      if (seen.has(c)) continue;
      seen.add(c);
      stack.push(...(this.parents.get(c) ?? []));
    }
    return seen;
  }

  mergeBases(a: string, b: string): string[] {
    const bAnc = this.ancestors(b);
    const common = [...this.ancestors(a)].filter((c) => bAnc.has(c));
    return common.filter((c) => !common.some((d) => d !== c && this.ancestors(d).has(c))).sort();
  }

  io(): VirtualBaseIo {
    return {
      treeOf: async (id) => this.trees.get(id)!,
      mergeBasesOf: async (a, b) => this.mergeBases(a, b),
      loadSections: async (hashes) => {
        this.loadedHashes.push(...hashes);
        return new Map(hashes.map((h) => [h, this.blobs.get(h)!]));
      },
    };
  }

  /** The outer merge of two heads, with the virtual base when there are several merge bases. */
  async analyze(source: string, target: string): Promise<MergeAnalysis> {
    const virtual = await buildVirtualBase(this.mergeBases(source, target), this.io());
    const s = this.trees.get(source)!;
    const t = this.trees.get(target)!;
    const sectionsByHash = new Map<string, SectionVersion>();
    for (const h of hashesNeededForAnalysis(virtual.tree, s, t)) sectionsByHash.set(h, virtual.sections.get(h) ?? this.blobs.get(h)!);
    return analyzeMerge({ base: virtual.tree, source: s, target: t, sectionsByHash });
  }
}

const statuses = (a: MergeAnalysis) => Object.fromEntries(a.sections.map((e) => [e.sectionId, e.status]));

/**
 *        A1 ── A2        A2 = merge(A1, B1), B2 = merge(B1, A1)
 *       /   \ /          → A2 and B2 have two merge bases, A1 and B1
 *     R      X
 *       \   / \
 *        B1 ── B2
 */
function crissCross(
  a1: Record<string, string>,
  b1: Record<string, string>,
  a2: Record<string, string>,
  b2: Record<string, string>,
  r: Record<string, string> = { s1: "o", s2: "o", s3: "o" },
  over: { a1?: Partial<DocumentTree>; b1?: Partial<DocumentTree>; a2?: Partial<DocumentTree>; b2?: Partial<DocumentTree> } = {},
): Graph {
  const g = new Graph();
  g.commit("R", [], r);
  g.commit("A1", ["R"], a1, over.a1);
  g.commit("B1", ["R"], b1, over.b1);
  g.commit("A2", ["A1", "B1"], a2, over.a2);
  g.commit("B2", ["B1", "A1"], b2, over.b2);
  return g;
}

describe("buildVirtualBase", () => {
  test("one merge base: its own tree, no synthetic sections, no loading", async () => {
    const g = new Graph();
    g.commit("R", [], { s1: "o" });
    const result = await buildVirtualBase(["R"], g.io());
    expect(result.tree).toBe(g.trees.get("R"));
    expect(result.sections.size).toBe(0);
    expect(g.loadedHashes).toEqual([]);
  });

  test("no merge base is an error", async () => {
    await expect(buildVirtualBase([], new Graph().io())).rejects.toThrow(/no merge base/);
  });

  test("criss-cross, bases disagree, outer sides kept different versions → conflict (a single base would hide it)", async () => {
    const g = crissCross(
      { s1: "a", s2: "o", s3: "o" },
      { s1: "b", s2: "o", s3: "o" },
      { s1: "a", s2: "o", s3: "o" },
      { s1: "b", s2: "o", s3: "o" },
    );
    expect(g.mergeBases("A2", "B2")).toEqual(["A1", "B1"]);
    const analysis = await g.analyze("A2", "B2");
    expect(statuses(analysis)).toEqual({ s1: "conflict" });
    // The naive single base A1 would have called it "unchanged" and silently kept b.
    const naive = analyzeMerge({
      base: g.trees.get("A1")!,
      source: g.trees.get("A2")!,
      target: g.trees.get("B2")!,
      sectionsByHash: g.blobs,
    });
    expect(statuses(naive)).toEqual({ s1: "unchanged" });
    // The base side of the diffs shows the synthetic value with both versions.
    expect(analysis.sections[0]!.sourceDiff).toContain(`-<<<<<<< `);
    expect(analysis.sections[0]!.sourceDiff).toContain(`-## s1`);
  });

  test("criss-cross, both outer sides hold the same content → no conflict", async () => {
    const g = crissCross(
      { s1: "a", s2: "o", s3: "o" },
      { s1: "b", s2: "o", s3: "o" },
      { s1: "a", s2: "o", s3: "x" },
      { s1: "a", s2: "o", s3: "o" },
    );
    const analysis = await g.analyze("A2", "B2");
    expect(statuses(analysis)).toEqual({ s1: "unchanged", s3: "modified" });
    expect(analysis.hasConflicts).toBe(false);
  });

  test("synthetic section: equal to neither side, symmetric in the bases, returned for sectionsByHash", async () => {
    const g = crissCross({ s1: "a" }, { s1: "b" }, { s1: "a" }, { s1: "b" }, { s1: "o" });
    const v1 = await buildVirtualBase(["A1", "B1"], g.io());
    const v2 = await buildVirtualBase(["B1", "A1"], g.io());
    expect(v1.tree).toEqual(v2.tree);
    const [entry] = v1.tree.sections;
    const synthetic = v1.sections.get(entry!.blobHash)!;
    expect(entry!.blobHash).toBe(hashSection(synthetic));
    expect(entry!.blobHash).not.toBe(g.trees.get("A1")!.sections[0]!.blobHash);
    expect(entry!.blobHash).not.toBe(g.trees.get("B1")!.sections[0]!.blobHash);
    expect(synthetic.name).toBe("s1");
    expect(synthetic.content[0]).toMatchObject({ blockType: "text" });
    expect(JSON.stringify(synthetic)).toContain(VIRTUAL_BASE_MARKER);
    // Only the two conflicting versions (and the base version) were loaded; unchanged sections never.
    expect(new Set(g.loadedHashes).size).toBeLessThanOrEqual(3);
  });

  test("modify/delete inside the virtual base keeps the inner base's version (like git)", async () => {
    // A1 deletes s2, B1 modifies it: virtual base holds R's s2 ("o").
    const common = { s1: "o", s3: "o" };
    const cases: Array<{ a2: Record<string, string>; b2: Record<string, string>; expected: Record<string, string> }> = [
      { a2: { ...common }, b2: { ...common, s2: "m" }, expected: { s2: "conflict" } }, // deleted vs changed from "o"
      { a2: { ...common }, b2: { ...common }, expected: { s2: "unchanged" } }, // deleted on both
      { a2: { ...common, s2: "o" }, b2: { ...common, s2: "m" }, expected: { s2: "unchanged" } }, // source = virtual base → target's
      { a2: { ...common, s2: "m" }, b2: { ...common, s2: "o" }, expected: { s2: "modified" } },
    ];
    for (const { a2, b2, expected } of cases) {
      const g = crissCross({ ...common }, { ...common, s2: "m" }, a2, b2);
      const virtual = await buildVirtualBase(["A1", "B1"], g.io());
      expect(virtual.tree.sections.find((e) => e.sectionId === "s2")!.blobHash).toBe(
        g.trees.get("R")!.sections.find((e) => e.sectionId === "s2")!.blobHash,
      );
      expect(statuses(await g.analyze("A2", "B2"))).toEqual(expected);
    }
  });

  test("add/add with different content inside the virtual base is synthetic", async () => {
    const g = crissCross({ n: "a" }, { n: "b" }, { n: "a" }, { n: "a" }, {});
    const virtual = await buildVirtualBase(["A1", "B1"], g.io());
    expect(virtual.sections.size).toBe(1);
    expect(statuses(await g.analyze("A2", "B2"))).toEqual({ n: "unchanged" });
    const g2 = crissCross({ n: "a" }, { n: "b" }, { n: "a" }, { n: "b" }, {});
    expect(statuses(await g2.analyze("A2", "B2"))).toEqual({ n: "conflict" });
  });

  test("document-level conflicts inside the virtual base take values equal to neither side", async () => {
    const s = { s1: "o" };
    const g = crissCross(s, s, s, s, s, {
      a1: { tagIds: ["t1"], properties: { c: 1 }, path: "p/a", name: "Na", description: "da" },
      b1: { tagIds: ["t2"], properties: { c: 2 }, path: "p/b", name: "Nb", description: "db" },
      a2: { tagIds: ["t1"], properties: { c: 1 }, path: "p/a", name: "Na", description: "da" },
      b2: { tagIds: ["t2"], properties: { c: 2 }, path: "p/b", name: "Nb", description: "db" },
    });
    const virtual = await buildVirtualBase(["A1", "B1"], g.io());
    expect(virtual.tree.tagIds).toContain("t1");
    expect(virtual.tree.tagIds).toContain("t2");
    expect(virtual.tree.tagIds.some((t) => t.startsWith(VIRTUAL_BASE_MARKER))).toBe(true);
    expect(String(virtual.tree.properties.c)).toContain(VIRTUAL_BASE_MARKER);
    expect(virtual.tree.path).toContain(VIRTUAL_BASE_MARKER);
    expect(virtual.tree.name).toContain(VIRTUAL_BASE_MARKER);
    expect(virtual.tree.description).toContain(VIRTUAL_BASE_MARKER);
    expect(virtual.tree.deleted).toBe(false);
    expect(virtual).toEqual(await buildVirtualBase(["B1", "A1"], g.io()));

    const analysis = await g.analyze("A2", "B2");
    expect(analysis.hasTagConflicts).toBe(true);
    expect(analysis.hasPathCollision).toBe(true);
    expect(analysis.propertyConflicts).toEqual([{ columnId: "c", base: virtual.tree.properties.c, source: 1, target: 2 }]);
    const result = buildMergedTree(analysis, {
      tagResolution: "target",
      scalarPropertyResolutions: { c: "source" },
      resolvedPath: "p/final",
    });
    expect("tree" in result && result.tree).toMatchObject({
      tagIds: ["t2"],
      properties: { c: 1 },
      path: "p/final",
      name: "Na",
      description: "da",
    });

    // Outer sides agreeing on every field: no conflict at all, and no marker leaks.
    const g2 = crissCross(s, s, s, s, s, {
      a1: { tagIds: ["t1"], path: "p/a" },
      b1: { tagIds: ["t2"], path: "p/b" },
      a2: { tagIds: ["t3"], path: "p/c" },
      b2: { tagIds: ["t3"], path: "p/c" },
    });
    const agreed = await g2.analyze("A2", "B2");
    expect([agreed.hasTagConflicts, agreed.hasPathCollision]).toEqual([false, false]);
    expect(JSON.stringify(buildMergedTree(agreed, {}))).not.toContain(VIRTUAL_BASE_MARKER);
  });

  test("deletion conflict inside the virtual base: not deleted", async () => {
    const g = crissCross({ s1: "o" }, { s1: "x" }, { s1: "x" }, { s1: "x" }, { s1: "o" }, { a1: { deleted: true } });
    const virtual = await buildVirtualBase(["A1", "B1"], g.io());
    expect(virtual.tree.deleted).toBe(false);
  });

  test("three merge bases and recursive merge bases", async () => {
    // X, Y, Z fork from R; A = X+Y+Z, B = Y+Z+X merged in another order → 3 merge bases.
    const g = new Graph();
    g.commit("R", [], { s1: "o", s2: "o", s3: "o" });
    g.commit("X", ["R"], { s1: "x", s2: "o", s3: "o" });
    g.commit("Y", ["R"], { s1: "y", s2: "y", s3: "o" });
    g.commit("Z", ["R"], { s1: "o", s2: "o", s3: "z" });
    g.commit("A1", ["X", "Y"], { s1: "x", s2: "y", s3: "o" });
    g.commit("A", ["A1", "Z"], { s1: "x", s2: "y", s3: "z" });
    g.commit("B1", ["Y", "Z"], { s1: "y", s2: "y", s3: "z" });
    g.commit("B", ["B1", "X"], { s1: "y", s2: "y", s3: "z" });
    expect(g.mergeBases("A", "B")).toEqual(["X", "Y", "Z"]);
    const analysis = await g.analyze("A", "B");
    // s1: X and Y disagree inside the virtual base → the outer sides (x vs y) conflict.
    // s2/s3: bases merge cleanly to y / z; both sides agree → nothing.
    expect(statuses(analysis)).toEqual({ s1: "conflict" });

    // Criss-cross of criss-crosses: the two merge bases (A2, B2) themselves have two merge bases (A1, B1).
    const level2 = (a2: string, b2: string, a4: string, b4: string) => {
      const h = crissCross({ s1: "a" }, { s1: "b" }, { s1: a2 }, { s1: b2 }, { s1: "o" });
      h.commit("A3", ["A2", "B2"], { s1: "c" });
      h.commit("B3", ["B2", "A2"], { s1: "c" });
      h.commit("A4", ["A3"], { s1: a4 });
      h.commit("B4", ["B3"], { s1: b4 });
      expect(h.mergeBases("A4", "B4")).toEqual(["A2", "B2"]);
      expect(h.mergeBases("A2", "B2")).toEqual(["A1", "B1"]);
      return h;
    };
    // A2 and B2 disagree (on top of disagreeing bases): any two different outer versions conflict.
    expect(statuses(await level2("a", "b", "c", "d").analyze("A4", "B4"))).toEqual({ s1: "conflict" });
    expect(statuses(await level2("a", "b", "a", "d").analyze("A4", "B4"))).toEqual({ s1: "conflict" });
    // A2 and B2 agree on "a": the virtual base is "a", only the target changed it → unchanged.
    expect(statuses(await level2("a", "a", "a", "d").analyze("A4", "B4"))).toEqual({ s1: "unchanged" });
    expect(statuses(await level2("a", "a", "e", "d").analyze("A4", "B4"))).toEqual({ s1: "conflict" });
  });
});
