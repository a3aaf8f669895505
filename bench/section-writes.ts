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
 * The profile (BENCH_PROFILE) re-runs the load, BENCH_CLIENTS and then 1, against
 * a server whose postgres.js client is wrapped (under the same
 * preparingEveryStatement wrapper and drizzle as production) to count and time
 * every statement the server sends while the clients' window is measured.
 * Times are client-observed, i.e. include the round trip and any wait for a
 * pool connection or the event loop. The write path groups writes per branch
 * (server/store/group-commit.ts): each batch ends in ONE autocommit statement
 * (`WITH moved AS (UPDATE branches …)`, commitToBranch in server/store/commit-to-branch.ts) that stores every
 * commit and object and moves the head by compare-and-swap, so the profile
 * reports statements per committed write by kind, head moves (batches) per
 * second, the batch sizes (commits each head move carried, read from its
 * parameters), lost compare-and-swap races, transactions of the locked
 * fallback (BEGIN/COMMIT; normally none) and the server's event-loop busy share.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type Database, type DatabaseHandle, openDatabase, preparingEveryStatement } from "@/db/client";
import { withCommitHooks } from "@/db/commit-hooks";
import * as schema from "@/db/schema";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { startServer } from "@/server/http/server";
import { queryRows } from "@/server/store/db";
import { loadConfig } from "@/server/config";
import { createObjectStore } from "@/server/storage";

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

const WORKER_SOURCE = `
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
  // Tell the server side when the measured window opens and closes (the profile counts statements in it).
  setTimeout(() => parentPort.postMessage({ phase: "measure" }), cfg.warmupMs);
  setTimeout(() => parentPort.postMessage({ phase: "end" }), cfg.warmupMs + cfg.durationMs);
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
          // A tool error's JSON is in its one text block (no structuredContent).
          else if (msg.result.isError) code = JSON.parse(msg.result.content[0].text).error.code || "TOOL_ERROR";
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
  parentPort.postMessage({ phase: "done", result: { measured, totalOk, failures, latencies, windowMs: cfg.durationMs, perClient } });
}
main().catch((e) => { throw e; });
`;

type LoadMessage = { phase: "measure" } | { phase: "end" } | { phase: "done"; result: LoadResult };

/** Runs the load; `onWindow` hears when the measured window opens ("measure") and closes ("end"). */
function runLoad(config: LoadConfig, onWindow?: (phase: "measure" | "end") => void): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: config });
    worker.on("message", (m: LoadMessage) => {
      if (m.phase === "done") resolve(m.result);
      else onWindow?.(m.phase);
    });
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
// Statement instrumentation for the profile (wraps the postgres.js client).
// ---------------------------------------------------------------------------

interface StatementStat {
  count: number;
  totalMs: number;
}

