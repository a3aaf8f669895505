/**
 * Scale-out of the live layer (issue 28): thousands of lightweight
 * y-websocket clients on two Quire processes (one PostgreSQL, one Redis),
 * side by side with the reference `@y/websocket-server` (one process, in
 * memory) in the same run.
 *
 *   node --import tsx bench/scale-out.ts 1000/200 4000/800
 *
 * Each argument is clients/rooms (default 1000/200). A room is one section
 * (ROOM_SECTIONS per document); its clients are split over both processes
 * (client i on process i % 2), and each room gets one edit per second (its
 * clients take turns) with the author's awareness (a cursor) beside it, the
 * rooms staggered over the second. Clients are lightweight: a socket speaking
 * the sync and awareness protocol, and a Y.Doc that takes in the updates it
 * received only when its client next edits (a marker `[room.seq]` inserted
 * into the section's text). A peer finds markers in the bytes of the updates
 * it receives, so latency is keystroke to peer without decoding, per same and
 * cross process. At the end every marker must have reached every peer, and
 * every room's commit (the `documents` commit of its draft) must contain
 * every marker its room sent.
 *
 * Reported per size and server: latency p50/p99 (same / cross process), CPU
 * (from /proc/<pid>/stat: the servers, and Quire's PostgreSQL backends) and
 * RSS per process (/proc/<pid>/status; idle rooms' memory is the growth from
 * before the clients connected to after, with no edit made yet), CPU per
 * delivered edit, Redis commands (INFO commandstats delta: machine-wide, so
 * other users of the Redis count too), and markers lost.
 *
 * Environment (all optional):
 *   DATABASE_URL             PostgreSQL server (the bench creates and drops quire_bench_scale_*)
 *   QUIRE_REDIS_URL          Redis (default redis://127.0.0.1:6379)
 *   BENCH_SECONDS=30         measured seconds per size and server (after BENCH_WARMUP=30 s of edits)
 *   BENCH_WORKERS=2          worker threads the clients run in (a room's clients share one)
 *   BENCH_PROFILE_DIR        Quire processes and the reference write --cpu-prof profiles there (on their graceful exit)
 *   BENCH_SKIP_REFERENCE=1   Quire only (for profiling)
 *   BENCH_TIMELINE=1         also print p99 latency per second of the run (when the tail happens)
 *   BENCH_QUIRE_NODE_ARGS    extra Node flags for the Quire processes only (space-separated; to try a runtime setting)
 *   BENCH_QUIRE_PROCESSES=1  one Quire process and no Redis (every client on it): the reference's topology, with persistence
 *   BENCH_SPLIT=document     a document's clients all on one process (document d on process d % 2), as behind a load
 *                            balancer that routes by document path, instead of every room's clients split over both
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { Redis } from "ioredis";
import postgres from "postgres";
import WebSocket from "ws";
import * as Y from "yjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
/**
 * Seconds of edits before measuring. V8 optimizes a function once it has run
 * enough, and at 1,000 / 200 a process's edit path was still being compiled
 * 25 s into the edits (`--trace-opt`: 210 optimizations in a 20 s window after
 * 5 s, a few a second after 30 s), so a shorter warm-up measures the compiler
 * and the unoptimized code, more so per process the fewer edits each gets.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 2);
const REDIS_URL = process.env.QUIRE_REDIS_URL ?? "redis://127.0.0.1:6379";
/** Sections per document: a room is a section, and a document's sections share its branch room. */
const ROOM_SECTIONS = 10;
/**
 * After the edits stop, deliveries still on their way are waited for: a
 * delivery is lost when none arrived for DRAIN_QUIET_MS (or after
 * DRAIN_MAX_MS), not merely late (on a saturated box, seconds late).
 */
