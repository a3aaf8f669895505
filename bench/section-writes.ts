/**
 * Section-write throughput (DESIGN.md §8): 8 concurrent clients each update
 * their own section of one document on one branch, over MCP HTTP, for a fixed
 * time; committed writes per second against `pgbench` TPC-B TPS on the same
 * PostgreSQL server in the same run. Target: ratio >= 0.5.
 *
 *   npx tsx bench/section-writes.ts
 *
 * Environment (all optional):
 *   DATABASE_URL        PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 *                       the bench creates and drops its own databases quire_bench_writes_* there.
 *   BENCH_CLIENTS=8     concurrent writers (and pgbench -c)
 *   BENCH_SECONDS=20    measured seconds (and pgbench -T)
 *   BENCH_WARMUP=3      warm-up seconds, not counted
 *   BENCH_PGBENCH=1     0 skips pgbench
 *   BENCH_PROFILE=auto  1: always profile, 0: never, auto: when the ratio misses 0.5
 *   BENCH_JSON=path     also write the results as JSON
 *
 * The Quire server runs in this process (`startServer`, no Next.js) with the
 * production pool size; the clients run in a worker thread so their JSON and
 * HTTP work does not share the server's event loop. Every client sends raw
 * MCP `tools/call` POSTs over a keep-alive connection (the server runs MCP
 * stateless with JSON responses). Only successful results count.
 *
 * The profile re-runs the load against a server whose postgres.js client is
 * wrapped to time every query (client-observed, i.e. including the round trip
 * and any wait for the event loop), each write transaction, and how long the
 * branch row lock is held (from the `SELECT … FOR UPDATE` reply to COMMIT).
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type Database, type DatabaseHandle, openDatabase, preparingEveryStatement } from "@/db/client";
import * as schema from "@/db/schema";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { startServer } from "@/server/http/server";
import { queryRows } from "@/server/store/db";

const SERVER_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 8);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const RUN_PGBENCH = process.env.BENCH_PGBENCH !== "0";
const PROFILE = process.env.BENCH_PROFILE ?? "auto";
const TARGET_RATIO = 0.5;
/** The pool `npm start` uses (openDatabase's default). */
const POOL_SIZE = 10;

const log = (...args: unknown[]) => console.log(...args);
const fmt = (n: number, digits = 1) => n.toFixed(digits);

function databaseUrl(name: string): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(fn: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

const scratchName = (kind: string) => `quire_bench_writes_${kind}_${process.pid}_${randomBytes(3).toString("hex")}`;

// ---------------------------------------------------------------------------
// Load generator (worker thread, plain JS so it needs no TypeScript loader).
// ---------------------------------------------------------------------------

interface LoadConfig {
  url: string;
  token: string;
  documentId: string;
  sectionIds: string[];
  warmupMs: number;
  durationMs: number;
}

interface LoadResult {
  /** Successful writes completed inside the measured window. */
  measured: number;
  /** Successful writes overall (warm-up and drain included): each must be one commit. */
  totalOk: number;
  failures: Record<string, number>;
  /** Latencies (ms) of the measured successful writes. */
  latencies: number[];
  windowMs: number;
  perClient: number[];
}

const WORKER_SOURCE = String.raw`
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
const { performance } = require("node:perf_hooks");
const cfg = workerData;
const target = new URL(cfg.url + "/api/mcp");
const agent = new http.Agent({ keepAlive: true, maxSockets: cfg.sectionIds.length });

function post(body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent,
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          authorization: "Bearer " + cfg.token,
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

async function main() {
  const start = performance.now();
  const warmEnd = start + cfg.warmupMs;
  const end = warmEnd + cfg.durationMs;
  const latencies = [];
  const failures = {};
  const perClient = cfg.sectionIds.map(() => 0);
  let measured = 0;
  let totalOk = 0;
  let id = 0;
  async function client(index) {
    const sectionId = cfg.sectionIds[index];
    let n = 0;
    while (performance.now() < end) {
      n += 1;
      id += 1;
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: {
          name: "sections",
          arguments: {
            action: "update",
            documentId: cfg.documentId,
            branchName: "main",
            sectionId,
            newContent: [{ blockType: "text", text: "Client " + index + " write " + n + ": " + "lorem ipsum ".repeat(8) }],
          },
        },
      });
      const t0 = performance.now();
      let code;
      try {
        const res = await post(body);
        if (res.status !== 200) code = "HTTP_" + res.status;
        else {
          const msg = JSON.parse(res.text);
          if (msg.error) code = "JSONRPC_" + msg.error.code;
          else if (msg.result.isError) code = (msg.result.structuredContent && msg.result.structuredContent.error && msg.result.structuredContent.error.code) || "TOOL_ERROR";
        }
      } catch (e) {
        code = "NETWORK_" + (e && e.code ? e.code : "ERROR");
      }
      const t1 = performance.now();
      if (code) {
        failures[code] = (failures[code] || 0) + 1;
        continue;
      }
      totalOk += 1;
      if (t1 >= warmEnd && t1 <= end) {
        measured += 1;
        perClient[index] += 1;
        latencies.push(t1 - t0);
      }
    }
  }
  await Promise.all(cfg.sectionIds.map((_, i) => client(i)));
  agent.destroy();
  parentPort.postMessage({ measured, totalOk, failures, latencies, windowMs: cfg.durationMs, perClient });
}
main().catch((e) => { throw e; });
`;

function runLoad(config: LoadConfig): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: config });
    worker.once("message", (m: LoadResult) => resolve(m));
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`load worker exited with ${code}`));
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

