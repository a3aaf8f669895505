/**
 * History benchmark: `log` (first page and a page deep in history) and merge
 * base cost as a document's history grows from 100 to 100,000 commits. The
 * target (DESIGN.md §8) is that both stay flat.
 *
 *   npx tsx bench/history.ts            # PostgreSQL at DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres
 *   BENCH_RUNS=10 npx tsx bench/history.ts
 *
 * Creates its own database (quire_bench_*), drops it at the end. Also builds the
 * same DAG in a throwaway git repository (git fast-import) and times the git
 * commands that answer the same questions, as a reference point.
 */
import { execFileSync } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { type Database, openDatabase } from "@/db/client";
import { branches, commits, documents } from "@/db/schema";
import type { ActionContext } from "@/server/actions/context";
import { tools } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { addUser } from "@/server/auth/accounts";
import { actorForUser } from "@/server/access/actor";
import type { DocumentTree } from "@/server/core/document-model";
import { createFileLinks } from "@/server/storage/links";
import { CommitGraph, insertCommit, walkLog, walkToMergeBases } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { createBranch } from "@/server/store/commit-to-branch";
import { putTree } from "@/server/store/objects";
import { storageOnlyLiveDrafts } from "@/server/collab/live-drafts";

const SIZES = [100, 10_000, 100_000];
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 10;
const PAGE = 50;
const DEEP_PAGE = 20;
/** The feature branch forks this many commits before main's tip and has as many of its own. */
const FORK_DEPTH = 50;
/** A small topic branch (3 commits, forked 20 back) is merged into main every this many commits. */
const MERGE_EVERY = 500;
const BATCH = 5_000;

interface Row {
  id: string;
  parentIds: string[];
  generation: number;
}

/** The DAG of one document, in topological order, with correct generation numbers. */
function buildDag(mainLength: number, rootId: string): { rows: Row[]; mainHead: Row; featureHead: Row } {
  const rows: Row[] = [];
  const add = (parents: Row[]): Row => {
    const row = { id: randomUUID(), parentIds: parents.map((p) => p.id), generation: 1 + Math.max(0, ...parents.map((p) => p.generation)) };
    rows.push(row);
    return row;
  };
  const main: Row[] = [{ id: rootId, parentIds: [], generation: 1 }];
  let featureHead: Row | undefined;
  for (let i = 1; i < mainLength; i++) {
    const prev = main[i - 1]!;
    if (i % MERGE_EVERY === 0 && i >= 20) {
      let topic = main[i - 20]!;
      for (let t = 0; t < 3; t++) topic = add([topic]);
      main.push(add([prev, topic]));
    } else {
      main.push(add([prev]));
    }
    if (i === mainLength - 1 - FORK_DEPTH) {
      // Remember the fork point; the feature commits are added after main so rows stay topological either way.
      featureHead = main[i];
    }
  }
  let head = featureHead ?? main[0]!;
  for (let f = 0; f < FORK_DEPTH; f++) head = add([head]);
  return { rows, mainHead: main[main.length - 1]!, featureHead: head };
}

/** Bulk insert, BATCH rows per statement. */
async function insertRows(db: Database, documentId: string, authorId: string, treeHash: string, rows: Row[], start: number): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    await db.insert(commits).values(
      rows.slice(i, i + BATCH).map((r, j) => ({
        id: r.id,
        documentId,
        parentIds: r.parentIds,
        generation: r.generation,
        treeHash,
        message: `commit ${i + j + 1}`,
        authorId,
        kind: r.parentIds.length > 1 ? ("merge" as const) : ("write" as const),
        createdAt: new Date(start + (i + j + 1) * 1000),
      })),
    );
  }
}

interface Stats {
  median: number;
  p95: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { median: at(0.5), p95: at(0.95) };
}