const DRAIN_QUIET_MS = 10_000;
const DRAIN_MAX_MS = 60_000;
/** Clients connecting at once, per worker. */
const CONNECT_CONCURRENCY = 25;
/** y-websocket clients renew their awareness this often (half of y-protocols' 30 s outdated timeout). */
const AWARENESS_RENEW_MS = 15_000;
const TIMELINE = process.env.BENCH_TIMELINE === "1";
/** Quire processes: 2 (the issue's topology, fanned out over Redis) or 1 (no Redis: what the fan-out costs, by difference). */
const QUIRE_PROCESSES = process.env.BENCH_QUIRE_PROCESSES === "1" ? 1 : 2;
/** Whether a document's clients share one process (routed by document) rather than every room's being split over all. */
const SPLIT_BY_DOCUMENT = process.env.BENCH_SPLIT === "document";

const MESSAGE_SYNC = 0;
const MESSAGE_AWARENESS = 1;
const SYNC_STEP1 = 0;
const SYNC_UPDATE = 2;

// ---------------------------------------------------------------------------------------------------------------------
// Wire helpers (the y-websocket protocol, lib0's varints), shared by the workers.

function varUint(out: number[], value: number): void {
  let n = value;
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
}

function varBytes(out: number[], bytes: Uint8Array): void {
  varUint(out, bytes.length);
  for (const b of bytes) out.push(b);
}

function message(type: number, write: (out: number[]) => void): Buffer {
  const out: number[] = [];
  varUint(out, type);
  write(out);
  return Buffer.from(out);
}

/** An awareness update with one client's state (y-protocols' encodeAwarenessUpdate format). */
function awarenessMessage(clientId: number, clock: number, state: unknown): Buffer {
  return message(MESSAGE_AWARENESS, (out) => {
    const inner: number[] = [];
    varUint(inner, 1);
    varUint(inner, clientId);
    varUint(inner, clock);
    const json = Buffer.from(JSON.stringify(state));
    varBytes(inner, json);
    varBytes(out, Uint8Array.from(inner));
  });
}

// ---------------------------------------------------------------------------------------------------------------------
// The worker: the clients of its rooms.

interface RoomPlan {
  index: number;
  /** One URL per client (its process's). */
  urls: string[];
  /** Which process each client is on (0, 1; the reference is 0). */
  procs: number[];
  /** "section": Quire's section doc (its first block's text); "plain": the reference's `t`. */
  text: "section" | "plain";
}

interface WorkerPlan {
  rooms: RoomPlan[];
  /** Stagger: room i edits at offset (i / rooms) of each second. */
  totalRooms: number;
}

interface WorkerResult {
  same: number[];
  cross: number[];
  timeline: number[];
  sent: number;
  expected: number;
  received: number;
  /** Markers each room sent (all of them, warm-up included), for the commit check. */
  markers: Array<{ index: number; markers: string[] }>;
  connectMs: number;
}

type Command = "connect" | "edit" | "measure" | "stop";

interface Client {
  ws: WebSocket;
  /**
   * The room's initial state with the client's own edits and the updates it
   * received, as a y-websocket client's doc: an edit builds on what its author
   * has, never on a peer's edit still on its way. (Built on its own edits
   * alone, as it was until 2026-11-30, every edit was concurrent with all its
   * peers' earlier ones, and each server's Yjs walked them all to place it.)
   */
  doc: Y.Doc | null;
  /** Updates received since the client's last edit: applied to its doc before the next (no decoding on arrival, where latency is measured). */
  received: Uint8Array[];
  proc: number;
  awarenessId: number;
  awarenessClock: number;
  name: string;
}

interface Room {
  plan: RoomPlan;
  clients: Client[];
  /** The room's state as its first client received it (sync step 2): every client's edits start from it. */
  initial: Uint8Array | null;
  synced: Promise<void>;
  next: number;
  sent: string[];
}

