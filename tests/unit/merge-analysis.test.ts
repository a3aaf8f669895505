import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { hashSection, newSectionVersion, type DocumentTree, type SectionVersion } from "@/server/core/document-model";
import {
  analyzeMerge,
  buildMergedTree,
  hashesNeededForAnalysis,
  mergeSectionOrder,
  type MergeAnalysis,
  type MergeResolutions,
  type SectionStatus,
} from "@/server/core/merge-analysis";
import { sectionToMarkdown } from "@/server/core/section-markdown";
import { unifiedDiff } from "@/server/core/text-diff";

// ---------------------------------------------------------------------------
// Fixtures

const blobs = new Map<string, SectionVersion>();
function put(version: SectionVersion): string {
  const hash = hashSection(version);
  blobs.set(hash, version);
  return hash;
}
const sv = (name: string, text: string) => newSectionVersion(name, [{ blockType: "text", text }]);

type Sections = Array<[string, SectionVersion]>;

function tree(sections: Sections, over: Partial<DocumentTree> = {}): DocumentTree {
  return {
    path: "handbook/pricing",
    name: "Pricing",
    description: null,
    deleted: false,
    tagIds: [],
    properties: {},
    sections: sections.map(([sectionId, v]) => ({ sectionId, blobHash: put(v) })),
    ...over,
  };
}

/** analyzeMerge given only the blobs hashesNeededForAnalysis asks for. */
function analyze(
  base: DocumentTree,
  source: DocumentTree,
  target: DocumentTree,
  isPathTakenByAnotherDocument?: (path: string) => boolean,
): MergeAnalysis {
  const needed = hashesNeededForAnalysis(base, source, target);
  const sectionsByHash = new Map(needed.map((h) => [h, blobs.get(h)!]));
  return analyzeMerge({ base, source, target, sectionsByHash, isPathTakenByAnotherDocument });
}

function mergedTree(analysis: MergeAnalysis, resolutions: MergeResolutions = {}): DocumentTree {
  const result = buildMergedTree(analysis, resolutions);
  if (!("tree" in result)) throw new Error(`unexpected missing: ${JSON.stringify(result.missing)}`);
  return result.tree;
}

const md = (v: SectionVersion | null) => (v ? sectionToMarkdown(v) : "");
const ids = (t: DocumentTree) => t.sections.map((e) => e.sectionId);

const A = sv("Intro", "original text");
const B = sv("Intro", "source text");
const C = sv("Intro (target)", "target text");
const keep1 = sv("Keep one", "unchanged one");
const keep2 = sv("Keep two", "unchanged two");

// ---------------------------------------------------------------------------