// ---------------------------------------------------------------------------
// Query instrumentation for the profile (wraps the postgres.js client).
// ---------------------------------------------------------------------------

interface QueryStat {
  count: number;
  totalMs: number;
  inTx: number;
}

class Profiler {
  readonly queries = new Map<string, QueryStat>();
  readonly txMs: number[] = [];
  readonly lockHeldMs: number[] = [];
  readonly commitMs: number[] = [];
  queriesPerTx: number[] = [];

  reset() {
    this.queries.clear();
    for (const list of [this.txMs, this.lockHeldMs, this.commitMs, this.queriesPerTx]) list.length = 0;
  }

  record(label: string, ms: number, inTx: boolean) {
    const s = this.queries.get(label) ?? { count: 0, totalMs: 0, inTx: 0 };
    s.count += 1;
    s.totalMs += ms;
    if (inTx) s.inTx += 1;
    this.queries.set(label, s);
  }
}

function labelOf(query: string): string {
  const q = query.replace(/\s+/g, " ").trim();
  let m = /^insert into "(\w+)"/i.exec(q);
  if (m) return `INSERT ${m[1]}${/on conflict do nothing/i.test(q) ? " ON CONFLICT DO NOTHING" : ""}`;
  m = /^update "(\w+)"/i.exec(q);
  if (m) return `UPDATE ${m[1]}`;
  m = /^select .*? from "(\w+)"/i.exec(q);
  if (m) return `SELECT ${m[1]}${/ for update/i.test(q) ? " FOR UPDATE" : ""}`;
  m = /^delete from "(\w+)"/i.exec(q);
  if (m) return `DELETE ${m[1]}`;
  return q.slice(0, 60);
}

type AnySql = postgres.Sql & { unsafe: (...a: unknown[]) => unknown; begin: (...a: unknown[]) => unknown };

/** Wraps a postgres.js pending query so its completion is timed, whatever drizzle chains on it. */
function timedQuery(pending: object, onDone: () => void): object {
  let timed = false;
  const proxy: object = new Proxy(pending, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === "then") {
        return (onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => {
          const p = (target as Promise<unknown>).then(
            (v) => {
              if (!timed) ((timed = true), onDone());
              return v;
            },
            (e: unknown) => {
              if (!timed) ((timed = true), onDone());
              throw e;
            },
          );
          return p.then(onFulfilled, onRejected);
        };
      }
      if (typeof value === "function") {
        return (...args: unknown[]) => {
          const out = (value as (...a: unknown[]) => unknown).apply(target, args);
          return out === target ? proxy : out;
        };
      }
      return value;
    },
  });
  return proxy;
}

function instrument(sqlFn: AnySql, profiler: Profiler, tx: { start: number; lockedAt: number | null; queries: number } | null): AnySql {
  return new Proxy(sqlFn, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === "unsafe") {
        return (query: string, ...rest: unknown[]) => {
          const t0 = performance.now();
          const label = labelOf(query);
          if (tx) tx.queries += 1;
          const pending = (value as (...a: unknown[]) => object).call(target, query, ...rest);
          return timedQuery(pending, () => {
            const t1 = performance.now();
            profiler.record(label, t1 - t0, tx !== null);
            if (tx && tx.lockedAt === null && label.endsWith("FOR UPDATE")) tx.lockedAt = t1;
          });
        };
      }
      if (prop === "begin") {
        return async (fn: (inner: AnySql) => Promise<unknown>) => {
          const state = { start: performance.now(), lockedAt: null as number | null, queries: 0 };
          let bodyDone = 0;
          try {
            return await (value as (cb: (inner: AnySql) => Promise<unknown>) => Promise<unknown>).call(target, async (inner: AnySql) => {
              const out = await fn(instrument(inner, profiler, state));
              bodyDone = performance.now();
              return out;
            });
          } finally {
            const end = performance.now();
            profiler.txMs.push(end - state.start);
            profiler.queriesPerTx.push(state.queries);
            if (bodyDone) profiler.commitMs.push(end - bodyDone);
            if (state.lockedAt !== null) profiler.lockHeldMs.push(end - state.lockedAt);
          }
        };
      }
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as AnySql;
}