async function runWorker(plan: WorkerPlan): Promise<void> {
  const port = parentPort!;
  /** Per marker: when it was sent, by which process's client, whether it is measured, and how many peers got it. */
  const markers = new Map<string, { at: number; author: Client; proc: number; measured: boolean; got: number; peers: number }>();
  const same: number[] = [];
  const cross: number[] = [];
  /** With BENCH_TIMELINE: each measured delivery as [second of the run it was sent in, latency, 1 if cross]. */
  const timeline: number[] = [];
  let measuring = false;
  let editing = false;
  const rooms: Room[] = [];
  const timers: NodeJS.Timeout[] = [];

  const onMessage = (room: Room, client: Client, data: Buffer, first: boolean) => {
    if (data[0] !== MESSAGE_SYNC) return;
    const syncType = data[1];
    if (syncType === SYNC_STEP1) {
      // The server's state vector: this client has nothing the server lacks (its edits went out as updates).
      client.ws.send(
        message(MESSAGE_SYNC, (out) => {
          varUint(out, 1);
          varBytes(out, Y.encodeStateAsUpdate(new Y.Doc()));
        }),
      );
      return;
    }
    if (syncType === 1 && first) {
      // Sync step 2: the room's state, what its clients' edits start from.
      room.initial = readSyncPayload(data);
      return;
    }
    if (syncType !== SYNC_UPDATE) return;
    const now = performance.now();
    client.received.push(readSyncPayload(data));
    const text = data.toString("latin1");
    for (const match of text.matchAll(/\[(\d+\.\d+)\]/g)) {
      const marker = markers.get(match[1]!);
      // The reference echoes an update to its author too: counted for peers only.
      if (!marker || marker.author === client) continue;
      marker.got += 1;
      if (!marker.measured) continue;
      const isCross = client.proc !== marker.proc;
      (isCross ? cross : same).push(now - marker.at);
      if (TIMELINE) timeline.push(Math.floor((performance.timeOrigin + marker.at) / 1000), now - marker.at, isCross ? 1 : 0);
    }
  };

  const connectClient = (room: Room, i: number): Promise<Client> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(room.plan.urls[i]!, { perMessageDeflate: false });
      const client: Client = {
        ws,
        doc: null,
        received: [],
        proc: room.plan.procs[i]!,
        awarenessId: Math.floor(Math.random() * 2 ** 31),
        awarenessClock: 0,
        name: `client ${room.plan.index}.${i}`,
      };
      ws.binaryType = "nodebuffer";
      let syncedResolve: () => void = () => {};
      if (i === 0) room.synced = new Promise((r) => (syncedResolve = r));
      ws.on("message", (data: Buffer) => {
        onMessage(room, client, data, i === 0);
        if (i === 0 && data[0] === MESSAGE_SYNC && data[1] === 1) syncedResolve();
      });
      ws.once("open", () => {
        // What a y-websocket provider sends on open: sync step 1 (its empty state) and its presence.
        ws.send(
          message(MESSAGE_SYNC, (out) => {
            varUint(out, SYNC_STEP1);
            varBytes(out, Y.encodeStateVector(new Y.Doc()));
          }),
        );
        ws.send(awarenessMessage(client.awarenessId, client.awarenessClock++, presence(client, null)));
        resolve(client);
      });
      ws.once("error", reject);
    });

  const edit = (room: Room) => {
    const author = room.clients[room.next % room.clients.length]!;
    room.next += 1;
    const seq = `${room.plan.index}.${room.next}`;
    if (!author.doc) {
      author.doc = new Y.Doc();
      Y.applyUpdate(author.doc, room.initial!);
    }
    const doc = author.doc;
    Y.transact(doc, () => {
      for (const update of author.received) Y.applyUpdate(doc, update);
    });
    author.received = [];
    const text =
      room.plan.text === "section"
        ? ((doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text)
        : doc.getText("t");
    let update: Uint8Array | null = null;
    const capture = (u: Uint8Array) => {
      update = u;
    };
    doc.on("update", capture);
    text.insert(0, `[${seq}]`);
    doc.off("update", capture);
    const peers = room.clients.filter((c) => c !== author && c.ws.readyState === WebSocket.OPEN).length;
    markers.set(seq, { at: performance.now(), author, proc: author.proc, measured: measuring, got: 0, peers });
    room.sent.push(seq);
    author.ws.send(
      message(MESSAGE_SYNC, (out) => {
        varUint(out, SYNC_UPDATE);
        varBytes(out, update!);
      }),
    );
    author.ws.send(
      awarenessMessage(author.awarenessId, author.awarenessClock++, presence(author, { client: doc.clientID, clock: room.next })),
    );
  };

  port.on("message", async (command: Command) => {
    if (command === "connect") {
      const started = performance.now();
      const queue = plan.rooms.map((p) => p);
      const connectOne = async () => {
        for (let p = queue.shift(); p; p = queue.shift()) {
          const room: Room = { plan: p, clients: [], initial: null, synced: Promise.resolve(), next: 0, sent: [] };
          for (let i = 0; i < p.urls.length; i++) room.clients.push(await connectClient(room, i));
          await room.synced;
          rooms.push(room);
        }
      };
      await Promise.all(Array.from({ length: CONNECT_CONCURRENCY }, connectOne));
      // Each client renews on its own clock, as a y-protocols Awareness does from when it was made: clients that came at
      // independent moments, not thousands renewing in the same millisecond (which every server would take as one burst).
      for (const room of rooms)
        for (const c of room.clients) {
          const renew = () => {
            if (c.ws.readyState === WebSocket.OPEN) c.ws.send(awarenessMessage(c.awarenessId, c.awarenessClock++, presence(c, null)));
          };
          timers.push(setTimeout(() => timers.push(setInterval(renew, AWARENESS_RENEW_MS)), Math.random() * AWARENESS_RENEW_MS));
        }
      port.postMessage({ connected: performance.now() - started });
    } else if (command === "edit") {
      editing = true;
      for (const room of rooms) {
        const offset = (room.plan.index / plan.totalRooms) * 1000;
        setTimeout(() => {
          if (!editing) return;
          edit(room);
          timers.push(setInterval(() => editing && edit(room), 1000));
        }, offset);
      }
    } else if (command === "measure") {
      measuring = true;
    } else if (command === "stop") {
      editing = false;
      measuring = false;
      const count = () => {
        let expected = 0;
        let received = 0;
        for (const m of markers.values()) {
          expected += m.peers;
          received += Math.min(m.got, m.peers);
        }
        return { expected, received };
      };
      const drainStarted = performance.now();
      let lastProgress = drainStarted;
      let lastReceived = -1;
      for (;;) {
        const { expected, received } = count();
        if (received === expected) break;
        const now = performance.now();
        if (received !== lastReceived) {
          lastReceived = received;
          lastProgress = now;
        }
        if (now - lastProgress > DRAIN_QUIET_MS || now - drainStarted > DRAIN_MAX_MS) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      for (const t of timers) clearInterval(t);
      const { expected, received } = count();
      const closed = rooms.flatMap((r) => r.clients.map((c) => new Promise((resolve) => c.ws.once("close", resolve))));
      for (const room of rooms) for (const c of room.clients) c.ws.close();
      await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, 5_000))]);
      const result: WorkerResult = {
        same,
        cross,
        timeline,
        sent: markers.size,
        expected,
        received,
        markers: rooms.map((r) => ({ index: r.plan.index, markers: r.sent })),
        connectMs: 0,
      };
      port.postMessage({ result });
    }
  });
}