/** The statement that ends every batch: stores its commits and objects and moves the head by compare-and-swap (commitToBranch). */
const HEAD_MOVE = /^with moved as \(\s*update "?branches"?\s/i;
const HEAD_MOVE_LABEL = "WITH moved AS (UPDATE branches …) head move";

/** Counts and times what the server sends while the measured window is open. */
class Profiler {
  readonly statements = new Map<string, StatementStat>();
  /** Commits carried by each head move that moved the branch, i.e. the size of each committed batch. */
  readonly batchSizes: number[] = [];
  /** Client-observed time of each head move (committed or not). */
  readonly headMoveMs: number[] = [];
  /** Head moves that found the branch moved (the batch is rebuilt, and after two such a locked transaction runs). */
  lostRaces = 0;
  /** Transactions (only the locked fallback opens one). */
  transactions = 0;
  windowMs = 0;
  /** Share of the window the server's event loop was busy. */
  eventLoopBusy = Number.NaN;
  private active = false;
  private openedAt = 0;
  private elu0: ReturnType<typeof performance.eventLoopUtilization> | null = null;

  open() {
    this.statements.clear();
    this.batchSizes.length = 0;
    this.headMoveMs.length = 0;
    this.lostRaces = 0;
    this.transactions = 0;
    this.active = true;
    this.openedAt = performance.now();
    this.elu0 = performance.eventLoopUtilization();
  }

  close() {
    if (!this.active) return;
    this.active = false;
    this.windowMs = performance.now() - this.openedAt;
    this.eventLoopBusy = performance.eventLoopUtilization(this.elu0!).utilization;
  }

  get statementCount(): number {
    let n = 0;
    for (const s of this.statements.values()) n += s.count;
    return n;
  }

  /** Commits the server stored in the window (the sum of the batch sizes). */
  get commitsStored(): number {
    return this.batchSizes.reduce((a, b) => a + b, 0);
  }

  record(label: string, ms: number) {
    if (!this.active) return;
    const s = this.statements.get(label) ?? { count: 0, totalMs: 0 };
    s.count += 1;
    s.totalMs += ms;
    this.statements.set(label, s);
  }

  recordHeadMove(ms: number, commits: number, moved: boolean) {
    if (!this.active) return;
    this.headMoveMs.push(ms);
    if (moved) this.batchSizes.push(commits);
    else this.lostRaces += 1;
  }

  recordTransaction() {
    if (this.active) this.transactions += 1;
  }
}

function labelOf(query: string): string {
  const q = query.replace(/\s+/g, " ").trim();
  if (HEAD_MOVE.test(q)) return HEAD_MOVE_LABEL;
  let m = /^insert into "?(\w+)"?/i.exec(q);
  if (m) return `INSERT ${m[1]}${/on conflict do nothing/i.test(q) ? " ON CONFLICT DO NOTHING" : ""}`;
  m = /^update "?(\w+)"?/i.exec(q);
  if (m) return `UPDATE ${m[1]}`;
  m = /^select .*? from "?(\w+)"?/i.exec(q);
  if (m) return `SELECT ${m[1]}${/ for update/i.test(q) ? " FOR UPDATE" : ""}`;
  m = /^delete from "?(\w+)"?/i.exec(q);
  if (m) return `DELETE ${m[1]}`;
  return q.slice(0, 60);
}

/** How many commits a head move stores: the length of its commits parameter (the JSON array of commit rows). */
function commitsIn(params: unknown): number {
  if (!Array.isArray(params)) return 0;
  for (const p of params) {
    if (typeof p === "string" && p.startsWith("[") && p.includes('"parent_ids":')) return (JSON.parse(p) as unknown[]).length;
  }
  return 0;
}

/** Whether a head move moved the branch: it returns one row, `moved` = 1 (as an object or, with `.values()`, an array). */
function movedIn(rows: unknown): boolean {
  const first = Array.isArray(rows) ? (rows[0] as unknown) : undefined;
  if (Array.isArray(first)) return Number(first[0]) === 1;
  return Number((first as { moved?: unknown } | undefined)?.moved) === 1;
}

type AnySql = postgres.Sql & { unsafe: (...a: unknown[]) => unknown; begin: (...a: unknown[]) => unknown };

/** Wraps a postgres.js pending query so its completion is seen (with its rows), whatever drizzle chains on it. */
function timedQuery(pending: object, onDone: (rows: unknown) => void): object {
  let timed = false;
  const proxy: object = new Proxy(pending, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === "then") {
        return (onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => {
          const p = (target as Promise<unknown>).then(
            (v) => {
              if (!timed) {
                timed = true;
                onDone(v);
              }
              return v;
            },
            (e: unknown) => {
              if (!timed) {
                timed = true;
                onDone(undefined);
              }
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

/**
 * Counts and times every statement sent through `unsafe` (all drizzle sends),
 * and BEGIN and COMMIT of transactions: BEGIN until the body starts, COMMIT
 * (or ROLLBACK) from the body's end until `begin` settles.
 */
function instrument(sqlFn: AnySql, profiler: Profiler): AnySql {
  return new Proxy(sqlFn, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === "unsafe") {
        return (query: string, ...rest: unknown[]) => {
          const t0 = performance.now();
          const label = labelOf(query);
          const pending = (value as (...a: unknown[]) => object).call(target, query, ...rest);
          return timedQuery(pending, (rows) => {
            const ms = performance.now() - t0;
            profiler.record(label, ms);
            if (label === HEAD_MOVE_LABEL) profiler.recordHeadMove(ms, commitsIn(rest[0]), movedIn(rows));
          });
        };
      }
      if (prop === "begin") {
        return async (...args: unknown[]) => {
          const fn = args.pop() as (inner: AnySql) => Promise<unknown>;
          const t0 = performance.now();
          let bodyStart = 0;
          let bodyEnd = 0;
          profiler.recordTransaction();
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).call(target, ...args, async (inner: AnySql) => {
              bodyStart = performance.now();
              profiler.record("BEGIN (locked fallback)", bodyStart - t0);
              try {
                return await fn(instrument(inner, profiler));
              } finally {
                bodyEnd = performance.now();
              }
            });
          } finally {
            if (bodyEnd) profiler.record("COMMIT / ROLLBACK (locked fallback)", performance.now() - bodyEnd);
          }
        };
      }
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as AnySql;
}

/** A handle like openDatabase's (same pool, preparingEveryStatement, drizzle), with every statement counted. */
function instrumentedHandle(url: string, profiler: Profiler): DatabaseHandle {
  const client = postgres(url, { max: POOL_SIZE, onnotice: () => {} });
  const db = withCommitHooks(drizzle(instrument(preparingEveryStatement(client) as AnySql, profiler), { schema }) as unknown as Database);
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
  const message = (await response.json()) as {
    result?: { isError?: boolean; structuredContent: Record<string, unknown> };
    error?: unknown;
  };
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
    sections: Array.from({ length: CLIENTS }, (_, i) => ({
      name: `Section ${i + 1}`,
      content: [{ blockType: "text", text: `Initial text of section ${i + 1}.` }],
    })),
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
    const server = await startServer({ database, port: 0, host: "127.0.0.1", next: false, objectStore: createObjectStore(loadConfig()) });
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
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const elu0 = performance.eventLoopUtilization();
      const cpu0 = process.cpuUsage();
      const wall0 = performance.now();
      const load = await runLoad(
        {
          url: serverUrl,
          token: prepared.token,
          documentId: prepared.documentId,
          sectionIds,
          warmupMs: options.warmup * 1000,
          durationMs: options.seconds * 1000,
        },
        (phase) => (phase === "measure" ? options.profiler?.open() : options.profiler?.close()),
      );
      options.profiler?.close();
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
        cpuMsPerWrite: (cpu.user + cpu.system) / 1000 / Math.max(1, load.totalOk),
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
  log(
    `${label}: ${fmt(run.writesPerSecond)} committed writes/s (${run.measured} in the window), latency p50 ${fmt(run.p50)} ms, p99 ${fmt(run.p99)} ms, mean ${fmt(run.mean)} ms`,
  );
  log(`  per client: ${run.perClient.join(", ")}; failures: ${JSON.stringify(run.failures)}`);
  log(
    `  commits landed ${run.commitsLanded} = successful writes ${run.totalOk}: ${run.consistent ? "yes" : "NO"} (head generation ${run.headGeneration})`,
  );
  log(
    `  server event loop: ${fmt(run.eventLoopUtilization * 100, 0)}% busy, delay p50 ${fmt(run.eventLoopDelayP50)} ms, p99 ${fmt(run.eventLoopDelayP99)} ms; process CPU ${fmt(run.processCpuCores, 2)} cores, ${fmt(run.cpuMsPerWrite)} ms CPU per write (server + load worker)`,
  );
}

function describeProfile(run: QuireRun): Record<string, unknown> {
  const p = run.profile!;
  const seconds = p.windowMs / 1000;
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
  const batches = p.batchSizes.length;
  // Statements per write use the commits the server stored in the same window (the head moves' own count).
  const writes = p.commitsStored;
  const statements = p.statementCount;
  const sizes = [...p.batchSizes].sort((a, b) => a - b);
  const histogram = new Map<number, number>();
  for (const n of sizes) histogram.set(n, (histogram.get(n) ?? 0) + 1);
  const headMoves = [...p.headMoveMs].sort((a, b) => a - b);
  const rows = [...p.statements.entries()].sort((a, b) => b[1].count - a[1].count || b[1].totalMs - a[1].totalMs);
  log(
    `  window ${fmt(seconds)} s: ${writes} commits stored by ${batches} head moves = ${fmt(batches / seconds)} batches/s, ${fmt(writes / seconds)} commits/s (client-counted writes in the window: ${run.measured}); lost compare-and-swap races ${p.lostRaces}; locked-fallback transactions ${p.transactions}`,
  );
  log(
    `  batch size (commits per head move): mean ${fmt(writes / Math.max(1, batches), 2)}, p50 ${percentile(sizes, 50)}, p90 ${percentile(sizes, 90)}, max ${sizes.at(-1) ?? "-"}; batches by size: ${[...histogram].map(([n, c]) => `${n}: ${c} (${fmt((100 * c) / Math.max(1, batches), 0)}%)`).join(", ")}`,
  );
  log(
    `  head-move statement: mean ${fmt(mean(headMoves), 2)} ms, p50 ${fmt(percentile(headMoves, 50), 2)} ms, p99 ${fmt(percentile(headMoves, 99), 2)} ms (one per batch: stores commits, trees, section versions, comments and moves the head)`,
  );
  log(
    `  statements: ${statements} in the window = ${fmt(statements / Math.max(1, writes), 2)} per committed write, ${fmt(statements / Math.max(1, batches), 2)} per batch, ${fmt(statements / seconds)}/s; server event loop ${fmt(p.eventLoopBusy * 100, 0)}% busy in the window`,
  );
  log(`  ${"statement".padEnd(48)} ${"count".padStart(7)} ${"per write".padStart(9)} ${"mean ms".padStart(8)}`);
  for (const [label, s] of rows) {
    log(
      `  ${label.slice(0, 48).padEnd(48)} ${String(s.count).padStart(7)} ${fmt(s.count / Math.max(1, writes), 3).padStart(9)} ${fmt(s.totalMs / s.count, 2).padStart(8)}`,
    );
  }
  return {
    windowSeconds: seconds,
    commitsStored: writes,
    batches,
    batchesPerSecond: batches / seconds,
    meanBatchSize: writes / Math.max(1, batches),
    batchSizes: Object.fromEntries(histogram),
    lostRaces: p.lostRaces,
    transactions: p.transactions,
    headMoveMeanMs: mean(headMoves),
    headMoveP99Ms: percentile(headMoves, 99),
    statements,
    statementsPerWrite: statements / Math.max(1, writes),
    eventLoopBusy: p.eventLoopBusy,
    byStatement: Object.fromEntries(
      rows.map(([l, s]) => [l, { count: s.count, perWrite: s.count / Math.max(1, writes), meanMs: s.totalMs / s.count }]),
    ),
  };
}

async function main() {
  const cpus = os.cpus();
  log(`Section writes vs pgbench — ${new Date().toISOString()}`);
  log(`machine: ${cpus.length} × ${cpus[0]?.model ?? "?"}, node ${process.version}; PostgreSQL ${SERVER_URL.replace(/\/\/[^@]*@/, "//")}`);
  const [row] = await withAdmin((admin) => admin<Array<{ version: string }>>`select version()`);
  log(`server: ${row?.version}`);
  log(`${CLIENTS} clients, ${WARMUP} s warm-up + ${SECONDS} s measured, pool ${POOL_SIZE}`);
  const loadavg = () =>
    os
      .loadavg()
      .map((l) => fmt(l, 2))
      .join(" ");
  log(`load average at start: ${loadavg()} (other work on the machine skews both sides)`);
  log("");

  let pg: PgbenchRun | null = null;
  if (RUN_PGBENCH) {
    pg = await runPgbench();
    log(
      `pgbench TPC-B (-i -s 8; -c ${CLIENTS} -j 2 -T ${SECONDS} -M prepared): ${fmt(pg.tps)} TPS, latency ${pg.latencyMs ?? "?"} ms  [${pg.version}]`,
    );
  }

  const quire = await runQuire({ seconds: SECONDS, warmup: WARMUP, clients: CLIENTS });
  describeRun("Quire sections update over MCP", quire);

  const ratio = pg ? quire.writesPerSecond / pg.tps : null;
  if (ratio !== null)
    log(`ratio Quire writes/s ÷ pgbench TPS = ${fmt(ratio, 3)} (target >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? "met" : "MISSED"})`);

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
    log(
      "Profile (every statement the server's postgres.js client sends in the measured window; times are client-observed: round trip, pool and event-loop waits included):",
    );
    const profiled = await runQuire({ seconds: Math.min(SECONDS, 10), warmup: 2, clients: CLIENTS, profiler: new Profiler() });
    describeRun(`  ${CLIENTS} clients, instrumented`, profiled);
    const many = describeProfile(profiled);
    const single = await runQuire({ seconds: Math.min(SECONDS, 8), warmup: 2, clients: 1, profiler: new Profiler() });
    describeRun("  1 client, instrumented", single);
    const one = describeProfile(single);
    result.profile = {
      concurrent: { ...profiled, profile: undefined, detail: many },
      single: { ...single, profile: undefined, detail: one },
    };
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