describe("section table (DESIGN.md §4), one section between two unchanged ones", () => {
  type Row = {
    row: string;
    base: SectionVersion | null;
    source: SectionVersion | null;
    target: SectionVersion | null;
    status: SectionStatus | "not listed";
    /** Merged version without resolution, or per resolution for conflicts. */
    merged?: SectionVersion | null;
    bySource?: SectionVersion | null;
    byTarget?: SectionVersion | null;
  };
  const rows: Row[] = [
    { row: "= = =", base: A, source: A, target: A, status: "not listed", merged: A },
    { row: "x changed =base", base: A, source: B, target: A, status: "modified", merged: B },
    { row: "x =base changed", base: A, source: A, target: C, status: "unchanged", merged: C },
    { row: "x changed changed-same", base: A, source: B, target: B, status: "unchanged", merged: B },
    { row: "x changed changed-different", base: A, source: B, target: C, status: "conflict", bySource: B, byTarget: C },
    { row: "x deleted =base", base: A, source: null, target: A, status: "deleted", merged: null },
    { row: "x deleted changed", base: A, source: null, target: C, status: "conflict", bySource: null, byTarget: C },
    { row: "x changed deleted", base: A, source: B, target: null, status: "conflict", bySource: B, byTarget: null },
    { row: "x deleted deleted", base: A, source: null, target: null, status: "unchanged", merged: null },
    { row: "x =base deleted", base: A, source: A, target: null, status: "unchanged", merged: null },
    { row: "- added -", base: null, source: B, target: null, status: "added", merged: B },
    { row: "- - added", base: null, source: null, target: C, status: "unchanged", merged: C },
    { row: "- added added-same", base: null, source: B, target: B, status: "unchanged", merged: B },
    { row: "- added added-different", base: null, source: B, target: C, status: "conflict", bySource: B, byTarget: C },
  ];

  const side = (v: SectionVersion | null): Sections => [["k1", keep1], ...(v ? ([["s", v]] as Sections) : []), ["k2", keep2]];

  test.each(rows)("$row → $status", ({ base, source, target, status, merged, bySource, byTarget }) => {
    const tb = tree(side(base));
    const ts = tree(side(source));
    const tt = tree(side(target));
    // Unchanged sections are never loaded.
    const needed = hashesNeededForAnalysis(tb, ts, tt);
    expect(needed).not.toContain(hashSection(keep1));
    expect(needed).not.toContain(hashSection(keep2));
    const sides = [base, source, target].filter((v) => v !== null).map((v) => hashSection(v!));
    expect(new Set(needed)).toEqual(status === "not listed" ? new Set() : new Set(sides));

    const analysis = analyze(tb, ts, tt);
    if (status === "not listed") {
      expect(analysis.sections).toEqual([]);
    } else {
      expect(analysis.sections).toEqual([
        {
          sectionId: "s",
          name: (source ?? target ?? base)!.name,
          status,
          // The merge brings nothing to an unchanged section: no diffs; the target's side is shown for a conflict only.
          sourceDiff: status === "unchanged" ? "" : unifiedDiff(md(base), md(source), { before: "base", after: "source" }),
          targetDiff: status === "conflict" ? unifiedDiff(md(base), md(target), { before: "base", after: "target" }) : "",
        },
      ]);
    }
    expect(analysis.hasConflicts).toBe(status === "conflict");
    expect(analysis.hasTagConflicts).toBe(false);
    expect(analysis.hasPathCollision).toBe(false);
    expect(analysis.hasDocumentDeletionConflict).toBe(false);
    expect(analysis.propertyConflicts).toEqual([]);

    const expectTree = (result: DocumentTree, v: SectionVersion | null | undefined) => {
      expect(result.sections).toEqual(tree(side(v ?? null)).sections);
    };
    if (status === "conflict") {
      const none = buildMergedTree(analysis, {});
      expect(none).toEqual({
        missing: { sections: ["s"], tags: false, properties: [], path: false, documentDeletion: false },
        ignored: [],
      });
      expectTree(mergedTree(analysis, { sections: { s: "source" } }), bySource);
      expectTree(mergedTree(analysis, { sections: { s: "target" } }), byTarget);
    } else {
      expectTree(mergedTree(analysis), merged);
      const r = buildMergedTree(analysis, { sections: { s: "source" } });
      expect(r.ignored).toEqual(["resolution for section s ignored: that section is not in conflict"]);
      expect("tree" in r && r.tree).toEqual(mergedTree(analysis));
    }
  });

  test("diffs: a deleting side diffs to empty, an adding side from empty", () => {
    const analysis = analyze(tree([["s", A]]), tree([]), tree([["s", C]]));
    const [entry] = analysis.sections;
    expect(entry!.sourceDiff).toBe(unifiedDiff(md(A), "", { before: "base", after: "source" }));
    expect(entry!.sourceDiff).toContain("-## Intro\n");
    expect(entry!.targetDiff).toContain("+## Intro (target)\n");
    expect(entry!.name).toBe("Intro (target)");

    const added = analyze(tree([]), tree([["n", B]]), tree([]));
    expect(added.sections[0]!.sourceDiff).toBe(
      ["--- base", "+++ source", "@@ -0,0 +1,3 @@", "+## Intro", "+", "+source text", ""].join("\n"),
    );
    expect(added.sections[0]!.targetDiff).toBe("");
  });

  test("analyzeMerge reports a blob it was not given", () => {
    expect(() =>
      analyzeMerge({ base: tree([["s", A]]), source: tree([["s", B]]), target: tree([["s", A]]), sectionsByHash: new Map() }),
    ).toThrow(/was not provided/);
  });
});