/** What Quire's editor publishes as presence: its user and (while typing) a cursor as relative positions. */
function presence(client: Client, item: { client: number; clock: number } | null): unknown {
  const cursor = item ? { anchor: { item, assoc: 0 }, head: { item, assoc: 0 } } : null;
  return { user: { name: client.name, color: "#30bced", colorLight: "#30bced33" }, cursor };
}

/** The update inside a sync step 2 or update message. */
function readSyncPayload(data: Buffer): Uint8Array {
  let pos = 2;
  let length = 0;
  let shift = 1;
  for (;;) {
    const b = data[pos++]!;
    length += (b & 0x7f) * shift;
    shift *= 128;
    if (b < 0x80) break;
  }
  return new Uint8Array(data.subarray(pos, pos + length));
}

// ---------------------------------------------------------------------------------------------------------------------
// The main thread: servers, sizes, measurements.

const log = (...args: unknown[]) => console.log(...args);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CLOCK_TICKS = 100;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** CPU seconds a process has used (user + system), or 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function redisCommands(redis: Redis): Promise<{ total: number; publish: number }> {
  const info = await redis.info("commandstats");
  let total = 0;
  let publish = 0;
  for (const match of info.matchAll(/cmdstat_(\w+):calls=(\d+)/g)) {
    total += Number(match[2]);
    if (match[1] === "publish") publish += Number(match[2]);
  }
  return { total, publish };
}

