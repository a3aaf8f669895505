/**
 * The commit graph on a real database: log walks, merge bases (`git merge-base
 * --all` semantics, criss-cross included), ancestry, histories longer than the
 * prefetch depth, and a cross-check against git itself on random DAGs.
 */
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Database, DatabaseHandle } from "@/db/client";
import { eq } from "drizzle-orm";
import { commits, documents } from "@/db/schema";
import type { ActionContext, Actor } from "@/server/actions/context";
import { tools } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { addUser } from "@/server/auth/accounts";
import { actorForUser } from "@/server/access/actor";
import type { DocumentTree } from "@/server/core/document-model";
import type { DomainError } from "@/server/core/errors";
import { createFileLinks } from "@/server/storage/links";
import { type CommitRecord, CommitGraph, insertCommit, isAncestor, mergeBases, walkLog } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { createBranch } from "@/server/store/commit-to-branch";
import { putTree } from "@/server/store/objects";
import { storageOnlyLiveDrafts } from "@/server/collab/live-drafts";
import { createTestDatabase } from "../helpers/database";

let database: DatabaseHandle;
let db: Database;
let authorId: string;
let workspaceId: string;
let actor: Actor;

beforeAll(async () => {
  database = await createTestDatabase();
  db = database.db;
  const created = await addUser(
    db,
    { email: "historian@example.test", name: "Hilda Historian", password: "correct horse battery" },
    new Date(),
  );
  authorId = created.user.id;
  workspaceId = created.workspaceId;
  actor = (await actorForUser(db, authorId, "person"))!;
});

afterAll(async () => {
  await database?.close();
});

const BASE_TIME = Date.UTC(2025, 0, 1);

/** Newest first, exactly as the store orders commits: generation, then time, then id. */
const newestFirst = (a: CommitRecord, b: CommitRecord): number =>
  b.generation - a.generation || b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

let documentCount = 0;

/**
 * One document's history, built through the store, with an in-memory model of
 * the same DAG to compute the expected answers by brute force.
 */
class History {
  readonly byLabel = new Map<string, CommitRecord>();
  readonly labelOf = new Map<string, string>();
  private readonly ancestorCache = new Map<string, Set<string>>();
  private clock = 0;

  private constructor(
    readonly documentId: string,
    private readonly treeHash: string,
    root: CommitRecord,
  ) {
    this.remember("root", root);
  }

  static async create(): Promise<History> {
    documentCount += 1;
    const tree: DocumentTree = {
      path: `history/doc-${documentCount}`,
      name: `doc-${documentCount}`,
      description: null,
      deleted: false,
      tagIds: [],
      properties: {},
      sections: [],
    };
    // The document row, its tree, root commit and `main` directly, so these
    // tests stay independent of how the documents action creates documents.
    const documentId = randomUUID();
    const now = new Date(BASE_TIME);
    await db
      .insert(documents)
      .values({ id: documentId, workspaceId, path: tree.path, name: tree.name, createdBy: authorId, createdAt: now, updatedAt: now });
    const treeHash = await putTree(db, tree);
    const root = await insertCommit(db, {
      documentId,
      parentIds: [],
      treeHash,
      message: "create",
      authorId,
      kind: "create",
      createdAt: now,
    });
    await createBranch(db, { document: { id: documentId, defaultBranch: "main" }, name: "main", headCommitId: root.id, authorId, now });
    return new History(documentId, treeHash, root);
  }

  private remember(label: string, record: CommitRecord): void {
    if (this.byLabel.has(label)) throw new Error(`duplicate label ${label}`);
    this.byLabel.set(label, record);
    this.labelOf.set(record.id, label);
  }

  /** Adds a commit; `at` defaults to one second after the previous commit (pass one to skew clocks). */
  async commit(label: string, parents: string[], at?: Date): Promise<CommitRecord> {
    this.clock += 1;
    const record = await insertCommit(db, {
      documentId: this.documentId,
      parentIds: parents.map((p) => this.id(p)),
      treeHash: this.treeHash,
      message: label,
      authorId,
      kind: parents.length > 1 ? "merge" : "write",
      createdAt: at ?? new Date(BASE_TIME + this.clock * 1000),
    });
    this.remember(label, record);
    return record;
  }

