/**
 * The merge engine (with the virtual base for criss-cross histories) against
 * real git: random small histories of two branches with edits, merges and
 * criss-cross merges (one, two and now and then three merge bases, and
 * recursive merge bases), one single-line file per section. For every history,
 * the set of sections our analysis reports as conflicts must equal the set of
 * files `git merge-tree --write-tree` reports as conflicted, and every other
 * section must merge to the same content (or absence) as in git's tree.
 *
 * All histories go into one bare repository through a single `git
 * fast-import`, then one `git merge-tree` + one `git ls-tree` per history, so
 * the whole file takes a few seconds.
 */
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { hashSection, newSectionVersion, type DocumentTree, type SectionVersion } from "@/server/core/document-model";
import { analyzeMerge, buildMergedTree, hashesNeededForAnalysis } from "@/server/core/merge-analysis";
import { buildVirtualBase } from "@/server/core/virtual-base";
import { createRng } from "../helpers/fuzz-rng";
import { gitAvailable, scratchRepository } from "../helpers/git-oracle";

/** A seeded random stream (mulberry32), so failures reproduce. */
const seededRandom = (seed: number) => createRng(seed).next;

/** More runs for a deeper search: MERGE_VS_GIT_RUNS=2000 npx vitest run tests/unit/merge-vs-git.test.ts */
const RUNS = Number(process.env.MERGE_VS_GIT_RUNS ?? 40);
const SECTION_IDS = ["s0", "s1", "s2", "s3", "s4", "s5"];

type Files = Map<string, string>; // section id -> its single line
interface Commit {
  id: string;
  parents: string[];
  files: Files;
}
interface History {
  seed: number;
  commits: Map<string, Commit>;
  log: string[];
  a: string;
  b: string;
}

function generate(seed: number): History {
  const rnd = seededRandom(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const value = (sid: string) => `${sid} v${int(4)}`;
  const commits = new Map<string, Commit>();
  const log: string[] = [];
  let n = 0;
  const commit = (parents: string[], files: Files, what: string) => {
    const id = `h${seed}c${n++}`;
    commits.set(id, { id, parents, files });
    log.push(`${id} <- [${parents.join(", ")}] ${what}: ${[...files].map(([k, v]) => `${k}=${v.split(" ")[1]}`).join(" ")}`);
    return id;
  };
  const root = commit([], new Map(SECTION_IDS.slice(0, 4).map((s) => [s, `${s} v0`])), "root");
  const heads = { a: root, b: root, c: root };
  const edit = (files: Files) => {
    const out = new Map(files);
    for (let k = 1 + int(2); k > 0; k--) {
      const sid = SECTION_IDS[int(SECTION_IDS.length)]!;
      if (out.has(sid) && rnd() < 0.3) out.delete(sid);
      else out.set(sid, value(sid));
    }
    return out;
  };
  /** Any tree is a valid merge result; mostly one side's value per section. */
  const mergeResult = (x: Files, y: Files) => {
    const out: Files = new Map();
    for (const sid of SECTION_IDS) {
      const r = rnd();
      const v = r < 0.45 ? x.get(sid) : r < 0.9 ? y.get(sid) : r < 0.95 ? value(sid) : undefined;
      if (v !== undefined) out.set(sid, v);
    }
    return out;
  };
  const files = (id: string) => commits.get(id)!.files;
  const steps = 3 + int(9);
  for (let i = 0; i < steps; i++) {
    const r = rnd();
    if (r < 0.25) heads.a = commit([heads.a], edit(files(heads.a)), "edit a");
    else if (r < 0.5) heads.b = commit([heads.b], edit(files(heads.b)), "edit b");
    else if (r < 0.8) {
      // criss-cross: each side merges the other at the same heads
      const { a, b } = heads;
      heads.a = commit([a, b], mergeResult(files(a), files(b)), "merge b into a");
      heads.b = commit([b, a], mergeResult(files(b), files(a)), "merge a into b");
    } else if (r < 0.85) heads.a = commit([heads.a, heads.b], mergeResult(files(heads.a), files(heads.b)), "merge b into a");
    else if (r < 0.9) heads.b = commit([heads.b, heads.a], mergeResult(files(heads.b), files(heads.a)), "merge a into b");
    else {
      // A third branch c: edited, merged into a or b, or taking a in; now and
      // then this gives a history with three merge bases.
      const r2 = rnd();
      if (r2 < 0.4) heads.c = commit([heads.c], edit(files(heads.c)), "edit c");
      else if (r2 < 0.6) heads.c = commit([heads.c, heads.a], mergeResult(files(heads.c), files(heads.a)), "merge a into c");
      else if (r2 < 0.8) heads.a = commit([heads.a, heads.c], mergeResult(files(heads.a), files(heads.c)), "merge c into a");
      else heads.b = commit([heads.b, heads.c], mergeResult(files(heads.b), files(heads.c)), "merge c into b");
    }
  }
  // Diverge at the end so the final merge has something to do.
  heads.a = commit([heads.a], edit(files(heads.a)), "edit a");
  heads.b = commit([heads.b], edit(files(heads.b)), "edit b");
  return { seed, commits, log, a: heads.a, b: heads.b };
}

// --- our side ---------------------------------------------------------------

const versionOf = (line: string): SectionVersion => newSectionVersion("Section", [{ blockType: "text", text: line }]);

function treeOf(files: Files): DocumentTree {
  return {
    path: "doc",
    name: "Doc",
    description: null,
    deleted: false,
    tagIds: [],
    properties: {},
    sections: [...files].map(([sectionId, line]) => ({ sectionId, blobHash: hashSection(versionOf(line)) })),
  };
}

function ancestors(h: History, id: string): Set<string> {
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (seen.has(c)) continue;
    seen.add(c);
    stack.push(...h.commits.get(c)!.parents);
  }
  return seen;
}