function instrumentedHandle(url: string, profiler: Profiler): DatabaseHandle {
  const client = postgres(url, { max: POOL_SIZE, onnotice: () => {} });
  const db = drizzle(instrument(preparingEveryStatement(client) as AnySql, profiler, null), { schema }) as unknown as Database;
  return {
    db,
    kind: "postgres",
    migrate: async () => {},
    listen: async (channel, onNotify) => (await client.listen(channel, onNotify, onNotify)).unlisten,
    close: () => client.end(),
  };
}

// ---------------------------------------------------------------------------
// Quire run
// ---------------------------------------------------------------------------

interface QuireSetup {
  url: string;
  token: string;
  documentId: string;
  sectionIds: string[];
}

async function mcpCall(url: string, token: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/api/mcp`, {
    method: "POST",
    headers: { accept: "application/json, text/event-stream", "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const message = (await response.json()) as { result?: { isError?: boolean; structuredContent: Record<string, unknown> }; error?: unknown };
  if (!message.result || message.result.isError) throw new Error(`${name} failed: ${JSON.stringify(message.error ?? message.result)}`);
  return message.result.structuredContent;
}

async function prepareDocument(database: DatabaseHandle, serverUrl: string): Promise<Omit<QuireSetup, "url">> {
  const email = `bench-${randomBytes(4).toString("hex")}@example.test`;
  await addUser(database.db, { email, name: "Bench Writer", password: "correct horse battery" }, new Date());
  const { token } = await issueApiToken(database.db, { email, label: "bench" }, new Date());
  const created = await mcpCall(serverUrl, token, "documents", {
    action: "create",
    path: `bench/writes-${randomBytes(3).toString("hex")}`,
    sections: Array.from({ length: CLIENTS }, (_, i) => ({ name: `Section ${i + 1}`, content: [{ blockType: "text", text: `Initial text of section ${i + 1}.` }] })),
  });
  return { token, documentId: created.documentId as string, sectionIds: created.sectionIds as string[] };
}

interface QuireRun {
  writesPerSecond: number;
  measured: number;
  totalOk: number;
  failures: Record<string, number>;
  p50: number;
  p99: number;
  mean: number;
  perClient: number[];
  commitsLanded: number;
  headGeneration: number;
  consistent: boolean;
  eventLoopDelayP50: number;
  eventLoopDelayP99: number;
  /** Share of time the server's event loop was busy. */
  eventLoopUtilization: number;
  /** CPU of this process (server thread + load worker), in cores. */
  processCpuCores: number;
  cpuMsPerWrite: number;
  profile?: Profiler;
}

async function runQuire(options: { seconds: number; warmup: number; clients: number; profiler?: Profiler }): Promise<QuireRun> {
  const name = scratchName("quire");
  await withAdmin((admin) => admin.unsafe(`create database "${name}"`));
  const url = databaseUrl(name);
  const base = await openDatabase({ url, maxConnections: POOL_SIZE });
  try {
    await base.migrate();
    const database = options.profiler ? instrumentedHandle(url, options.profiler) : base;
    const server = await startServer({ database, port: 0, host: "127.0.0.1", next: false });
    const serverUrl = server.url.replace("localhost", "127.0.0.1");
    try {
      const prepared = await prepareDocument(database, serverUrl);
      const sectionIds = prepared.sectionIds.slice(0, options.clients);
      const countRows = () =>
        queryRows<{ commits: number; generation: number }>(
          base.db,
          sql`select (select count(*)::int from commits where document_id = ${prepared.documentId}) as commits,
                     (select c.generation from branches b join commits c on c.id = b.head_commit_id
                       where b.document_id = ${prepared.documentId} and b.name = 'main') as generation`,
        );
      const [initial] = await countRows();
      await withAdmin((admin) => admin`checkpoint`);
      options.profiler?.reset();
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const elu0 = performance.eventLoopUtilization();
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      const load = await runLoad({
        url: serverUrl,
        token: prepared.token,
        documentId: prepared.documentId,
        sectionIds,
        warmupMs: options.warmup * 1000,
        durationMs: options.seconds * 1000,
      });
      loop.disable();
      const elu = performance.eventLoopUtilization(elu0).utilization;
      const cpu = process.cpuUsage(cpu0);
      const cpuShare = (cpu.user + cpu.system) / 1000 / (performance.now() - wall0);
      const [final] = await countRows();
      const commits = Number(final!.commits);
      const generation = Number(final!.generation);
      const before = Number(initial!.commits);
      const commitsLanded = commits - before;
      const sorted = [...load.latencies].sort((a, b) => a - b);
      return {
        writesPerSecond: load.measured / (load.windowMs / 1000),
        measured: load.measured,
        totalOk: load.totalOk,
        failures: load.failures,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
        perClient: load.perClient,
        commitsLanded,
        headGeneration: generation,
        consistent: commitsLanded === load.totalOk && generation === Number(initial!.generation) + load.totalOk,
        // The histogram records whole timer intervals: subtract the 10 ms resolution.
        eventLoopDelayP50: Math.max(0, loop.percentile(50) / 1e6 - 10),
        eventLoopDelayP99: Math.max(0, loop.percentile(99) / 1e6 - 10),
        eventLoopUtilization: elu,
        processCpuCores: cpuShare,
        cpuMsPerWrite: ((cpu.user + cpu.system) / 1000) / Math.max(1, load.totalOk),
        profile: options.profiler,
      };
    } finally {
      await server.close();
      if (database !== base) await database.close();
    }
  } finally {
    await base.close();
    await withAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
  }
}

// ---------------------------------------------------------------------------
// What-if: the write transaction's statement pattern alone (no HTTP, MCP,
// zod or drizzle), on Quire's real tables, 8 writers on one branch row.
// Shows what each suggested change to the write path is worth.
// ---------------------------------------------------------------------------

interface WhatIfResult {
  variant: string;
  writesPerSecond: number;
  meanLatencyMs: number;
  commitsLanded: number;
  writes: number;
}

interface TreeBody {
  sections: Array<{ sectionId: string; blobHash: string }>;
  [key: string]: unknown;
}

const sha = (value: unknown) => createHash("sha256").update(JSON.stringify(value)).digest("hex");

async function whatIf(seconds: number): Promise<WhatIfResult[]> {
  const name = scratchName("whatif");
  await withAdmin((admin) => admin.unsafe(`create database "${name}"`));
  const url = databaseUrl(name);
  const handle = await openDatabase({ url, maxConnections: 2 });
  const pg = postgres(url, { max: POOL_SIZE, onnotice: () => {} });
  try {
    await handle.migrate();
    const server = await startServer({ database: handle, port: 0, host: "127.0.0.1", next: false });
    let doc: string;
    try {
      ({ documentId: doc } = await prepareDocument(handle, server.url.replace("localhost", "127.0.0.1")));
    } finally {
      await server.close();
    }
    const [owner] = await pg`select workspace_id, created_by from documents where id = ${doc}`;
    const ws = owner!.workspace_id as string;
    const author = owner!.created_by as string;
    let serial = 0;

    const newVersion = (i: number) => {
      serial += 1;
      const body = {
        name: `Section ${i + 1}`,
        content: [{ blockType: "text", text: `Client ${i} write ${serial}: ${"lorem ipsum ".repeat(8)}` }],
        defaultPermission: null,
        aiAccess: null,
        references: [],
      };
      return { hash: sha(body), body };
    };
    const nextTree = (tree: TreeBody, i: number, blobHash: string): { hash: string; body: TreeBody } => {
      const body = { ...tree, sections: tree.sections.map((e, k) => (k === i ? { ...e, blobHash } : e)) };
      return { hash: sha(body), body };
    };

    /** Today's sequence: the queries the profile shows, one round trip each. */
    const current = async (i: number) => {
      await pg.begin(async (tx) => {
        await tx`select * from documents where id = ${doc} and workspace_id = ${ws}`;
        await tx`select * from document_grants where document_id = ${doc} and user_id = ${author}`;
        const [branch] = await tx`select * from branches where document_id = ${doc} and name = 'main' for update`;
        const [head] = await tx`select * from commits where id = ${branch!.head_commit_id} and document_id = ${doc}`;
        const [tree] = await tx`select * from trees where hash in ${tx([head!.tree_hash as string])}`;
        const treeBody = tree!.body as TreeBody;
        const entry = treeBody.sections[i]!;
        await tx`select * from blobs where hash in ${tx([entry.blobHash])}`;
        await tx`select * from blobs where hash in ${tx([entry.blobHash])}`;
        const blob = newVersion(i);
        const next = nextTree(treeBody, i, blob.hash);
        await tx`insert into blobs (hash, body) values (${blob.hash}, ${tx.json(blob.body as never)}) on conflict do nothing`;
        await tx`insert into trees (hash, body) values (${next.hash}, ${tx.json(next.body as never)}) on conflict do nothing`;
        const [parent] = await tx`select generation from commits where id in ${tx([head!.id as string])}`;
        const id = randomUUID();
        await tx`insert into commits (id, document_id, parent_ids, generation, tree_hash, message, author_id, kind, section_ids)
                 values (${id}, ${doc}, ${[head!.id as string]}::uuid[], ${(parent!.generation as number) + 1}, ${next.hash}, ${"Update section"}, ${author}, 'write', ${[entry.sectionId]}::uuid[])`;
        await tx`update branches set head_commit_id = ${id}, updated_at = now() where document_id = ${doc} and name = 'main' and head_commit_id = ${head!.id as string} returning name`;
        await tx`update documents set path = path, name = name, description = description, deleted = deleted, updated_at = now() where id = ${doc}`;
      });
    };

    /**
     * Lean: the row lock and a joined read of head, generation and tree, sent
     * together (pipelined: one round trip; the read runs after the lock is
     * granted, with a fresh READ COMMITTED snapshot — a join inside the locking
     * statement itself would re-check against the stale head), then the four
     * writes pipelined.
     */
    const lockAndLoad = async (tx: postgres.TransactionSql) => {
      const [, [row]] = await Promise.all([
        tx`select 1 from branches where document_id = ${doc} and name = 'main' for update`,
        tx`select b.head_commit_id as head, c.generation, t.body as tree
           from branches b join commits c on c.id = b.head_commit_id join trees t on t.hash = c.tree_hash
           where b.document_id = ${doc} and b.name = 'main'`,
      ]);
      return { head: row!.head as string, generation: row!.generation as number, tree: row!.tree as TreeBody };
    };
    const writeChain = async (tx: postgres.TransactionSql, state: { head: string; generation: number; tree: TreeBody }, clients: number[]) => {
      const blobs: Array<{ hash: string; body: unknown }> = [];
      const trees: Array<{ hash: string; body: unknown }> = [];
      const commits: Array<{ id: string; parent: string; generation: number; tree: string; section: string }> = [];
      let { head, generation, tree } = state;
      for (const i of clients) {
        const blob = newVersion(i);
        const next = nextTree(tree, i, blob.hash);
        const id = randomUUID();
        blobs.push(blob);
        trees.push(next);
        commits.push({ id, parent: head, generation: generation + 1, tree: next.hash, section: tree.sections[i]!.sectionId });
        head = id;
        generation += 1;
        tree = next.body;
      }
      const [, , , moved] = await Promise.all([
        tx`insert into blobs (hash, body) select h, b::jsonb from unnest(${blobs.map((b) => b.hash)}::text[], ${blobs.map((b) => JSON.stringify(b.body))}::text[]) as x(h, b) on conflict do nothing`,
        tx`insert into trees (hash, body) select h, b::jsonb from unnest(${trees.map((t) => t.hash)}::text[], ${trees.map((t) => JSON.stringify(t.body))}::text[]) as x(h, b) on conflict do nothing`,
        tx`insert into commits (id, document_id, parent_ids, generation, tree_hash, message, author_id, kind, section_ids)
           select id, ${doc}, array[parent], g, th, 'Update section', ${author}, 'write', array[sec]
           from unnest(${commits.map((c) => c.id)}::uuid[], ${commits.map((c) => c.parent)}::uuid[], ${commits.map((c) => c.generation)}::int[],
                       ${commits.map((c) => c.tree)}::text[], ${commits.map((c) => c.section)}::uuid[]) as x(id, parent, g, th, sec)`,
        tx`update branches set head_commit_id = ${head}, updated_at = now() where document_id = ${doc} and name = 'main' and head_commit_id = ${state.head} returning name`,
      ]);
      if (moved.length !== 1) throw new Error("branch moved");
    };
    const lean = async (i: number) => {
      await pg.begin(async (tx) => writeChain(tx, await lockAndLoad(tx), [i]));
    };

    /**
     * Group commit: writes queued while a batch runs go together into the next
     * batch (each still its own commit), at most CLIENTS at a time.
     */
    const groupCommit = (runBatch: (indexes: number[]) => Promise<void>) => {
      const queue: Array<{ i: number; done: () => void; fail: (e: unknown) => void }> = [];
      let draining = false;
      const drain = async () => {
        draining = true;
        while (queue.length > 0) {
          const batch = queue.splice(0, CLIENTS);
          try {
            await runBatch(batch.map((b) => b.i));
            for (const b of batch) b.done();
          } catch (error) {
            for (const b of batch) b.fail(error);
          }
        }
        draining = false;
      };
      return (i: number) =>
        new Promise<void>((done, fail) => {
          queue.push({ i, done, fail });
          if (!draining) void drain();
        });
    };
    const batched = groupCommit((indexes) => pg.begin(async (tx) => writeChain(tx, await lockAndLoad(tx), indexes)));

    /**
     * One statement per batch: the process keeps the head it last wrote and
     * moves the branch by compare-and-swap in the same autocommit statement
     * that inserts the objects (no lock read; a lost race re-reads and retries).
     */
    let cached: { head: string; generation: number; tree: TreeBody } | null = null;
    const casBatched = groupCommit(async (indexes) => {
      for (let attempt = 0; ; attempt++) {
        cached ??= await lockAndLoad(pg as unknown as postgres.TransactionSql);
        const state = cached;
        const blobs: Array<{ hash: string; body: unknown }> = [];
        const trees: Array<{ hash: string; body: TreeBody }> = [];
        const commits: Array<{ id: string; parent: string; generation: number; tree: string; section: string }> = [];
        let { head, generation, tree } = state;
        for (const i of indexes) {
          const blob = newVersion(i);
          const next = nextTree(tree, i, blob.hash);
          const id = randomUUID();
          blobs.push(blob);
          trees.push(next);
          commits.push({ id, parent: head, generation: generation + 1, tree: next.hash, section: tree.sections[i]!.sectionId });
          head = id;
          generation += 1;
          tree = next.body;
        }
        const moved = await pg`
          with moved as (
            update branches set head_commit_id = ${head}, updated_at = now()
            where document_id = ${doc} and name = 'main' and head_commit_id = ${state.head} returning 1
          ), b as (
            insert into blobs (hash, body) select h, x::jsonb from unnest(${blobs.map((b) => b.hash)}::text[], ${blobs.map((b) => JSON.stringify(b.body))}::text[]) as u(h, x) on conflict do nothing
          ), t as (
            insert into trees (hash, body) select h, x::jsonb from unnest(${trees.map((t) => t.hash)}::text[], ${trees.map((t) => JSON.stringify(t.body))}::text[]) as u(h, x) on conflict do nothing
          ), c as (
            insert into commits (id, document_id, parent_ids, generation, tree_hash, message, author_id, kind, section_ids)
            select id, ${doc}, array[parent], g, th, 'Update section', ${author}, 'write', array[sec]
            from unnest(${commits.map((c) => c.id)}::uuid[], ${commits.map((c) => c.parent)}::uuid[], ${commits.map((c) => c.generation)}::int[],
                        ${commits.map((c) => c.tree)}::text[], ${commits.map((c) => c.section)}::uuid[]) as u(id, parent, g, th, sec)
            where exists (select 1 from moved)
          )
          select count(*)::int as n from moved`;
        if (moved[0]!.n === 1) {
          cached = { head, generation, tree };
          break;
        }
        cached = null;
        if (attempt > 10) throw new Error("branch keeps moving");
      }
    });

    const variants: Array<[string, (i: number) => Promise<void>]> = [
      ["A  today's sequence: 13 statements, 11 round trips under the branch lock", current],
      ["B  lock + joined read pipelined, then 4 pipelined writes (2 round trips)", lean],
      ["C  B + group commit: writes queued meanwhile share one transaction", batched],
      ["D  C with the head cached in-process: one CAS statement per batch (1 round trip)", casBatched],
    ];
    // Interleaved rounds, so load from elsewhere on the machine falls on every variant alike.
    const ROUNDS = 4;
    const segment = (seconds * 1000) / ROUNDS;
    const totals = variants.map(() => ({ measured: 0, writes: 0, latency: 0, landed: 0 }));
    const countCommits = async () => Number((await pg`select count(*)::int as n from commits where document_id = ${doc}`)[0]!.n);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [k, [, write]] of variants.entries()) {
        const total = totals[k]!;
        const before = await countCommits();
        const start = performance.now();
        const warmEnd = start + 300;
        const end = warmEnd + segment;
        await Promise.all(
          Array.from({ length: CLIENTS }, async (_, i) => {
            while (performance.now() < end) {
              const t0 = performance.now();
              await write(i);
              const t1 = performance.now();
              total.writes += 1;
              if (t1 >= warmEnd && t1 <= end) {
                total.measured += 1;
                total.latency += t1 - t0;
              }
            }
          }),
        );
        total.landed += (await countCommits()) - before;
      }
    }
    const results: WhatIfResult[] = variants.map(([variant], k) => {
      const t = totals[k]!;
      return { variant, writesPerSecond: t.measured / seconds, meanLatencyMs: t.latency / Math.max(1, t.measured), commitsLanded: t.landed, writes: t.writes };
    });
    return results;
  } finally {
    await pg.end();
    await handle.close();
    await withAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
  }
}

// ---------------------------------------------------------------------------
// pgbench
// ---------------------------------------------------------------------------

interface PgbenchRun {
  tps: number;
  latencyMs: number | null;
  version: string;
}

function runPgbench(): Promise<PgbenchRun> {
  const name = scratchName("pgbench");
  return (async () => {
    await withAdmin((admin) => admin.unsafe(`create database "${name}"`));
    try {
      const url = databaseUrl(name);
      const version = execFileSync("pgbench", ["--version"], { encoding: "utf8" }).trim();
      execFileSync("pgbench", ["-i", "-s", "8", "-q", url], { stdio: ["ignore", "ignore", "pipe"] });
      await withAdmin((admin) => admin`checkpoint`);
      const out = execFileSync("pgbench", ["-c", String(CLIENTS), "-j", "2", "-T", String(SECONDS), "-M", "prepared", url], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out) ?? /tps = ([\d.]+)/.exec(out);
      if (!tps) throw new Error(`could not parse pgbench output:\n${out}`);
      const latency = /latency average = ([\d.]+) ms/.exec(out);
      return { tps: Number(tps[1]), latencyMs: latency ? Number(latency[1]) : null, version };
    } finally {
      await withAdmin((admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));
    }
  })();
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

function describeRun(label: string, run: QuireRun): void {
  log(`${label}: ${fmt(run.writesPerSecond)} committed writes/s (${run.measured} in the window), latency p50 ${fmt(run.p50)} ms, p99 ${fmt(run.p99)} ms, mean ${fmt(run.mean)} ms`);
  log(`  per client: ${run.perClient.join(", ")}; failures: ${JSON.stringify(run.failures)}`);
  log(`  commits landed ${run.commitsLanded} = successful writes ${run.totalOk}: ${run.consistent ? "yes" : "NO"} (head generation ${run.headGeneration})`);
  log(
    `  server event loop: ${fmt(run.eventLoopUtilization * 100, 0)}% busy, delay p50 ${fmt(run.eventLoopDelayP50)} ms, p99 ${fmt(run.eventLoopDelayP99)} ms; process CPU ${fmt(run.processCpuCores, 2)} cores, ${fmt(run.cpuMsPerWrite)} ms CPU per write (server + load worker)`,
  );
}

function describeProfile(run: QuireRun): Record<string, unknown> {
  const p = run.profile!;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const mean = (xs: number[]) => (xs.length ? sum(xs) / xs.length : Number.NaN);
  const writes = Math.max(1, p.lockHeldMs.length);
  const rows = [...p.queries.entries()].sort((a, b) => b[1].totalMs - a[1].totalMs);
  log(`  write transactions: ${p.lockHeldMs.length}; mean ${fmt(mean(p.txMs), 2)} ms each, ${fmt(mean(p.queriesPerTx), 1)} queries; branch lock held ${fmt(mean(p.lockHeldMs), 2)} ms (p50 ${fmt(percentile([...p.lockHeldMs].sort((a, b) => a - b), 50), 2)}), of which COMMIT ${fmt(mean(p.commitMs), 2)} ms`);
  log(`  => lock-bound ceiling 1000 / ${fmt(mean(p.lockHeldMs), 2)} ms = ${fmt(1000 / mean(p.lockHeldMs))} writes/s on one branch`);
  log(`  ${"query".padEnd(46)} ${"calls/write".padStart(11)} ${"mean ms".padStart(8)} ${"ms/write".padStart(9)} ${"in tx".padStart(6)}`);
  for (const [label, s] of rows) {
    log(`  ${label.slice(0, 46).padEnd(46)} ${fmt(s.count / writes, 2).padStart(11)} ${fmt(s.totalMs / s.count, 2).padStart(8)} ${fmt(s.totalMs / writes, 2).padStart(9)} ${String(s.inTx === s.count ? "yes" : s.inTx === 0 ? "no" : "some").padStart(6)}`);
  }
  return {
    transactions: p.lockHeldMs.length,
    meanTxMs: mean(p.txMs),
    meanQueriesPerTx: mean(p.queriesPerTx),
    meanLockHeldMs: mean(p.lockHeldMs),
    meanCommitMs: mean(p.commitMs),
    queries: Object.fromEntries(rows.map(([l, s]) => [l, { perWrite: s.count / writes, meanMs: s.totalMs / s.count }])),
  };
}

async function main() {
  const cpus = os.cpus();
  log(`Section writes vs pgbench — ${new Date().toISOString()}`);
  log(`machine: ${cpus.length} × ${cpus[0]?.model ?? "?"}, node ${process.version}; PostgreSQL ${SERVER_URL.replace(/\/\/[^@]*@/, "//")}`);
  const [row] = await withAdmin((admin) => admin<Array<{ version: string }>>`select version()`);
  log(`server: ${row?.version}`);
  log(`${CLIENTS} clients, ${WARMUP} s warm-up + ${SECONDS} s measured, pool ${POOL_SIZE}`);
  const loadavg = () => os.loadavg().map((l) => fmt(l, 2)).join(" ");
  log(`load average at start: ${loadavg()} (other work on the machine skews both sides)`);
  log("");

  if (process.env.BENCH_WHATIF_ONLY === "1") {
    for (const v of await whatIf(Math.min(SECONDS, 8))) log(`  ${v.variant.padEnd(78)} ${fmt(v.writesPerSecond).padStart(7)} writes/s, mean ${fmt(v.meanLatencyMs)} ms, commits ${v.commitsLanded} / writes ${v.writes}`);
    return;
  }
  let pg: PgbenchRun | null = null;
  if (RUN_PGBENCH) {
    pg = await runPgbench();
    log(`pgbench TPC-B (-i -s 8; -c ${CLIENTS} -j 2 -T ${SECONDS} -M prepared): ${fmt(pg.tps)} TPS, latency ${pg.latencyMs ?? "?"} ms  [${pg.version}]`);
  }

  const quire = await runQuire({ seconds: SECONDS, warmup: WARMUP, clients: CLIENTS });
  describeRun("Quire sections update over MCP", quire);

  const ratio = pg ? quire.writesPerSecond / pg.tps : null;
  if (ratio !== null) log(`ratio Quire writes/s ÷ pgbench TPS = ${fmt(ratio, 3)} (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? "met" : "MISSED"})`);

  const result: Record<string, unknown> = {
    date: new Date().toISOString(),
    cpus: cpus.length,
    cpuModel: cpus[0]?.model,
    clients: CLIENTS,
    seconds: SECONDS,
    pgbench: pg,
    quire: { ...quire, profile: undefined },
    ratio,
  };

  if (PROFILE === "1" || (PROFILE === "auto" && ratio !== null && ratio < TARGET_RATIO)) {
    log("");
    log("Profile (instrumented postgres.js client; client-observed query times include round trip and event-loop wait):");
    const profiled = await runQuire({ seconds: Math.min(SECONDS, 10), warmup: 2, clients: CLIENTS, profiler: new Profiler() });
    describeRun(`  ${CLIENTS} clients, instrumented`, profiled);
    const many = describeProfile(profiled);
    const single = await runQuire({ seconds: Math.min(SECONDS, 8), warmup: 2, clients: 1, profiler: new Profiler() });
    describeRun("  1 client, instrumented", single);
    const one = describeProfile(single);
    log("");
    log(`What-if: the write transaction's statements alone (postgres.js, no HTTP/MCP/zod/drizzle), ${CLIENTS} writers on one branch:`);
    const variants = await whatIf(Math.min(SECONDS, 8));
    for (const v of variants) {
      log(`  ${v.variant.padEnd(78)} ${fmt(v.writesPerSecond).padStart(7)} writes/s, mean ${fmt(v.meanLatencyMs)} ms${pg ? `, ratio ${fmt(v.writesPerSecond / pg.tps, 3)}` : ""}${v.commitsLanded === v.writes ? "" : ` (commits ${v.commitsLanded} != writes ${v.writes}!)`}`);
    }
    result.profile = { concurrent: { ...profiled, profile: undefined, detail: many }, single: { ...single, profile: undefined, detail: one }, whatIf: variants };
  }

  log(`load average at end: ${loadavg()}`);
  result.loadavg = os.loadavg();
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(result, null, 2));
  if (!quire.consistent) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