  /** A straight line of `count` commits on top of `from`, labelled prefix1..prefixN; returns the last label. */
  async chain(prefix: string, from: string, count: number): Promise<string> {
    let head = from;
    for (let i = 1; i <= count; i++) {
      await this.commit(`${prefix}${i}`, [head]);
      head = `${prefix}${i}`;
    }
    return head;
  }

  id(label: string): string {
    const record = this.byLabel.get(label);
    if (!record) throw new Error(`unknown label ${label}`);
    return record.id;
  }

  labels(ids: readonly string[]): string[] {
    return ids.map((id) => this.labelOf.get(id) ?? `?${id}`);
  }

  graph(tx: Tx = db): CommitGraph {
    return new CommitGraph(tx, this.documentId);
  }

  async mergeBases(a: string, b: string, tx: Tx = db): Promise<string[]> {
    return this.labels(await mergeBases(this.graph(tx), this.id(a), this.id(b)));
  }

  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return isAncestor(this.graph(), this.id(ancestor), this.id(descendant));
  }

  /** Ids of the commit and all its ancestors. */
  ancestors(label: string): Set<string> {
    const id = this.id(label);
    const cached = this.ancestorCache.get(id);
    if (cached) return cached;
    const result = new Set<string>([id]);
    for (const parent of this.byLabel.get(label)!.parentIds) {
      for (const a of this.ancestors(this.labelOf.get(parent)!)) result.add(a);
    }
    this.ancestorCache.set(id, result);
    return result;
  }

  /** Best common ancestors by brute force: common ancestors that no other common ancestor descends from. */
  expectedMergeBases(a: string, b: string): string[] {
    const inB = this.ancestors(b);
    const common = [...this.ancestors(a)].filter((id) => inB.has(id)).map((id) => this.labelOf.get(id)!);
    const best = common.filter((c) => !common.some((d) => d !== c && this.ancestors(d).has(this.id(c))));
    return best
      .map((l) => this.byLabel.get(l)!)
      .sort(newestFirst)
      .map((r) => this.labelOf.get(r.id)!);
  }

  /** Every ancestor of the heads exactly once, newest first. */
  expectedLog(heads: string[]): string[] {
    const all = new Set<string>();
    for (const h of heads) for (const a of this.ancestors(h)) all.add(a);
    return [...all]
      .map((id) => this.byLabel.get(this.labelOf.get(id)!)!)
      .sort(newestFirst)
      .map((r) => this.labelOf.get(r.id)!);
  }
}

/** Walks the whole log from `heads` in pages of `pageSize`, with a fresh graph per page as a cursor request would. */
async function pagedLog(history: History, heads: string[], pageSize: number): Promise<string[]> {
  const out: string[] = [];
  let frontier: string[] | null = heads.map((h) => history.id(h));
  let pages = 0;
  while (frontier) {
    const page = await walkLog(history.graph(), frontier, pageSize);
    expect(page.commits.length).toBeGreaterThan(0);
    if (page.nextFrontier) expect(page.commits).toHaveLength(pageSize);
    out.push(...history.labels(page.commits.map((c) => c.id)));
    frontier = page.nextFrontier;
    pages += 1;
    if (pages > 10_000) throw new Error("log never ended");
  }
  return out;
}

/** A Tx that counts round trips: CommitGraph only ever calls `execute`. */
function countingTx(): { tx: Tx; count: () => number } {
  let n = 0;
  const tx = {
    execute: (query: Parameters<Database["execute"]>[0]) => {
      n += 1;
      return db.execute(query);
    },
  } as unknown as Tx;
  return { tx, count: () => n };
}

/** mulberry32: small, seeded, good enough to shape DAGs. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * A random history of `size` commits: branches that grow, fork from any commit,
 * and merge each other's heads or older commits (which makes criss-crosses).
 * Timestamps are skewed at random so nothing can rely on the clock.
 */