function mergeBases(h: History, x: string, y: string): string[] {
  const ay = ancestors(h, y);
  const common = [...ancestors(h, x)].filter((c) => ay.has(c));
  return common.filter((c) => !common.some((d) => d !== c && ancestors(h, d).has(c))).sort();
}

async function ours(h: History): Promise<{ bases: number; conflicts: string[]; merged: Map<string, string | null> }> {
  const blobs = new Map<string, SectionVersion>();
  for (const c of h.commits.values()) for (const line of c.files.values()) blobs.set(hashSection(versionOf(line)), versionOf(line));
  const bases = mergeBases(h, h.a, h.b);
  const virtual = await buildVirtualBase(bases, {
    treeOf: async (id) => treeOf(h.commits.get(id)!.files),
    mergeBasesOf: async (x, y) => mergeBases(h, x, y),
    loadSections: async (hashes) => new Map(hashes.map((x) => [x, blobs.get(x)!])),
  });
  const source = treeOf(h.commits.get(h.a)!.files);
  const target = treeOf(h.commits.get(h.b)!.files);
  const needed = hashesNeededForAnalysis(virtual.tree, source, target);
  const sectionsByHash = new Map(needed.map((x) => [x, virtual.sections.get(x) ?? blobs.get(x)!]));
  const analysis = analyzeMerge({ base: virtual.tree, source, target, sectionsByHash });
  const conflicts = analysis.sections.filter((e) => e.status === "conflict").map((e) => e.sectionId);
  const result = buildMergedTree(analysis, { sections: Object.fromEntries(conflicts.map((id) => [id, "source" as const])) });
  if (!("tree" in result)) throw new Error("unexpected missing resolutions");
  const merged = new Map<string, string | null>(SECTION_IDS.map((s) => [s, null]));
  for (const e of result.tree.sections) {
    const v = sectionsByHash.get(e.blobHash) ?? blobs.get(e.blobHash)!;
    merged.set(e.sectionId, (v.content[0] as { text: string }).text);
  }
  return { bases: bases.length, conflicts: conflicts.sort(), merged };
}

// --- git side ---------------------------------------------------------------

const gitBlobId = (content: string) => {
  const body = Buffer.from(content);
  return createHash("sha1")
    .update(Buffer.concat([Buffer.from(`blob ${body.length}\0`), body]))
    .digest("hex");
};

function fastImportStream(histories: History[]): string {
  const out: string[] = [];
  let mark = 0;
  const marks = new Map<string, number>();
  let time = 1_700_000_000;
  for (const h of histories) {
    for (const c of h.commits.values()) {
      const m = ++mark;
      marks.set(c.id, m);
      const msg = c.id;
      out.push(
        `commit refs/heads/${c.id}`,
        `mark :${m}`,
        `committer T <t@example.com> ${time++} +0000`,
        `data ${Buffer.byteLength(msg)}`,
        msg,
      );
      const [first, ...rest] = c.parents;
      if (first) out.push(`from :${marks.get(first)!}`);
      for (const p of rest) out.push(`merge :${marks.get(p)!}`);
      out.push("deleteall");
      for (const [sid, line] of c.files) {
        const content = `${line}\n`;
        out.push(`M 100644 inline ${sid}`, `data ${Buffer.byteLength(content)}`, content.slice(0, -1));
      }
      out.push("");
    }
  }
  return `${out.join("\n")}\n`;
}

describe.skipIf(!gitAvailable())("merge analysis agrees with git merge-tree", () => {
  test(`${RUNS} random histories with edits, merges and criss-cross merges`, async () => {
    const { git, remove } = scratchRepository("quire-merge-vs-git-");
    try {
      const histories = Array.from({ length: RUNS }, (_, i) => generate(1000 + i));
      git(["fast-import", "--quiet"], fastImportStream(histories));
      const baseCounts = new Map<number, number>();
      for (const h of histories) {
        const mine = await ours(h);
        baseCounts.set(mine.bases, (baseCounts.get(mine.bases) ?? 0) + 1);
        const mt = git([
          "-c",
          "merge.renames=false",
          "-c",
          "diff.renames=false",
          "merge-tree",
          "--write-tree",
          "--name-only",
          "--no-messages",
          h.a,
          h.b,
        ]);
        const [treeId, ...conflicted] = mt.stdout.split("\n").filter((l) => l !== "");
        const gitConflicts = [...new Set(conflicted)].sort();
        const context = `seed ${h.seed}, ${mine.bases} merge base(s)\n${h.log.join("\n")}`;
        expect(mine.conflicts, context).toEqual(gitConflicts);
        expect(mt.status, context).toBe(gitConflicts.length > 0 ? 1 : 0);
        // Non-conflicting sections merge to the same content as git's tree.
        const gitTree = new Map<string, string>();
        for (const line of git(["ls-tree", treeId!]).stdout.split("\n").filter(Boolean)) {
          const [meta, name] = line.split("\t") as [string, string];
          gitTree.set(name, meta.split(" ")[2]!);
        }
        for (const sid of SECTION_IDS) {
          if (gitConflicts.includes(sid)) continue;
          const expected = mine.merged.get(sid);
          expect(gitTree.get(sid) ?? null, `${sid}\n${context}`).toBe(expected == null ? null : gitBlobId(`${expected}\n`));
        }
      }
      // The generator does produce criss-cross merges (two or more merge bases).
      const multi = [...baseCounts].filter(([n]) => n >= 2).reduce((sum, [, c]) => sum + c, 0);
      expect(multi).toBeGreaterThanOrEqual(5);
    } finally {
      remove();
    }
  });
});