/**
 * Times every operation of every case in interleaved rounds (case 1 op 1, case 1
 * op 2, ..., case 2 op 1, ...), after a shared warm-up, so JIT warm-up, caches
 * and background noise fall on all sizes alike instead of on whichever ran first.
 */
async function measureInterleaved(ops: Array<() => Promise<unknown>>): Promise<Stats[]> {
  for (let i = 0; i < WARMUP; i++) for (const op of ops) await op();
  const samples = ops.map(() => [] as number[]);
  for (let round = 0; round < RUNS; round++) {
    for (const [i, op] of ops.entries()) {
      const t0 = performance.now();
      await op();
      samples[i]!.push(performance.now() - t0);
    }
  }
  return samples.map(stats);
}

function measureSync(fn: () => unknown): Stats {
  for (let i = 0; i < 2; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 15); i++) {
    const t0 = performance.now();
    fn();
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

/** Counts the round trips a CommitGraph makes (it only calls `execute`). */
function countingTx(db: Database): { tx: Tx; count: () => number } {
  let n = 0;
  const tx = {
    execute: (query: Parameters<Database["execute"]>[0]) => {
      n += 1;
      return db.execute(query);
    },
  } as unknown as Tx;
  return { tx, count: () => n };
}

interface LogPage {
  commits: Array<{ commitId: string }>;
  nextCursor: string | null;
}

/** The same DAG as empty git commits, through fast-import; returns the repository folder. */
function gitRepo(dag: { rows: Row[]; mainHead: Row; featureHead: Row }, rootId: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "quire-bench-git-"));
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir };
  execFileSync("git", ["init", "-q"], { cwd: dir, env });
  const mark = new Map<string, number>([[rootId, 1]]);
  const lines: string[] = [
    "commit refs/heads/scratch",
    "mark :1",
    "committer Bench <bench@example.test> 1700000000 +0000",
    "data 4",
    "root",
    "",
  ];
  dag.rows.forEach((r, i) => {
    const m = i + 2;
    mark.set(r.id, m);
    const message = `c${m}`;
    lines.push("commit refs/heads/scratch", `mark :${m}`, `committer Bench <bench@example.test> ${1_700_000_000 + m} +0000`);
    lines.push(`data ${Buffer.byteLength(message)}`, message);
    lines.push(`from :${mark.get(r.parentIds[0]!)}`);
    for (const p of r.parentIds.slice(1)) lines.push(`merge :${mark.get(p)}`);
    lines.push("");
  });
  lines.push("reset refs/heads/main", `from :${mark.get(dag.mainHead.id)}`, "");
  lines.push("reset refs/heads/feature", `from :${mark.get(dag.featureHead.id)}`, "");
  execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, env, input: lines.join("\n"), maxBuffer: 1 << 28 });
  execFileSync("git", ["commit-graph", "write", "--reachable"], { cwd: dir, env });
  return dir;
}