async function randomHistory(seed: number, size: number): Promise<History> {
  const random = rng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const history = await History.create();
  const all = ["root"];
  const heads = ["root"];
  const skewed = () => new Date(BASE_TIME + all.length * 60_000 + Math.floor((random() - 0.5) * 3_600_000));
  while (all.length < size) {
    const label = `c${all.length}`;
    const r = random();
    const branch = Math.floor(random() * heads.length);
    if (r < 0.15 && heads.length < 8) {
      // A new branch from anywhere in history.
      await history.commit(label, [pick(all)], skewed());
      heads.push(label);
    } else if (r < 0.4 && all.length > 3) {
      const head = heads[branch]!;
      const other = random() < 0.6 ? pick(heads) : pick(all);
      const related = history.ancestors(head).has(history.id(other)) || history.ancestors(other).has(history.id(head));
      await history.commit(label, related ? [head] : random() < 0.5 ? [head, other] : [other, head], skewed());
      heads[branch] = label;
    } else {
      await history.commit(label, [heads[branch]!], skewed());
      heads[branch] = label;
    }
    all.push(label);
  }
  return history;
}

describe("linear history", () => {
  let h: History;
  beforeAll(async () => {
    h = await History.create();
    await h.chain("c", "root", 9);
  });

  test("log lists every commit newest first and ends", async () => {
    const page = await walkLog(h.graph(), [h.id("c9")], 100);
    expect(h.labels(page.commits.map((c) => c.id))).toEqual(["c9", "c8", "c7", "c6", "c5", "c4", "c3", "c2", "c1", "root"]);
    expect(page.commits.map((c) => c.generation)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    expect(page.nextFrontier).toBeNull();
  });

  test("the merge base of a commit and its ancestor is the ancestor; of a commit and itself, itself", async () => {
    expect(await h.mergeBases("c9", "c3")).toEqual(["c3"]);
    expect(await h.mergeBases("c3", "c9")).toEqual(["c3"]);
    expect(await h.mergeBases("c5", "c5")).toEqual(["c5"]);
    expect(await h.mergeBases("root", "c9")).toEqual(["root"]);
  });

  test("isAncestor is reflexive and one-way", async () => {
    expect(await h.isAncestor("c3", "c9")).toBe(true);
    expect(await h.isAncestor("root", "c9")).toBe(true);
    expect(await h.isAncestor("c9", "c3")).toBe(false);
    expect(await h.isAncestor("c4", "c4")).toBe(true);
  });

  test("a commit of another document is not found through this document's graph", async () => {
    const other = await History.create();
    await expect(walkLog(h.graph(), [other.id("root")], 10)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(mergeBases(h.graph(), h.id("c9"), other.id("root"))).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});

describe("merge bases", () => {
  test("a simple fork: the fork point", async () => {
    const h = await History.create();
    await h.chain("m", "root", 2);
    await h.chain("a", "m2", 2);
    await h.chain("b", "m2", 3);
    expect(await h.mergeBases("a2", "b3")).toEqual(["m2"]);
    expect(await h.mergeBases("b3", "a2")).toEqual(["m2"]);
    expect(await h.mergeBases("a1", "b1")).toEqual(["m2"]);
    expect(await h.isAncestor("a2", "b3")).toBe(false);
    expect(await h.isAncestor("b3", "a2")).toBe(false);
    expect(await h.isAncestor("m2", "a2")).toBe(true);
    expect(await h.isAncestor("m2", "b3")).toBe(true);
  });

  test("one head the ancestor of the other: the merge base is that head, in either order", async () => {
    const h = await History.create();
    await h.chain("m", "root", 3);
    await h.chain("f", "m3", 4);
    // A merge on top too, so "ancestor" is not just "on the same line".
    await h.chain("s", "m1", 2);
    await h.commit("merge", ["f4", "s2"]);
    for (const [a, b] of [
      ["m3", "f4"],
      ["m3", "merge"],
      ["s1", "merge"],
    ] as const) {
      expect(await h.mergeBases(a, b)).toEqual([a]);
      expect(await h.mergeBases(b, a)).toEqual([a]);
      expect(await h.isAncestor(a, b)).toBe(true);
      expect(await h.isAncestor(b, a)).toBe(false);
    }
    expect(await h.isAncestor("s2", "f4")).toBe(false);
    expect(await h.isAncestor("f4", "s2")).toBe(false);
  });

  test("repeated merges move the merge base up to the last commit merged", async () => {
    //  root - m1 ----- M1 --- m2 ---- M2 - m3        (main)
    //           \     /              /
    //            f1 - f2 ---------- f3 ---- f4       (feature)
    const h = await History.create();
    await h.commit("m1", ["root"]);
    await h.chain("f", "m1", 2);
    await h.commit("M1", ["m1", "f2"]);
    expect(await h.mergeBases("M1", "f2")).toEqual(["f2"]);
    await h.commit("m2", ["M1"]);
    await h.commit("f3", ["f2"]);
    expect(await h.mergeBases("m2", "f3")).toEqual(["f2"]);
    await h.commit("M2", ["m2", "f3"]);
    await h.commit("m3", ["M2"]);
    await h.commit("f4", ["f3"]);
    expect(await h.mergeBases("m3", "f4")).toEqual(["f3"]);
    expect(await h.mergeBases("f4", "m3")).toEqual(["f3"]);
  });

  test("two independent topic branches merged into main: bases for each and for a branch forked before both", async () => {
    //  root - m1 - m2 ------ A ---- m3 ---- B - m4
    //          \    \       /              /
    //           \    t1 - t2              /
    //            \                       /
    //             u1 - u2 - u3 ---------'
    //          old1 (from m1)
    const h = await History.create();
    await h.chain("m", "root", 2);
    await h.chain("t", "m2", 2);
    await h.chain("u", "m1", 3);
    await h.commit("old1", ["m1"]);
    await h.commit("A", ["m2", "t2"]);
    await h.commit("m3", ["A"]);
    await h.commit("B", ["m3", "u3"]);
    await h.commit("m4", ["B"]);
    expect(await h.mergeBases("m4", "t2")).toEqual(["t2"]);
    expect(await h.mergeBases("m4", "u3")).toEqual(["u3"]);
    expect(await h.mergeBases("m4", "old1")).toEqual(["m1"]);
    expect(await h.mergeBases("t2", "u3")).toEqual(["m1"]);
    expect(await h.mergeBases("A", "u2")).toEqual(["m1"]);
  });

  test("criss-cross: each branch merged the other's tip, so there are two best common ancestors", async () => {
    //  root - a1 - A2        A2 = merge(a1, b1)
    //      \     X
    //       b1 - B2          B2 = merge(b1, a1)
    const h = await History.create();
    await h.commit("a1", ["root"], new Date(BASE_TIME + 10_000));
    await h.commit("b1", ["root"], new Date(BASE_TIME + 20_000));
    await h.commit("A2", ["a1", "b1"]);
    await h.commit("B2", ["b1", "a1"]);
    // Same generation: the later commit (b1) comes first.
    expect(await h.mergeBases("A2", "B2")).toEqual(["b1", "a1"]);
    expect(await h.mergeBases("B2", "A2")).toEqual(["b1", "a1"]);
    // And again one level up: both branches keep going and criss-cross once more.
    await h.commit("a3", ["A2"]);
    await h.commit("b3", ["B2"]);
    await h.commit("A4", ["a3", "b3"]);
    await h.commit("B4", ["b3", "a3"]);
    expect((await h.mergeBases("A4", "B4")).sort()).toEqual(["a3", "b3"]);
    expect(await h.mergeBases("A4", "B4")).toEqual(h.expectedMergeBases("A4", "B4"));
  });

  test("criss-cross with three best common ancestors", async () => {
    //  x1, y1, z1 from root; A = (x1 + y1) + z1; B = (y1 + z1) + x1.
    const h = await History.create();
    await h.commit("x1", ["root"]);
    await h.commit("y1", ["root"]);
    await h.commit("z1", ["root"]);
    await h.commit("A1", ["x1", "y1"]);
    await h.commit("A2", ["A1", "z1"]);
    await h.commit("B1", ["y1", "z1"]);
    await h.commit("B2", ["B1", "x1"]);
    const bases = await h.mergeBases("A2", "B2");
    expect([...bases].sort()).toEqual(["x1", "y1", "z1"]);
    // Sorted newest first: same generation, so by time (z1 is the latest).
    expect(bases).toEqual(["z1", "y1", "x1"]);
    expect(await h.mergeBases("B2", "A2")).toEqual(bases);
  });

  test("a common ancestor below another common ancestor is dropped, whatever the paths and clocks say", async () => {
    //  root - X - p1 - p2 - p3 - p4 - Y
    //         |\                       \
    //         | a1 ------------------- A = merge(a1, Y)
    //          \                         \
    //           b1 --------------------- B = merge(b1, Y)
    // X is reached from A and B in two steps, Y in one; X's side carries the
    // latest timestamps, so a date-ordered walk would meet X as "common" first.
    const h = await History.create();
    const late = (s: number) => new Date(BASE_TIME + 1_000_000_000 + s * 1000);
    const early = (s: number) => new Date(BASE_TIME + s * 1000);
    await h.commit("X", ["root"], early(1));
    let prev = "X";
    for (let i = 1; i <= 4; i++) {
      await h.commit(`p${i}`, [prev], early(1 + i));
      prev = `p${i}`;
    }
    await h.commit("Y", [prev], early(10));
    await h.commit("a1", ["X"], late(1));
    await h.commit("b1", ["X"], late(2));
    await h.commit("A", ["a1", "Y"], late(3));
    await h.commit("B", ["b1", "Y"], late(4));
    expect(await h.mergeBases("A", "B")).toEqual(["Y"]);
    expect(await h.mergeBases("B", "A")).toEqual(["Y"]);
    // Two candidates where one is the other's ancestor through a merge: only the upper one survives.
    await h.commit("c1", ["Y"], early(20));
    await h.commit("A2", ["A", "c1"], late(5));
    await h.commit("B2", ["B", "c1"], late(6));
    expect(await h.mergeBases("A2", "B2")).toEqual(["c1"]);
    expect(h.expectedMergeBases("A2", "B2")).toEqual(["c1"]);
  });

  test("unrelated roots have no merge base", async () => {
    // Not something Quire creates, but the walk must end cleanly on it.
    const h = await History.create();
    await h.chain("a", "root", 2);
    const other = await insertCommit(db, {
      documentId: h.documentId,
      parentIds: [],
      treeHash: h.byLabel.get("root")!.treeHash,
      message: "second root",
      authorId,
      kind: "create",
      createdAt: new Date(BASE_TIME),
    });
    expect(await mergeBases(h.graph(), h.id("a2"), other.id)).toEqual([]);
    expect(await isAncestor(h.graph(), other.id, h.id("a2"))).toBe(false);
  });
});

describe("histories longer than the prefetch depth", () => {
  const SIDE = 150;
  const TRUNK = 600;
  let long: History;
  let short: History;

  /** `trunk` commits, then two branches of SIDE commits each from the tip of the trunk. */
  async function forked(trunk: number): Promise<History> {
    const h = await History.create();
    const fork = trunk === 0 ? "root" : await h.chain("t", "root", trunk);
    await h.chain("a", fork, SIDE);
    await h.chain("b", fork, SIDE);
    return h;
  }

  beforeAll(async () => {
    long = await forked(TRUNK);
    short = await forked(0);
  }, 240_000);

  test("merge base and ancestry across 150 commits on each side", async () => {
    expect(await long.mergeBases(`a${SIDE}`, `b${SIDE}`)).toEqual([`t${TRUNK}`]);
    expect(await long.mergeBases(`b${SIDE}`, `a${SIDE}`)).toEqual([`t${TRUNK}`]);
    expect(await long.mergeBases(`a${SIDE}`, "b1")).toEqual([`t${TRUNK}`]);
    expect(await long.mergeBases(`a${SIDE}`, "a1")).toEqual(["a1"]);
    expect(await short.mergeBases(`a${SIDE}`, `b${SIDE}`)).toEqual(["root"]);
    expect(await long.isAncestor(`t${TRUNK}`, `a${SIDE}`)).toBe(true);
    expect(await long.isAncestor("t1", `b${SIDE}`)).toBe(true);
    expect(await long.isAncestor("a1", `b${SIDE}`)).toBe(false);
    expect(await long.isAncestor(`a${SIDE}`, `b${SIDE}`)).toBe(false);
  });

  test("the merge base costs the same round trips whatever lies below the fork, and only a few", async () => {
    const onLong = countingTx();
    await long.mergeBases(`a${SIDE}`, `b${SIDE}`, onLong.tx);
    const onShort = countingTx();
    await short.mergeBases(`a${SIDE}`, `b${SIDE}`, onShort.tx);
    // 150 commits a side at 64 per round trip: about three per side.
    expect(onLong.count()).toBeLessThanOrEqual(2 * Math.ceil((SIDE + 1) / 64) + 2);
    expect(onLong.count()).toBe(onShort.count());
  });

  test("the full log of a long history, one page or many, is every commit once, newest first", async () => {
    const heads = [`a${SIDE}`];
    const expected = long.expectedLog(heads);
    expect(expected).toHaveLength(TRUNK + SIDE + 1);
    const whole = await walkLog(
      long.graph(),
      heads.map((x) => long.id(x)),
      10_000,
    );
    expect(long.labels(whole.commits.map((c) => c.id))).toEqual(expected);
    expect(whole.nextFrontier).toBeNull();
    expect(await pagedLog(long, heads, 50)).toEqual(expected);
    // Both branch heads at once: the union, each once.
    const both = [`a${SIDE}`, `b${SIDE}`];
    expect(await pagedLog(long, both, 64)).toEqual(long.expectedLog(both));
  });

  test("a log page deep in history costs a round trip or two, not one per commit", async () => {
    let frontier = [long.id(`a${SIDE}`)];
    for (let page = 0; page < 12; page++) {
      const counted = countingTx();
      const result = await walkLog(new CommitGraph(counted.tx, long.documentId), frontier, 50);
      expect(counted.count()).toBeLessThanOrEqual(2);
      frontier = result.nextFrontier!;
    }
  });
});

describe("walkLog on a DAG with merges", () => {
  let h: History;
  let heads: string[];
  beforeAll(async () => {
    h = await randomHistory(7, 180);
    // The newest few commits make a multi-head frontier.
    heads = ["c179", "c170", "c150"];
  }, 120_000);

  test("newest first by generation, every ancestor exactly once, merged-in commits included", async () => {
    const page = await walkLog(h.graph(), [h.id("c179")], 10_000);
    const labels = h.labels(page.commits.map((c) => c.id));
    expect(new Set(labels).size).toBe(labels.length);
    expect(labels).toEqual(h.expectedLog(["c179"]));
    const gens = page.commits.map((c) => c.generation);
    expect(gens).toEqual([...gens].sort((a, b) => b - a));
    // The DAG really has merges on this history, and their second parents are listed.
    const merges = page.commits.filter((c) => c.parentIds.length === 2);
    expect(merges.length).toBeGreaterThan(5);
    for (const m of merges) expect(labels).toContain(h.labelOf.get(m.parentIds[1]!));
  });

  test("paging by frontier yields exactly the one-page sequence, for every page size", async () => {
    const expected = h.expectedLog(heads);
    for (const size of [1, 2, 3, 5, 7, 16, 50, 63, 64, 65, 200]) {
      expect(await pagedLog(h, heads, size), `page size ${size}`).toEqual(expected);
    }
  });

  test("the documents `log` action pages through the same sequence by cursor", async () => {
    // Put a branch at a merge-heavy head and read it through the real action.
    await createBranch(db, {
      document: { id: h.documentId, defaultBranch: "main" },
      name: "random",
      headCommitId: h.id("c179"),
      authorId,
      now: new Date(),
    });
    const ctx: ActionContext = {
      db,
      actor,
      clock: () => new Date(),
      files: createFileLinks({ authSecret: "history-test", baseUrl: "http://127.0.0.1" }),
      live: storageOnlyLiveDrafts(db),
    };
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 1_000; i++) {
      const page = (await runTool(tools.documents, ctx, {
        action: "log",
        documentId: h.documentId,
        branchName: "random",
        limit: 13,
        ...(cursor ? { cursor } : {}),
      })) as { commits: Array<{ commitId: string; parentIds: string[] }>; nextCursor: string | null };
      seen.push(...h.labels(page.commits.map((c) => c.commitId)));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(h.expectedLog(["c179"]));
  });
});

describe("merge bases agree with git merge-base --all", () => {
  const gitEnv = {
    ...process.env,
    GIT_AUTHOR_NAME: "Quire Test",
    GIT_AUTHOR_EMAIL: "test@example.test",
    GIT_COMMITTER_NAME: "Quire Test",
    GIT_COMMITTER_EMAIL: "test@example.test",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    HOME: tmpdir(),
  };
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** The same DAG as empty git commits; returns label -> sha. */
  function toGit(h: History): { git: (...args: string[]) => string; sha: Map<string, string>; label: Map<string, string> } {
    const dir = mkdtempSync(path.join(tmpdir(), "quire-history-"));
    dirs.push(dir);
    const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: gitEnv, encoding: "utf8" }).trim();
    const gitWithInput = (input: string, ...args: string[]) =>
      execFileSync("git", args, { cwd: dir, env: gitEnv, encoding: "utf8", input }).trim();
    git("init", "-q");
    const emptyTree = gitWithInput("", "mktree");
    const sha = new Map<string, string>();
    const label = new Map<string, string>();
    // byLabel keeps insertion order, which is a topological order.
    let i = 0;
    for (const [name, record] of h.byLabel) {
      i += 1;
      const date = `${1_700_000_000 + i} +0000`;
      const parents = record.parentIds.flatMap((p) => ["-p", sha.get(h.labelOf.get(p)!)!]);
      const commit = execFileSync("git", ["commit-tree", emptyTree, ...parents, "-m", name], {
        cwd: dir,
        env: { ...gitEnv, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date },
        encoding: "utf8",
      }).trim();
      sha.set(name, commit);
      label.set(commit, name);
    }
    return { git, sha, label };
  }

  for (const seed of [1, 2, 3]) {
    test(`random DAG ${seed}: ~200 commits, 20 pairs`, async () => {
      const h = await randomHistory(seed * 7919, 200);
      const { git, sha, label } = toGit(h);
      const random = rng(seed);
      const names = [...h.byLabel.keys()];
      const recent = names.slice(-40);
      let multiple = 0;
      for (let i = 0; i < 20; i++) {
        // Mostly recent commits (where branches and merges interleave), some from anywhere.
        const a = i % 3 === 0 ? names[Math.floor(random() * names.length)]! : recent[Math.floor(random() * recent.length)]!;
        const b = recent[Math.floor(random() * recent.length)]!;
        const ours = await h.mergeBases(a, b);
        const theirs = git("merge-base", "--all", sha.get(a)!, sha.get(b)!)
          .split("\n")
          .filter(Boolean)
          .map((s) => label.get(s)!);
        expect([...ours].sort(), `merge-base ${a} ${b}`).toEqual([...theirs].sort());
        expect(ours, `merge-base ${a} ${b} order`).toEqual(h.expectedMergeBases(a, b));
        if (ours.length > 1) multiple += 1;
        const aUnderB = await h.isAncestor(a, b);
        let gitSays: boolean;
        try {
          git("merge-base", "--is-ancestor", sha.get(a)!, sha.get(b)!);
          gitSays = true;
        } catch {
          gitSays = false;
        }
        expect(aUnderB, `is-ancestor ${a} ${b}`).toBe(gitSays);
      }
      // Brute force on many more pairs, so criss-crosses are surely met; one
      // shared graph (its cache warm after the first walks) keeps this cheap.
      const shared = h.graph();
      for (const a of recent.slice(-30)) {
        for (const b of recent.slice(0, 8)) {
          const ours = h.labels(await mergeBases(shared, h.id(a), h.id(b)));
          expect(ours, `merge-base ${a} ${b}`).toEqual(h.expectedMergeBases(a, b));
          if (ours.length > 1) multiple += 1;
        }
      }
      expect(multiple, "these DAGs should contain criss-cross pairs").toBeGreaterThan(0);
    });
  }
});

describe("short commit ids", () => {
  let h: History;
  let other: History;
  const ctx = (): ActionContext => ({
    db,
    actor,
    clock: () => new Date(),
    files: createFileLinks({ authSecret: "history-test", baseUrl: "http://127.0.0.1" }),
    live: storageOnlyLiveDrafts(db),
  });
  const show = (documentId: string, commitId: string) => runTool(tools.documents, ctx(), { action: "show", documentId, commitId });
  const failure = async (run: Promise<unknown>) => {
    const error = await run.then(
      () => null,
      (caught: unknown) => caught,
    );
    return error as DomainError | null;
  };

  beforeAll(async () => {
    h = await History.create();
    other = await History.create();
    // Two commits whose ids share their first 8 digits, and one more: stored commits given chosen ids.
    for (const [label, id] of [
      ["twin1", "abcdef01-2345-4789-8abc-def012345678"],
      ["twin2", "abcdef01-9999-4999-8999-999999999999"],
      ["single", "1234567a-bcde-4f01-8234-56789abcdef0"],
    ] as const) {
      const record = await h.commit(label, ["root"]);
      await db.update(commits).set({ id }).where(eq(commits.id, record.id));
      h.byLabel.set(label, { ...record, id });
    }
    await other.commit("elsewhere", ["root"]);
  });

  test("a unique prefix of 7 or more hex digits names its commit, with or without the id's hyphens", async () => {
    for (const ref of ["1234567", "1234567a", "1234567a-bc", "1234567abc", "1234567ABCDE"]) {
      const shown = (await show(h.documentId, ref)) as { commit: { commitId: string; message: string } };
      expect(shown.commit.commitId, ref).toBe(h.id("single"));
      expect(shown.commit.message).toBe("single");
    }
    const twin = (await show(h.documentId, "abcdef01-2")) as { commit: { commitId: string } };
    expect(twin.commit.commitId).toBe(h.id("twin1"));
  });

  test("a prefix several commits share is AMBIGUOUS_COMMIT_ID, listing them; one naming none is NOT_FOUND", async () => {
    const ambiguous = await failure(show(h.documentId, "abcdef0"));
    expect(ambiguous?.code).toBe("AMBIGUOUS_COMMIT_ID");
    expect(ambiguous?.message).toMatch(/matches 2 commits/);
    expect(ambiguous?.details?.matches).toEqual([h.id("twin1"), h.id("twin2")]);
    expect((await failure(show(h.documentId, "7777777")))?.code).toBe("NOT_FOUND");
    // Another document's commit is not this document's, however short the id.
    const elsewhere = other.id("elsewhere").slice(0, 8);
    expect((await failure(show(h.documentId, elsewhere)))?.code).toBe("NOT_FOUND");
  });

  test("fewer than 7 digits, or anything not hex, is refused before any lookup", async () => {
    for (const ref of ["123456", "1234567g", "12345678-", "-1234567", `${"a".repeat(33)}`]) {
      expect((await failure(show(h.documentId, ref)))?.code, ref).toBe("VALIDATION_FAILED");
    }
  });

  test("read and revert take short ids too", async () => {
    const read = (await runTool(tools.read, ctx(), { documentId: h.documentId, commitId: "1234567" })) as { headCommitId: string };
    expect(read.headCommitId).toBe(h.id("single"));
    const revert = await failure(
      runTool(tools.documents, ctx(), { action: "revert", documentId: h.documentId, branchName: "main", commitId: "abcdef0" }),
    );
    expect(revert?.code).toBe("AMBIGUOUS_COMMIT_ID");
  });
});
