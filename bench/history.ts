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
import { branches, commits } from "@/db/schema";
import type { ActionContext } from "@/server/actions/context";
import { runTool } from "@/server/actions/run";
import { actorForUser, addUser } from "@/server/auth/accounts";
import type { DocumentTree } from "@/server/core/document-model";
import { CommitGraph, mergeBases } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { createBranch, createDocument } from "@/server/store/documents";

const SIZES = [100, 10_000, 100_000];
const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const WARMUP = 5;
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

async function measure(fn: () => Promise<unknown>): Promise<Stats> {
  for (let i = 0; i < WARMUP; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return stats(samples);
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
  const lines: string[] = ["commit refs/heads/scratch", "mark :1", "committer Bench <bench@example.test> 1700000000 +0000", "data 4", "root", ""];
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
    const actor = (await actorForUser(db, user.id, "mcp"))!;
    const ctx: ActionContext = { db, actor, clock: () => new Date() };

    console.log(`# history bench — ${new Date().toISOString().slice(0, 10)}`);
    console.log(`machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), node ${process.version}, PostgreSQL ${pgVersion}, ${RUNS} runs each`);
    console.log("");

    const results: Array<{ size: number; total: number; deepPage: number; log1: Stats; logDeep: Stats; mb: Stats; roundTrips: number; git: { log1: Stats; logDeep: Stats; mb: Stats } }> = [];

    for (const size of SIZES) {
      const t0 = performance.now();
      const tree: DocumentTree = { path: `bench/history-${size}`, name: `history-${size}`, description: null, deleted: false, tagIds: [], properties: {}, sections: [] };
      const start = Date.UTC(2025, 0, 1);
      const { document, commit: root } = await createDocument(db, {
        documentId: randomUUID(),
        workspaceId: actor.workspaceId,
        authorId: user.id,
        tree,
        sections: [],
        message: "create",
        now: new Date(start),
      });
      const dag = buildDag(size, root.id);
      await insertRows(db, document.id, user.id, root.treeHash, dag.rows, start);
      await db.update(branches).set({ headCommitId: dag.mainHead.id }).where(eq(branches.documentId, document.id));
      await createBranch(db, { documentId: document.id, name: "feature", headCommitId: dag.featureHead.id, authorId: user.id, now: new Date() });
      await db.execute(sql`analyze commits`);
      const total = dag.rows.length + 1;
      console.error(`[bench] ${size}: ${total} commits inserted in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

      // Sanity: the merge base is the fork point, FORK_DEPTH commits below main's tip.
      const bases = await mergeBases(new CommitGraph(db, document.id), dag.mainHead.id, dag.featureHead.id);
      const fork = dag.rows.find((r) => r.id === bases[0]) ?? (bases[0] === root.id ? { generation: 1 } : undefined);
      if (bases.length !== 1 || !fork || fork.generation !== dag.mainHead.generation - FORK_DEPTH) {
        throw new Error(`unexpected merge base ${JSON.stringify(bases)}`);
      }

      // The cursor of the deepest page we time (page 20, or the last page of a short history).
      const cursors: Array<string | undefined> = [undefined];
      for (let page = 1; page < DEEP_PAGE; page++) {
        const result = (await runTool("documents", ctx, {
          action: "log",
          documentId: document.id,
          limit: PAGE,
          ...(cursors[page - 1] ? { cursor: cursors[page - 1] } : {}),
        })) as LogPage;
        if (!result.nextCursor) break;
        cursors.push(result.nextCursor);
      }
      const deepPage = cursors.length;
      const deepCursor = cursors[cursors.length - 1];

      const log1 = await measure(() => runTool("documents", ctx, { action: "log", documentId: document.id, limit: PAGE }));
      const logDeep = await measure(() =>
        runTool("documents", ctx, { action: "log", documentId: document.id, limit: PAGE, ...(deepCursor ? { cursor: deepCursor } : {}) }),
      );
      const mb = await measure(() => mergeBases(new CommitGraph(db, document.id), dag.mainHead.id, dag.featureHead.id));
      const counted = countingTx(db);
      await mergeBases(new CommitGraph(counted.tx, document.id), dag.mainHead.id, dag.featureHead.id);

      const repo = gitRepo(dag, root.id);
      gitDirs.push(repo);
      const git = (...args: string[]) =>
        execFileSync("git", args, { cwd: repo, env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" }, maxBuffer: 1 << 26 });
      const skip = (deepPage - 1) * PAGE;
      const gitResults = {
        log1: measureSync(() => git("log", "--format=%H %P %an %at %s", "-n", String(PAGE), "main")),
        logDeep: measureSync(() => git("log", "--format=%H %P %an %at %s", `--skip=${skip}`, "-n", String(PAGE), "main")),
        mb: measureSync(() => git("merge-base", "--all", "main", "feature")),
      };
      results.push({ size, total, deepPage, log1, logDeep, mb, roundTrips: counted.count(), git: gitResults });
      console.error(`[bench] ${size}: measured (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }

    console.log("Quire, milliseconds, median / p95:");
    console.log("");
    console.log("| main-line commits | commits in document | `log` page 1 (action) | `log` deep page (action) | `mergeBases` main↔feature (store) | merge-base round trips |");
    console.log("|---:|---:|---:|---:|---:|---:|");
    for (const r of results) {
      console.log(
        `| ${r.size.toLocaleString("en-US")} | ${r.total.toLocaleString("en-US")} | ${fmt(r.log1)} | ${fmt(r.logDeep)} (page ${r.deepPage}) | ${fmt(r.mb)} | ${r.roundTrips} |`,
      );
    }
    const first = results[0]!;
    const last = results[results.length - 1]!;
    console.log("");
    console.log(
      `Flatness, median at ${last.size.toLocaleString("en-US")} / median at ${first.size.toLocaleString("en-US")}: ` +
        `log page 1 ${(last.log1.median / first.log1.median).toFixed(2)}x, ` +
        `log deep page ${(last.logDeep.median / first.logDeep.median).toFixed(2)}x, ` +
        `merge base ${(last.mb.median / first.mb.median).toFixed(2)}x`,
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