interface Server {
  label: string;
  pids: () => number[];
  /** Per client i of room r: its URL and process. */
  client(room: { documentId: string; sectionId: string; index: number }, i: number): { url: string; proc: number };
  text: "section" | "plain";
}

interface PhaseResult {
  same: number[];
  cross: number[];
  /** Per second of the run (epoch seconds): latencies same and cross (BENCH_TIMELINE). */
  timeline: Map<number, { same: number[]; cross: number[] }>;
  sent: number;
  expected: number;
  received: number;
  cpu: number[];
  /** CPU of the PostgreSQL backends serving the bench's database (Quire only). */
  pgCpu: number;
  rssBefore: number[];
  rssIdle: number[];
  rssAfter: number[];
  redis: { total: number; publish: number };
  markers: Map<number, string[]>;
  connectSeconds: number;
}

async function runPhase(
  server: Server,
  rooms: Array<{ documentId: string; sectionId: string; index: number }>,
  clientsPerRoom: number,
  redis: Redis,
  pgPids: () => Promise<number[]>,
): Promise<PhaseResult> {
  const plans: RoomPlan[] = rooms.map((room) => {
    const clients = Array.from({ length: clientsPerRoom }, (_, i) => server.client(room, i));
    return { index: room.index, urls: clients.map((c) => c.url), procs: clients.map((c) => c.proc), text: server.text };
  });
  const workers = Array.from(
    { length: WORKERS },
    (_, w) =>
      // The worker loads this file through tsx, as bin/quire.js loads the server (a worker does not inherit the loader).
      new Worker(`import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); });`, {
        eval: true,
        workerData: { rooms: plans.filter((_, i) => i % WORKERS === w), totalRooms: rooms.length } satisfies WorkerPlan,
      }),
  );
  const ask = (command: Command) =>
    Promise.all(
      workers.map(
        (worker) =>
          new Promise<Record<string, unknown>>((resolve, reject) => {
            worker.once("message", resolve);
            worker.once("error", reject);
            worker.postMessage(command);
          }),
      ),
    );
  const pids = server.pids();
  const rssBefore = pids.map(rssMb);
  const connectStarted = performance.now();
  await ask("connect");
  const connectSeconds = (performance.now() - connectStarted) / 1000;
  await sleep(2_000);
  const rssIdle = pids.map(rssMb);
  for (const w of workers) w.postMessage("edit");
  await sleep(WARMUP * 1000);
  const pg = await pgPids();
  const cpuStart = pids.map(cpuSeconds);
  const pgStart = pg.map(cpuSeconds);
  const redisStart = await redisCommands(redis);
  for (const w of workers) w.postMessage("measure");
  await sleep(SECONDS * 1000);
  const cpu = pids.map((pid, i) => (cpuSeconds(pid) - cpuStart[i]!) / SECONDS);
  const pgCpu = pg.reduce((sum, pid, i) => sum + Math.max(0, cpuSeconds(pid) - pgStart[i]!), 0) / SECONDS;
  const redisEnd = await redisCommands(redis);
  const rssAfter = pids.map(rssMb);
  const results = (await ask("stop")).map((m) => m.result as WorkerResult);
  for (const w of workers) await w.terminate();
  const markers = new Map<number, string[]>();
  for (const r of results) for (const m of r.markers) markers.set(m.index, m.markers);
  const timeline = new Map<number, { same: number[]; cross: number[] }>();
  for (const r of results)
    for (let i = 0; i < r.timeline.length; i += 3) {
      const second = r.timeline[i]!;
      const bin = timeline.get(second) ?? { same: [], cross: [] };
      timeline.set(second, bin);
      (r.timeline[i + 2] ? bin.cross : bin.same).push(r.timeline[i + 1]!);
    }
  return {
    timeline,
    same: results.flatMap((r) => r.same).sort((a, b) => a - b),
    cross: results.flatMap((r) => r.cross).sort((a, b) => a - b),
    sent: results.reduce((s, r) => s + r.sent, 0),
    expected: results.reduce((s, r) => s + r.expected, 0),
    received: results.reduce((s, r) => s + r.received, 0),
    cpu,
    pgCpu,
    rssBefore,
    rssIdle,
    rssAfter,
    redis: { total: (redisEnd.total - redisStart.total) / SECONDS, publish: (redisEnd.publish - redisStart.publish) / SECONDS },
    markers,
    connectSeconds,
  };
}