const fmt = (s: Stats) => `${s.median.toFixed(2)} / ${s.p95.toFixed(2)}`;

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const name = `quire_bench_${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ url: url.toString(), maxConnections: 4 });
  const gitDirs: string[] = [];
  const began = performance.now();
  try {
    await handle.migrate();
    const { db } = handle;
    const pgVersion = ((await admin`show server_version`) as unknown as Array<{ server_version: string }>)[0]!.server_version;
    const { user } = await addUser(db, { email: "bench@example.test", name: "Bench", password: "bench-password" }, new Date());
    const actor = (await actorForUser(db, user.id, "agent"))!;
    // `log` never signs file links; the context just needs them.
    const files = createFileLinks({ authSecret: "quire-bench", baseUrl: "http://127.0.0.1" });
    const ctx: ActionContext = { db, actor, clock: () => new Date(), files, live: storageOnlyLiveDrafts(db) };

    console.log(`# history bench — ${new Date().toISOString().slice(0, 10)}`);
    console.log(
      `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), node ${process.version}, PostgreSQL ${pgVersion}, ${RUNS} runs each, load average ${os.loadavg()[0]!.toFixed(1)} at start`,
    );
    console.log("");

    interface Case {
      size: number;
      total: number;
      documentId: string;
      dag: ReturnType<typeof buildDag>;
      deepPage: number;
      deepCursor: string | undefined;
      roundTrips: { log1: number; logDeep: number; mergeBase: number };
      repo: string;
    }
    const cases: Case[] = [];
    for (const size of SIZES) {
      const t0 = performance.now();
      const tree: DocumentTree = {
        path: `bench/history-${size}`,
        name: `history-${size}`,
        description: null,
        deleted: false,
        tagIds: [],
        properties: {},
        sections: [],
      };
      const start = Date.UTC(2025, 0, 1);
      // The document row, its tree, root commit and `main` directly through the store's pieces.
      const documentId = randomUUID();
      const now = new Date(start);
      await db.insert(documents).values({
        id: documentId,
        workspaceId: actor.workspaceId,
        path: tree.path,
        name: tree.name,
        createdBy: user.id,
        createdAt: now,
        updatedAt: now,
      });
      const treeHash = await putTree(db, tree);
      const root = await insertCommit(db, {
        documentId,
        parentIds: [],
        treeHash,
        message: "create",
        authorId: user.id,
        kind: "create",
        createdAt: now,
      });
      await createBranch(db, {
        document: { id: documentId, defaultBranch: "main" },
        name: "main",
        headCommitId: root.id,
        authorId: user.id,
        now,
      });
      const dag = buildDag(size, root.id);
      await insertRows(db, documentId, user.id, treeHash, dag.rows, start);
      await db.update(branches).set({ headCommitId: dag.mainHead.id }).where(eq(branches.documentId, documentId));
      await createBranch(db, {
        document: { id: documentId, defaultBranch: "main" },
        name: "feature",
        headCommitId: dag.featureHead.id,
        authorId: user.id,
        now: new Date(),
      });
      await db.execute(sql`vacuum (analyze) commits`);
      const total = dag.rows.length + 1;
      console.error(`[bench] ${size}: ${total} commits inserted in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

      // Sanity: the merge base is the fork point, FORK_DEPTH generations below main's tip.
      const counted = countingTx(db);
      const bases = await walkToMergeBases(new CommitGraph(counted.tx, documentId), dag.mainHead.id, dag.featureHead.id);
      const fork = bases[0] === root.id ? { generation: 1 } : dag.rows.find((r) => r.id === bases[0]);
      if (bases.length !== 1 || !fork || fork.generation !== dag.mainHead.generation - FORK_DEPTH) {
        throw new Error(`unexpected merge base ${JSON.stringify(bases)}`);
      }

      // The cursor of the deepest page timed: page 20, or the last page of a short history.
      const cursors: Array<string | undefined> = [undefined];
      for (let page = 1; page < DEEP_PAGE; page++) {
        const previous = cursors[page - 1];
        const result = (await runTool(tools.documents, ctx, {
          action: "log",
          documentId,
          limit: PAGE,
          ...(previous ? { cursor: previous } : {}),
        })) as LogPage;
        if (!result.nextCursor) break;
        cursors.push(result.nextCursor);
      }
      // Round trips of the store-level walks behind the same pages (a fresh graph per page, as a request has).
      let frontier = [dag.mainHead.id];
      const walkTrips: number[] = [];
      for (let page = 1; page <= cursors.length; page++) {
        const walk = countingTx(db);
        const result = await walkLog(new CommitGraph(walk.tx, documentId), frontier, PAGE);
        walkTrips.push(walk.count());
        if (!result.nextFrontier) break;
        frontier = result.nextFrontier;
      }
      const repo = gitRepo(dag, root.id);
      gitDirs.push(repo);
      cases.push({
        size,
        total,
        documentId,
        dag,
        deepPage: cursors.length,
        deepCursor: cursors[cursors.length - 1],
        roundTrips: { log1: walkTrips[0]!, logDeep: walkTrips[walkTrips.length - 1]!, mergeBase: counted.count() },
        repo,
      });
    }

    const ops = cases.flatMap((c) => [
      () => runTool(tools.documents, ctx, { action: "log", documentId: c.documentId, limit: PAGE }),
      () =>
        runTool(tools.documents, ctx, {
          action: "log",
          documentId: c.documentId,
          limit: PAGE,
          ...(c.deepCursor ? { cursor: c.deepCursor } : {}),
        }),
      () => walkToMergeBases(new CommitGraph(db, c.documentId), c.dag.mainHead.id, c.dag.featureHead.id),
    ]);
    const measured = await measureInterleaved(ops);
    const results = cases.map((c, i) => {
      const git = (...args: string[]) =>
        execFileSync("git", args, {
          cwd: c.repo,
          env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
          maxBuffer: 1 << 26,
        });
      const skip = (c.deepPage - 1) * PAGE;
      return {
        ...c,
        log1: measured[3 * i]!,
        logDeep: measured[3 * i + 1]!,
        mb: measured[3 * i + 2]!,
        git: {
          log1: measureSync(() => git("log", "--format=%H %P %an %at %s", "-n", String(PAGE), "main")),
          logDeep: measureSync(() => git("log", "--format=%H %P %an %at %s", `--skip=${skip}`, "-n", String(PAGE), "main")),
          mb: measureSync(() => git("merge-base", "--all", "main", "feature")),
        },
      };
    });

    console.log("Quire, milliseconds, median / p95:");
    console.log("");
    console.log(
      "| main-line commits | commits in document | `log` page 1 (action) | `log` deep page (action) | merge-base walk main↔feature (store, uncached) | commit-graph round trips: page 1 / deep page / merge base |",
    );
    console.log("|---:|---:|---:|---:|---:|---:|");
    for (const r of results) {
      console.log(
        `| ${r.size.toLocaleString("en-US")} | ${r.total.toLocaleString("en-US")} | ${fmt(r.log1)} | ${fmt(r.logDeep)} (page ${r.deepPage}) | ${fmt(r.mb)} | ${r.roundTrips.log1} / ${r.roundTrips.logDeep} / ${r.roundTrips.mergeBase} |`,
      );
    }
    const first = results[0]!;
    const last = results[results.length - 1]!;
    // The deep page is page 20 only where history is long enough; compare like with like.
    const firstDeep = results.find((r) => r.deepPage === DEEP_PAGE) ?? first;
    const n = (x: number) => x.toLocaleString("en-US");
    console.log("");
    console.log(
      `Flatness (median at the largest size / median at the smallest): ` +
        `log page 1 ${(last.log1.median / first.log1.median).toFixed(2)}x (${n(last.size)} vs ${n(first.size)}), ` +
        `log page ${DEEP_PAGE} ${(last.logDeep.median / firstDeep.logDeep.median).toFixed(2)}x (${n(last.size)} vs ${n(firstDeep.size)}), ` +
        `merge base ${(last.mb.median / first.mb.median).toFixed(2)}x (${n(last.size)} vs ${n(first.size)})`,
    );
    console.log("");
    console.log("git on the same DAG (commit-graph written; includes process start), milliseconds, median / p95:");
    console.log("");
    console.log("| main-line commits | `git log -n 50` | `git log --skip -n 50` (same page) | `git merge-base --all main feature` |");
    console.log("|---:|---:|---:|---:|");
    for (const r of results) {
      console.log(`| ${r.size.toLocaleString("en-US")} | ${fmt(r.git.log1)} | ${fmt(r.git.logDeep)} | ${fmt(r.git.mb)} |`);
    }
    console.error(`[bench] total ${((performance.now() - began) / 1000).toFixed(1)} s`);
  } finally {
    for (const dir of gitDirs) rmSync(dir, { recursive: true, force: true });
    await handle.close();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