describe("section order: three-way merge", () => {
  test.each([
    { name: "nothing moved", base: "ABC", source: "ABC", target: "ABC", merged: "ABC" },
    { name: "only the source reordered", base: "ABCD", source: "DBAC", target: "ABCD", merged: "DBAC" },
    { name: "only the target reordered", base: "ABCD", source: "ABCD", target: "CADB", merged: "CADB" },
    { name: "both reordered different sections", base: "ABCD", source: "BACD", target: "ABDC", merged: "BADC" },
    { name: "both moved the same section: source wins", base: "ABCD", source: "BCDA", target: "BACD", merged: "BCDA" },
    // The source moved B after E; the target moved E to the front: B still follows E.
    {
      name: "both reordered, a moved section follows its new predecessor",
      base: "ABCDE",
      source: "ACDEB",
      target: "EABCD",
      merged: "EBACD",
    },
    { name: "source adds after a predecessor", base: "ABC", source: "ABXC", target: "ABC", merged: "ABXC" },
    { name: "source adds at the front", base: "ABC", source: "XABC", target: "ABC", merged: "XABC" },
    { name: "target adds, source adds after the same predecessor", base: "AB", source: "AXB", target: "AYB", merged: "AXYB" },
    { name: "a chain of source additions stays together", base: "AB", source: "AXZB", target: "AYB", merged: "AXZYB" },
    { name: "addition follows its predecessor when the target moved it", base: "ABC", source: "ABXC", target: "BCA", merged: "BXCA" },
    { name: "source-deleted section keeps its target position", base: "ABC", source: "AC", target: "CAB", merged: "CAB" },
    { name: "target-deleted section keeps its source position", base: "ABC", source: "ACB", target: "AC", merged: "ACB" },
    { name: "deleted on both sides stays at its base position", base: "ABC", source: "AC", target: "CA", merged: "CAB" },
    { name: "addition after a section the other side deleted", base: "ABC", source: "ABXC", target: "AC", merged: "ABXC" },
  ])("$name: $base / $source / $target → $merged", ({ base, source, target, merged }) => {
    expect(mergeSectionOrder([...base], [...source], [...target]).join("")).toBe(merged);
  });

  /** A side derived from base: some ids deleted, some added, some moved. */
  const sideOf = (base: string[], prefix: string) =>
    fc
      .tuple(
        fc.array(fc.boolean(), { minLength: base.length, maxLength: base.length }),
        fc.array(fc.nat(), { maxLength: 3 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 3 }),
      )
      .map(([keep, adds, moves]) => {
        const out = base.filter((_, i) => keep[i]);
        adds.forEach((at, k) => {
          out.splice(at % (out.length + 1), 0, `${prefix}${k}`);
        });
        for (const [from, to] of moves) {
          if (out.length === 0) break;
          const [id] = out.splice(from % out.length, 1);
          out.splice(to % (out.length + 1), 0, id!);
        }
        return out;
      });
  const histories = fc
    .uniqueArray(fc.constantFrom(..."ABCDEFGH"), { maxLength: 8 })
    .chain((base) => fc.tuple(fc.constant(base), sideOf(base, "s"), sideOf(base, "t")));
  const restrict = (order: string[], to: string[]) => order.filter((id) => to.includes(id));

  test("property: every id exactly once; one side unchanged, or both the same → that order", () => {
    fc.assert(
      fc.property(histories, ([base, source, target]) => {
        const merged = mergeSectionOrder(base, source, target);
        expect([...merged].sort()).toEqual([...new Set([...base, ...source, ...target])].sort());
        expect(restrict(mergeSectionOrder(base, base, target), target)).toEqual(target);
        expect(restrict(mergeSectionOrder(base, source, base), source)).toEqual(source);
        expect(restrict(mergeSectionOrder(base, source, source), source)).toEqual(source);
      }),
      { numRuns: 500 },
    );
  });

  test("merged tree and analysis entries follow the merged order; removed sections dropped", () => {
    const s = (n: string) => sv(n, n);
    const base = tree([
      ["a", s("a")],
      ["b", s("b")],
      ["c", s("c")],
      ["d", s("d")],
    ]);
    // source: moves d to the front, edits b, adds x after b
    const source = tree([
      ["d", s("d")],
      ["a", s("a")],
      ["b", s("b2")],
      ["x", s("x")],
      ["c", s("c")],
    ]);
    // target: deletes c, swaps a and b... (b unchanged content)
    const target = tree([
      ["b", s("b")],
      ["a", s("a")],
      ["d", s("d")],
    ]);
    const analysis = analyze(base, source, target);
    expect(analysis.sections.map((e) => [e.sectionId, e.status])).toEqual([
      ["b", "modified"],
      ["x", "added"],
      ["c", "unchanged"],
    ]);
    expect(ids(mergedTree(analysis))).toEqual(["d", "b", "x", "a"]);
  });
});