/** Per second of the measured run: deliveries and p99 / max latency, same and cross process (where the tail sits in time). */
function logTimeline(timeline: PhaseResult["timeline"]): void {
  const seconds = [...timeline.keys()].sort((a, b) => a - b);
  const f = (sorted: number[], p: number) => (sorted.length === 0 ? "—" : percentile(sorted, p).toFixed(1));
  log("  second | n same | p99 same | max same | n cross | p99 cross | max cross");
  for (const second of seconds) {
    const { same, cross } = timeline.get(second)!;
    same.sort((a, b) => a - b);
    cross.sort((a, b) => a - b);
    log(
      `  ${String(second - seconds[0]!).padStart(6)} | ${same.length} | ${f(same, 99)} | ${f(same, 100)} | ${cross.length} | ${f(cross, 99)} | ${f(cross, 100)}`,
    );
  }
}

async function startReference(nodeArgs: string[]): Promise<{ url: string; child: ChildProcess }> {
  const script = `
    import { createServer } from "node:http";
    import { WebSocketServer } from "ws";
    import { setupWSConnection } from "@y/websocket-server/utils";
    const server = createServer((_req, res) => res.end("reference"));
    const sockets = new WebSocketServer({ server });
    sockets.on("connection", (ws, req) => setupWSConnection(ws, req));
    server.listen(0, "127.0.0.1", () => console.log("listening " + server.address().port));
    process.on("SIGTERM", () => process.exit(0));
  `;
  const child = spawn(process.execPath, [...nodeArgs, "--input-type=module", "-e", script], {
    cwd: process.cwd(),
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`reference server exited with ${code}`)));
  });
  return { url: `ws://127.0.0.1:${port}`, child };
}