describe("document-level merge", () => {
  const base = tree([["s", A]], { tagIds: ["t1", "t2"], properties: { c1: "x", c2: 1, c3: true } });

  test("tags: one side changed → taken; both same → fine; both different → conflict", () => {
    const a1 = analyze(base, { ...base, tagIds: ["t1", "t2", "t3"] }, base);
    expect(a1.hasTagConflicts).toBe(false);
    expect(mergedTree(a1).tagIds).toEqual(["t1", "t2", "t3"]);

    const a2 = analyze(base, base, { ...base, tagIds: ["t1"] });
    expect(mergedTree(a2).tagIds).toEqual(["t1"]);

    const a3 = analyze(base, { ...base, tagIds: ["t2", "t3"] }, { ...base, tagIds: ["t3", "t2"] });
    expect(a3.hasTagConflicts).toBe(false);
    expect(mergedTree(a3).tagIds).toEqual(["t2", "t3"]);

    const a4 = analyze(base, { ...base, tagIds: ["t1", "t2", "t3"] }, { ...base, tagIds: ["t2"] });
    expect(a4.hasTagConflicts).toBe(true);
    expect(a4.hasConflicts).toBe(false);
    expect(buildMergedTree(a4, {})).toEqual({
      missing: { sections: [], tags: true, properties: [], path: false, documentDeletion: false },
      ignored: [],
    });
    expect(mergedTree(a4, { tagResolution: "source" }).tagIds).toEqual(["t1", "t2", "t3"]);
    expect(mergedTree(a4, { tagResolution: "target" }).tagIds).toEqual(["t2"]);
  });

  test("scalar properties: three-way per column, absent = null", () => {
    const source = { ...base, properties: { c1: "y", c2: 2, c3: true, c5: "new" } }; // c4 absent everywhere
    const target = { ...base, properties: { c1: "x", c2: 3, c4: 9 } }; // c3 unset on target
    const analysis = analyze(base, source, { ...target, properties: { ...target.properties, c3: false } });
    expect(analysis.propertyConflicts).toEqual([{ columnId: "c2", base: 1, source: 2, target: 3 }]);

    const unsetVsChanged = analyze(
      base,
      { ...base, properties: { c1: "x", c2: 1 } },
      { ...base, properties: { c1: "x", c2: 1, c3: false } },
    );
    expect(unsetVsChanged.propertyConflicts).toEqual([{ columnId: "c3", base: true, source: null, target: false }]);
    expect(mergedTree(unsetVsChanged, { scalarPropertyResolutions: { c3: "source" } }).properties).toEqual({ c1: "x", c2: 1 });
    expect(mergedTree(unsetVsChanged, { scalarPropertyResolutions: { c3: "target" } }).properties).toEqual({ c1: "x", c2: 1, c3: false });

    const clean = analyze(base, source, target);
    expect(clean.propertyConflicts).toEqual([{ columnId: "c2", base: 1, source: 2, target: 3 }]);
    expect(buildMergedTree(clean, { scalarPropertyResolutions: { c1: "target" } })).toEqual({
      missing: { sections: [], tags: false, properties: ["c2"], path: false, documentDeletion: false },
      ignored: ["scalarPropertyResolutions entry for column c1 ignored: that property is not in conflict"],
    });
    // c1 from source, c3 unset by target, c4 added by target, c5 added by source
    expect(mergedTree(clean, { scalarPropertyResolutions: { c2: "source" } }).properties).toEqual({ c1: "y", c2: 2, c4: 9, c5: "new" });
  });

  test("path: changed on both sides differently → collision; resolvedPath applies", () => {
    const analysis = analyze(base, { ...base, path: "a/one" }, { ...base, path: "a/two" });
    expect(analysis.hasPathCollision).toBe(true);
    expect(buildMergedTree(analysis, {})).toEqual({
      missing: { sections: [], tags: false, properties: [], path: true, documentDeletion: false },
      ignored: [],
    });
    expect(mergedTree(analysis, { resolvedPath: "a/three" }).path).toBe("a/three");
    expect(analyze(base, { ...base, path: "a/one" }, { ...base, path: "a/one" }).hasPathCollision).toBe(false);
  });

  test("path: merged path taken by another live document → collision; asked only when it differs from the target's", () => {
    const asked: string[] = [];
    const taken = (p: string) => {
      asked.push(p);
      return p === "taken/path";
    };
    const a1 = analyze(base, { ...base, path: "taken/path" }, base, taken);
    expect(a1.hasPathCollision).toBe(true);
    expect(mergedTree(a1, { resolvedPath: "free/path" }).path).toBe("free/path");
    const a2 = analyze(base, { ...base, path: "free/path" }, base, taken);
    expect(a2.hasPathCollision).toBe(false);
    expect(mergedTree(a2).path).toBe("free/path");
    expect(buildMergedTree(a2, { resolvedPath: "x" }).ignored).toEqual(["resolvedPath ignored: there is no path collision"]);
    analyze(base, base, { ...base, path: "target/moved" }, taken); // merged = target's path: not asked
    analyze(base, { ...base, path: "p1" }, { ...base, path: "p2" }, taken); // conflict already: not asked
    expect(asked).toEqual(["taken/path", "free/path"]);
  });

  test("name and description: one side → taken; both differently → source wins, nothing reported", () => {
    const a1 = analyze(base, { ...base, name: "New" }, { ...base, description: "target desc" });
    expect(mergedTree(a1)).toMatchObject({ name: "New", description: "target desc" });
    const a2 = analyze(base, { ...base, name: "S", description: "s" }, { ...base, name: "T", description: "t" });
    expect([a2.hasConflicts, a2.hasPathCollision, a2.hasTagConflicts, a2.hasDocumentDeletionConflict]).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(mergedTree(a2)).toMatchObject({ name: "S", description: "s" });
  });

  describe("document deletion", () => {
    const deleted = { ...base, deleted: true };
    const otherChanges: Array<[string, DocumentTree]> = [
      ["a section", tree([["s", B]], { tagIds: base.tagIds, properties: base.properties })],
      ["a new section", { ...base, sections: [...base.sections, ...tree([["n", B]]).sections] }],
      ["the order", { ...base, sections: [...tree([["z", keep1]]).sections, ...base.sections] }],
      ["tags", { ...base, tagIds: ["t1"] }],
      ["a property", { ...base, properties: { ...base.properties, c1: "z" } }],
      ["the path", { ...base, path: "elsewhere" }],
      ["the name", { ...base, name: "Renamed" }],
      ["the description", { ...base, description: "described" }],
    ];

    test.each(otherChanges)("source deleted, target changed %s → conflict", (_what, changed) => {
      const analysis = analyze(base, deleted, changed);
      expect(analysis.hasDocumentDeletionConflict).toBe(true);
      expect(buildMergedTree(analysis, {})).toEqual({
        missing: { sections: [], tags: false, properties: [], path: false, documentDeletion: true },
        ignored: [],
      });
      expect(mergedTree(analysis, { documentDeletionResolution: "delete" })).toEqual({ ...changed, deleted: true });
      const kept = mergedTree(analysis, { documentDeletionResolution: "keep" });
      expect(kept).toEqual({ ...changed, deleted: false });
    });

    test.each(otherChanges)("target deleted, source changed %s → conflict", (_what, changed) => {
      const analysis = analyze(base, changed, deleted);
      expect(analysis.hasDocumentDeletionConflict).toBe(true);
      expect(mergedTree(analysis, { documentDeletionResolution: "delete" })).toEqual(deleted);
      expect(mergedTree(analysis, { documentDeletionResolution: "keep" })).toEqual({ ...changed, deleted: false });
    });

    test("deleted on one side, other side unchanged → deleted, no conflict", () => {
      const a1 = analyze(base, deleted, base);
      expect(a1.hasDocumentDeletionConflict).toBe(false);
      expect(mergedTree(a1).deleted).toBe(true);
      const a2 = analyze(base, base, deleted);
      expect(mergedTree(a2).deleted).toBe(true);
      expect(buildMergedTree(a2, { documentDeletionResolution: "keep" }).ignored).toEqual([
        "documentDeletionResolution ignored: there is no document deletion conflict",
      ]);
      const both = analyze(base, { ...deleted, name: "x" }, { ...deleted, tagIds: [] });
      expect(both.hasDocumentDeletionConflict).toBe(false);
      expect(mergedTree(both)).toMatchObject({ deleted: true, name: "x", tagIds: [] });
    });

    test("deleting side's own edits do not make a conflict when the other side did nothing", () => {
      const a = analyze(base, { ...deleted, name: "gone" }, base);
      expect(a.hasDocumentDeletionConflict).toBe(false);
      expect(mergedTree(a)).toMatchObject({ deleted: true, name: "gone" });
    });

    test("keep with other conflicts still needs their resolutions; delete does not", () => {
      const source = { ...tree([["s", B]], { tagIds: ["t9"], properties: base.properties }), deleted: false };
      const target = { ...tree([["s", C]], { tagIds: ["t8"], properties: base.properties }), deleted: true };
      const analysis = analyze(base, source, target);
      expect(analysis.hasDocumentDeletionConflict).toBe(true);
      expect(buildMergedTree(analysis, {})).toEqual({
        missing: { sections: ["s"], tags: true, properties: [], path: false, documentDeletion: true },
        ignored: [],
      });
      expect(buildMergedTree(analysis, { documentDeletionResolution: "keep" })).toEqual({
        missing: { sections: ["s"], tags: true, properties: [], path: false, documentDeletion: false },
        ignored: [],
      });
      expect(mergedTree(analysis, { documentDeletionResolution: "delete" })).toEqual(target);
      expect(mergedTree(analysis, { documentDeletionResolution: "keep", sections: { s: "source" }, tagResolution: "target" })).toEqual({
        ...source,
        tagIds: ["t8"],
      });
    });
  });
});

describe("buildMergedTree", () => {
  const s = (n: string, text = n) => sv(n, text);
  const base = tree(
    [
      ["a", s("a")],
      ["b", s("b")],
      ["c", s("c")],
    ],
    { tagIds: ["t1"], properties: { p: 1, q: "q" } },
  );
  const source = tree(
    [
      ["a", s("a", "a-source")],
      ["b", s("b", "b-source")],
      ["c", s("c")],
      ["n", s("n")],
    ],
    {
      tagIds: ["t1", "t2"],
      properties: { p: 2, q: "q" },
      path: "moved/by-source",
    },
  );
  const target = tree(
    [
      ["a", s("a", "a-target")],
      ["c", s("c", "c-target")],
    ],
    {
      tagIds: [],
      properties: { p: 3, q: "q" },
      path: "moved/by-target",
    },
  );

  test("lists exactly what is missing, and ignores resolutions for things not in conflict", () => {
    const analysis = analyze(base, source, target);
    expect(analysis.sections.map((e) => [e.sectionId, e.status])).toEqual([
      ["a", "conflict"],
      ["b", "conflict"],
      ["c", "unchanged"],
      ["n", "added"],
    ]);
    const partial = buildMergedTree(analysis, {
      sections: { b: "target", c: "source", nope: "source" },
      scalarPropertyResolutions: { q: "source" },
      documentDeletionResolution: "keep",
    });
    expect(partial).toEqual({
      missing: { sections: ["a"], tags: true, properties: ["p"], path: true, documentDeletion: false },
      ignored: [
        "resolution for section c ignored: that section is not in conflict",
        "resolution for section nope ignored: that section is not in conflict",
        "scalarPropertyResolutions entry for column q ignored: that property is not in conflict",
        "documentDeletionResolution ignored: there is no document deletion conflict",
      ],
    });
  });

  test("with every resolution: the merged tree", () => {
    const analysis = analyze(base, source, target);
    const result = buildMergedTree(analysis, {
      sections: { a: "source", b: "target" },
      tagResolution: "source",
      scalarPropertyResolutions: { p: "target" },
      resolvedPath: "resolved/path",
    });
    expect(result).toEqual({
      tree: {
        path: "resolved/path",
        name: "Pricing",
        description: null,
        deleted: false,
        tagIds: ["t1", "t2"],
        properties: { p: 3, q: "q" },
        sections: [
          { sectionId: "a", blobHash: hashSection(s("a", "a-source")) },
          { sectionId: "c", blobHash: hashSection(s("c", "c-target")) },
          { sectionId: "n", blobHash: hashSection(s("n")) },
        ],
      },
      ignored: [],
    });
    // b resolved to "source" keeps the source's edit
    const other = buildMergedTree(analysis, {
      sections: { a: "target", b: "source" },
      tagResolution: "target",
      scalarPropertyResolutions: { p: "source" },
      resolvedPath: "x",
    });
    expect("tree" in other && other.tree.sections.map((e) => e.sectionId)).toEqual(["a", "b", "c", "n"]);
    expect("tree" in other && other.tree.tagIds).toEqual([]);
  });

  test("no conflicts: no resolutions needed; the analysis is JSON-serialisable", () => {
    const analysis = analyze(base, source, base);
    expect(analysis.hasConflicts).toBe(false);
    const roundTripped = JSON.parse(JSON.stringify(analysis)) as MergeAnalysis;
    expect(buildMergedTree(roundTripped, {})).toEqual(buildMergedTree(analysis, {}));
    expect(mergedTree(analysis)).toEqual({ ...source, deleted: false });
  });
});