async function main(): Promise<void> {
  const sizes = (process.argv.slice(2).length > 0 ? process.argv.slice(2) : ["1000/200"]).map((arg) => {
    const [clients, rooms] = arg.split("/").map(Number);
    if (!clients || !rooms || clients % rooms !== 0) throw new Error(`bad size ${arg}: clients/rooms, clients a multiple of rooms`);
    return { clients, rooms };
  });
  // Loaded here, not at the top: the workers need none of the server's code.
  const { scratchDatabase } = await import("./scratch-database");
  const { addUser, issueApiToken } = await import("@/server/auth/accounts");
  const { startQuireProcess } = await import("../tests/helpers/quire-process");

  const name = `quire_bench_scale_${randomBytes(4).toString("hex")}`;
  const { database, url: databaseUrl, drop } = await scratchDatabase(name);
  const redis = new Redis(REDIS_URL);
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const pgPids = async () =>
    (await admin<Array<{ pid: number }>>`select pid from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`).map(
      (r) => r.pid,
    );
  const nodeArgs = process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const quireNodeArgs = [...nodeArgs, ...(process.env.BENCH_QUIRE_NODE_ARGS?.split(" ").filter(Boolean) ?? [])];
  const quire: Array<Awaited<ReturnType<typeof startQuireProcess>>> = [];
  // One after the other: two at once may not start within the helper's 30 s on a busy box.
  for (let p = 0; p < QUIRE_PROCESSES; p++)
    quire.push(await startQuireProcess({ databaseUrl, redisUrl: QUIRE_PROCESSES > 1 ? REDIS_URL : undefined, nodeArgs: quireNodeArgs }));
  const reference = process.env.BENCH_SKIP_REFERENCE ? null : await startReference(nodeArgs);
  try {
    await addUser(database.db, { email: "bench@example.test", name: "Bench", password: "correct horse battery" }, new Date());
    const { token } = await issueApiToken(database.db, { email: "bench@example.test", label: "bench" }, new Date());
    const trpc = async (url: string, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const body = JSON.stringify({ ...input, tool: undefined });
      // `read` is a tRPC query (GET), the rest are mutations.
      const response =
        input.tool === "read"
          ? await fetch(`${url}/api/trpc/read?input=${encodeURIComponent(body)}`, { headers: { authorization: `Bearer ${token}` } })
          : await fetch(`${url}/api/trpc/${input.tool}`, {
              method: "POST",
              headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
              body,
            });
      const answer = (await response.json()) as { result?: { data: Record<string, unknown> }; error?: unknown };
      if (!answer.result) throw new Error(`${String(input.tool)} ${String(input.action ?? "")}: ${JSON.stringify(answer.error)}`);
      return answer.result.data;
    };
    log(
      `machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, Node ${process.version}, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}; ${SECONDS} s measured after ${WARMUP} s of edits; clients in ${WORKERS} worker threads`,
    );
    const quireServer: Server = {
      label:
        QUIRE_PROCESSES === 1
          ? "Quire (1 process, PostgreSQL)"
          : `Quire (2 processes, PostgreSQL, Redis${SPLIT_BY_DOCUMENT ? "; clients routed by document" : ""})`,
      pids: () => quire.map((q) => q.child.pid!),
      client: (room, i) => {
        const proc = (SPLIT_BY_DOCUMENT ? Math.floor(room.index / ROOM_SECTIONS) : i) % QUIRE_PROCESSES;
        return { url: `${quire[proc]!.url.replace(/^http/, "ws")}/collab/${room.documentId}/main/~${room.sectionId}?token=${token}`, proc };
      },
      text: "section",
    };
    const referenceServer: Server | null = reference
      ? {
          label: "@y/websocket-server (1 process, memory)",
          pids: () => [reference.child.pid!],
          client: (room) => ({ url: `${reference.url}/bench-${room.index}`, proc: 0 }),
          text: "plain",
        }
      : null;

    for (const [sizeIndex, size] of sizes.entries()) {
      log(`\n## ${size.clients} clients / ${size.rooms} rooms (load ${os.loadavg()[0]!.toFixed(2)})`);
      const rooms: Array<{ documentId: string; sectionId: string; index: number }> = [];
      for (let d = 0; d * ROOM_SECTIONS < size.rooms; d++) {
        const count = Math.min(ROOM_SECTIONS, size.rooms - d * ROOM_SECTIONS);
        const created = await trpc(quire[0]!.url, {
          tool: "documents",
          action: "create",
          path: `scale/${sizeIndex}/doc-${d}`,
          sections: Array.from({ length: count }, (_, i) => ({ name: `Room ${i + 1}`, content: [{ blockType: "text", text: "Room." }] })),
        });
        for (const sectionId of created.sectionIds as string[])
          rooms.push({ documentId: created.documentId as string, sectionId, index: rooms.length });
      }
      const clientsPerRoom = size.clients / size.rooms;
      const phases: Array<{ server: Server; result: PhaseResult }> = [];
      for (const server of [quireServer, referenceServer]) {
        if (!server) continue;
        phases.push({
          server,
          result: await runPhase(server, rooms, clientsPerRoom, redis, server === quireServer ? pgPids : async () => []),
        });
      }

      // The commit check: each document's draft committed, and every room's markers in its section.
      const quireMarkers = phases[0]!.result.markers;
      await sleep(2_000);
      let missingInCommit = 0;
      const byDocument = new Map<string, typeof rooms>();
      for (const room of rooms) byDocument.set(room.documentId, [...(byDocument.get(room.documentId) ?? []), room]);
      for (const [documentId, documentRooms] of byDocument) {
        await trpc(quire[QUIRE_PROCESSES - 1]!.url, { tool: "documents", action: "commit", documentId, branchName: "main" });
        const read = JSON.stringify(await trpc(quire[0]!.url, { tool: "read", documentId, branchName: "main" }));
        for (const room of documentRooms)
          for (const marker of quireMarkers.get(room.index) ?? []) if (!read.includes(`[${marker}]`)) missingInCommit += 1;
      }

      log(
        "| server | deliveries | p50 same | p99 same | p50 cross | p99 cross | CPU (cores) per process | + PostgreSQL | CPU µs per delivered edit | RSS MB before → idle → editing | KB per idle room | Redis cmds/s (publish) | lost |",
      );
      log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
      const perEdit: number[] = [];
      for (const { server, result: r } of phases) {
        const deliveries = r.same.length + r.cross.length;
        const cpuTotal = r.cpu.reduce((a, b) => a + b, 0) + r.pgCpu;
        const usPerEdit = (cpuTotal * SECONDS * 1e6) / Math.max(1, deliveries);
        perEdit.push(usPerEdit);
        const idleKb = ((r.rssIdle.reduce((a, b) => a + b, 0) - r.rssBefore.reduce((a, b) => a + b, 0)) * 1024) / size.rooms;
        const f = (n: number) => (Number.isNaN(n) ? "—" : n.toFixed(1));
        log(
          `| ${server.label} | ${deliveries} | ${f(percentile(r.same, 50))} | ${f(percentile(r.same, 99))} | ${f(percentile(r.cross, 50))} | ${f(percentile(r.cross, 99))} | ${r.cpu.map((c) => c.toFixed(2)).join(" + ")} | ${r.pgCpu.toFixed(2)} | ${usPerEdit.toFixed(0)} | ${r.rssBefore.map((m, i) => `${m.toFixed(0)} → ${r.rssIdle[i]!.toFixed(0)} → ${r.rssAfter[i]!.toFixed(0)}`).join("; ")} | ${idleKb.toFixed(1)} | ${server === quireServer ? `${r.redis.total.toFixed(0)} (${r.redis.publish.toFixed(0)})` : "—"} | ${r.expected - r.received} of ${r.expected} |`,
        );
        log(`  connected in ${r.connectSeconds.toFixed(1)} s; ${r.sent} edits sent`);
        if (TIMELINE) logTimeline(r.timeline);
      }
      const quireResult = phases[0]!.result;
      log(
        `commit check: ${missingInCommit} markers missing from the commits (of ${[...quireMarkers.values()].reduce((s, m) => s + m.length, 0)})`,
      );
      if (phases[1]) {
        const ref = phases[1].result;
        log(
          `ratios Quire / reference: CPU per delivered edit ${(perEdit[0]! / perEdit[1]!).toFixed(2)}x (${((perEdit[0]! * (1 - quireResult.pgCpu / (quireResult.cpu.reduce((a, b) => a + b, 0) + quireResult.pgCpu))) / perEdit[1]!).toFixed(2)}x without PostgreSQL); p99 same ${(percentile(quireResult.same, 99) / percentile(ref.same, 99)).toFixed(2)}x, cross ${(percentile(quireResult.cross, 99) / percentile(ref.same, 99)).toFixed(2)}x; cross/same p99 ${(percentile(quireResult.cross, 99) / percentile(quireResult.same, 99)).toFixed(2)}x`,
        );
      }
    }
  } finally {
    for (const q of quire) await q.stop("SIGTERM");
    reference?.child.kill("SIGTERM");
    await admin.end();
    redis.disconnect();
    await drop();
  }
}

if (isMainThread) {
  await main();
  process.exit(0);
} else {
  await runWorker(workerData as WorkerPlan);
}
