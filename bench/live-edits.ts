/**
 * Live editing (issue 12): keystroke-to-peer latency with 50 clients in one
 * room at 20 edits/s in total, Quire (every update broadcast on arrival and
 * stored in PostgreSQL behind it; the window between is measured too) side by
 * side with the reference y-websocket server
 * (`@y/websocket-server`, in memory) in the same run; memory per idle room
 * (500 rooms, 3 clients each) for both; the time from an MCP write (over
 * HTTP) to its arrival in an open editor that is typing in the same text; and
 * the time to open a room on a 2,000-section document.
 *
 *   node --expose-gc --import tsx bench/live-edits.ts
 *
 * Environment (all optional):
 *   DATABASE_URL           PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 *                          the bench creates and drops its own database quire_bench_live_* there.
 *   BENCH_CLIENTS=50       clients in the room
 *   BENCH_RATE=20          edits per second, all clients together (round robin)
 *   BENCH_SECONDS=15       measured seconds per round (after BENCH_WARMUP=2 s of edits)
 *   BENCH_ROUNDS=2         latency rounds, each Quire then the reference
 *   BENCH_IDLE_ROOMS=500   rooms for the memory measurement (3 clients each)
 *   BENCH_API_WRITES=40    MCP writes for the API-write-to-editor measurement
 *   BENCH_MEMORY=1         measure only the memory per idle room
 *
 * Both servers run in this process's main thread; the typing clients, real
 * `y-websocket` providers over `ws`, run in a worker thread (one per round
 * and server), as browsers run apart from a server. A keystroke is one insert
 * of a numbered marker into the section's text; its latency is the time until
 * a peer's Y.Text observes it, counted for every peer (49 per keystroke). The
 * idle rooms' clients run in another worker, so the memory figure is the
 * servers' own; the room-opening clients run in the main thread.
 */
import { randomBytes } from "node:crypto";
import { Worker } from "node:worker_threads";
import { createServer, type Server } from "node:http";
import os from "node:os";
import type { AddressInfo } from "node:net";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { setupWSConnection } from "@y/websocket-server/utils";
import WebSocket, { WebSocketServer } from "ws";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import { tools } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { actorForUser } from "@/server/access/actor";
import { startServer } from "@/server/http/server";
import { scratchDatabase } from "./scratch-database";
import { LocalObjectStore } from "@/server/storage/local";

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
/** Rounds of the latency measurement: each round measures Quire, then the reference. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 2);
const IDLE_ROOMS = Number(process.env.BENCH_IDLE_ROOMS ?? 500);
const BIG_DOCUMENT_SECTIONS = 2_000;
const API_WRITES = Number(process.env.BENCH_API_WRITES ?? 40);
/** BENCH_MEMORY=1: only the memory per idle room. */
const MEMORY_ONLY = process.env.BENCH_MEMORY === "1";

const log = (...args: unknown[]) => console.log(...args);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

interface Client {
  doc: Y.Doc;
  provider: WebsocketProvider;
  text(): Y.Text;
}

/** A provider on `base/room`, waiting for its first sync; `textOf` finds the edited Y.Text in its doc. */
async function connect(base: string, room: string, params: Record<string, string>, textOf: (doc: Y.Doc) => Y.Text): Promise<Client> {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(base, room, doc, {
    WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
    params,
    disableBc: true,
  });
  await new Promise<void>((resolve) => {
    if (provider.synced) resolve();
    else provider.once("sync", () => resolve());
  });
  return { doc, provider, text: () => textOf(doc) };
}

const close = (clients: Client[]) => {
  for (const c of clients) {
    c.provider.destroy();
    c.doc.destroy();
  }
};

/**
 * The typing clients run in a worker thread (plain JS, no TypeScript loader),
 * as browsers run apart from a server: a server's work after it broadcast an
 * update (Quire's store) then delays no peer's receipt, and the clients' work
 * delays neither server. `CLIENTS` providers on one room; every 1000/RATE ms
 * the next one (round robin) inserts a numbered marker at the start of the
 * text; every other client's Y.Text observer records when it arrives.
 */
const LATENCY_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { performance } = require("node:perf_hooks");
const Y = require("yjs");
const { WebsocketProvider } = require("y-websocket");
const WebSocket = require("ws");
const cfg = workerData;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const textOf = (doc) => (cfg.text === "section" ? doc.getMap("section").get("blocks").get(0).get("text") : doc.getText("t"));

async function connect() {
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(cfg.base, cfg.room, doc, { WebSocketPolyfill: WebSocket, params: cfg.params, disableBc: true });
  await new Promise((resolve) => (provider.synced ? resolve() : provider.once("sync", () => resolve())));
  return { doc, provider };
}

(async () => {
  process.setMaxListeners(0);
  const clients = await Promise.all(Array.from({ length: cfg.clients }, connect));
  const sentAt = new Map();
  const latencies = [];
  let measuring = false;
  for (const client of clients) {
    textOf(client.doc).observe((event) => {
      if (event.transaction.local) return;
      const now = performance.now();
      for (const op of event.delta) {
        if (typeof op.insert !== "string") continue;
        for (const match of op.insert.matchAll(/\\[(\\d+)\\]/g)) {
          const at = sentAt.get(Number(match[1]));
          if (at !== undefined && measuring) latencies.push(now - at);
        }
      }
    });
  }
  let seq = cfg.firstMarker;
  const run = async (seconds) => {
    const end = performance.now() + seconds * 1000;
    let next = performance.now();
    while (performance.now() < end) {
      const client = clients[seq % clients.length];
      seq += 1;
      sentAt.set(seq, performance.now());
      textOf(client.doc).insert(0, "[" + seq + "]");
      next += 1000 / cfg.rate;
      await sleep(Math.max(0, next - performance.now()));
    }
  };
  await run(cfg.warmupSeconds);
  measuring = true;
  await run(cfg.seconds);
  await sleep(500);
  measuring = false;
  for (const { doc, provider } of clients) {
    provider.destroy();
    doc.destroy();
  }
  parentPort.postMessage(latencies);
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/** Keystroke-to-peer latencies (ms) of `RATE` edits/s spread round robin over `CLIENTS` clients of one room, typed from a worker thread. */
function measureLatency(
  base: string,
  room: string,
  params: Record<string, string>,
  text: "section" | "plain",
  round: number,
): Promise<number[]> {
  const worker = new Worker(LATENCY_WORKER, {
    eval: true,
    workerData: {
      base,
      room,
      params,
      text,
      clients: CLIENTS,
      rate: RATE,
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      // Markers stay unique across rounds on the same room.
      firstMarker: round * 1_000_000,
    },
  });
  return new Promise((resolve, reject) => {
    worker.once("message", (latencies: number[]) => resolve(latencies));
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`latency worker exited with ${code}`));
    });
  });
}

/** The main thread's heap + external + array buffers after two full GCs, in KB (the servers' memory: the clients are in a worker). */
function heapKb(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with node --expose-gc: the memory figure needs full GCs");
  gc();
  gc();
  const m = process.memoryUsage();
  return (m.heapUsed + m.external + m.arrayBuffers) / 1024;
}

/**
 * The idle rooms' clients, in a worker thread (plain JS): the main thread's
 * heap then holds the servers only. Told `{ open: { base, rooms, params } }`,
 * it connects 3 providers to each room (50 rooms at a time) and answers once
 * every one has synced; with a `seed` (a Yjs update), each room's first
 * client holds it before connecting, so the server's room holds that content
 * too; told `{ close: true }`, it destroys them and answers.
 */
const IDLE_WORKER = `
const { parentPort } = require("node:worker_threads");
const Y = require("yjs");
const { WebsocketProvider } = require("y-websocket");
const WebSocket = require("ws");
process.setMaxListeners(0);
let clients = [];
async function connect(base, room, params, seed) {
  const doc = new Y.Doc();
  if (seed) Y.applyUpdate(doc, seed);
  const provider = new WebsocketProvider(base, room, doc, { WebSocketPolyfill: WebSocket, params, disableBc: true });
  await new Promise((resolve) => (provider.synced ? resolve() : provider.once("sync", () => resolve())));
  return { doc, provider };
}
parentPort.on("message", async (message) => {
  try {
    if (message.open) {
      const { base, rooms, params, seed } = message.open;
      for (let i = 0; i < rooms.length; i += 50) {
        const batch = rooms.slice(i, i + 50).flatMap((room) => [[room, seed], [room], [room]]);
        clients.push(...(await Promise.all(batch.map(([room, held]) => connect(base, room, params, held)))));
      }
    } else {
      for (const { doc, provider } of clients) {
        provider.destroy();
        doc.destroy();
      }
      clients = [];
    }
    parentPort.postMessage("done");
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
});
`;

/** Sends the idle clients' worker a message and waits for its answer. */
function ask(worker: Worker, message: unknown): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: unknown) => reject(error instanceof Error ? error : new Error(`idle clients' worker exited with ${error}`));
    worker.once("error", failed);
    worker.once("exit", failed);
    worker.once("message", () => {
      worker.off("error", failed);
      worker.off("exit", failed);
      resolve();
    });
    worker.postMessage(message);
  });
}

/** Waits until what a server frees after its clients left is freed: the heap after GC stops shrinking (by 1 KB per room), at most 20 s. */
async function settledKb(rooms: number): Promise<number> {
  let last = heapKb();
  for (let i = 0; i < 20; i++) {
    await sleep(1000);
    const now = heapKb();
    if (now > last - rooms) return now;
    last = now;
  }
  return last;
}

/**
 * Memory per idle room, one server at a time: the servers run in this
 * thread, `rooms.length` rooms get 3 clients each from a worker thread, and
 * the main heap's growth (after two GCs, 1 s after the last client synced)
 * is divided by the rooms. Each phase starts once the previous one's rooms
 * are freed (see settledKb), so one server's freeing never lands in another's
 * figure.
 */
async function memoryPerRoom(
  worker: Worker,
  base: string,
  rooms: string[],
  params: Record<string, string>,
  seed?: Uint8Array,
): Promise<number> {
  const before = await settledKb(rooms.length);
  await ask(worker, { open: { base, rooms, params, seed } });
  await sleep(1000);
  const after = heapKb();
  await ask(worker, { close: true });
  return (after - before) / rooms.length;
}

/**
 * An agent's `sections` update sent as MCP `tools/call` over HTTP while an open
 * editor types into the same text (a keystroke every 10 ms); the latency is
 * from sending the call until the editor's Y.Text holds the written words (the
 * call's answer is not waited for). Sorted, one per write.
 */
async function apiWriteToEditor(
  httpBase: string,
  liveBase: string,
  token: string,
  target: { documentId: string; sectionIds: string[] },
  textOf: (doc: Y.Doc) => Y.Text,
): Promise<number[]> {
  const sectionId = target.sectionIds[0]!;
  const editor = await connect(liveBase, `${target.documentId}/main/~${sectionId}`, { token }, textOf);
  const agent = new McpClient({ name: "quire-bench", version: "1.0.0" });
  await agent.connect(
    new StreamableHTTPClientTransport(new URL(`${httpBase}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  let typing = true;
  const typed = (async () => {
    while (typing) {
      textOf(editor.doc).insert(0, "k");
      await sleep(10);
    }
  })();
  const latencies: number[] = [];
  try {
    for (let i = 0; i < API_WRITES; i++) {
      const words = `Written by the agent, call ${i}.`;
      const arrived = new Promise<number>((resolve) => {
        const text = textOf(editor.doc);
        const check = () => {
          if (text.toString().includes(words)) {
            text.unobserve(check);
            resolve(performance.now());
          }
        };
        text.observe(check);
      });
      const sent = performance.now();
      const answered = agent.callTool({
        name: "sections",
        arguments: {
          action: "update",
          documentId: target.documentId,
          branchName: "main",
          sectionId,
          newContent: [{ blockType: "text", text: words }],
        },
      });
      // A refused write never arrives: stop on the refusal instead of waiting for ever.
      const refused = answered.then((answer) =>
        answer.isError ? Promise.reject(new Error(`the agent's write was refused: ${JSON.stringify(answer.content)}`)) : arrived,
      );
      latencies.push((await Promise.race([arrived, refused])) - sent);
      await answered;
      await sleep(100);
    }
  } finally {
    typing = false;
    await typed;
    await agent.close();
    close([editor]);
  }
  return latencies.sort((a, b) => a - b);
}

async function startReference(): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => res.end("reference"));
  const sockets = new WebSocketServer({ server });
  sockets.on("connection", (ws, req) => setupWSConnection(ws, req));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

async function main(): Promise<void> {
  // Every y-websocket provider adds a process exit listener; hundreds of clients are expected here.
  process.setMaxListeners(0);
  const name = `quire_bench_live_${randomBytes(4).toString("hex")}`;
  const { database, drop } = await scratchDatabase(name);
  const uploads = `${os.tmpdir()}/${name}`;
  const quire = await startServer({ database, port: 0, host: "127.0.0.1", objectStore: new LocalObjectStore(uploads), next: false });
  const reference = await startReference();
  try {
    const { user } = await addUser(
      database.db,
      { email: "bench@example.test", name: "Bench", password: "correct horse battery" },
      new Date(),
    );
    const { token } = await issueApiToken(database.db, { email: "bench@example.test", label: "bench" }, new Date());
    const actor = (await actorForUser(database.db, user.id, "person"))!;
    const ctx = { db: database.db, actor, clock: () => new Date(), files: quire.files, live: quire.live };
    const create = (path: string, count: number) =>
      runTool(tools.documents, ctx, {
        action: "create",
        path,
        sections: Array.from({ length: count }, (_, i) => ({
          name: `Section ${i + 1}`,
          content: [{ blockType: "text", text: `Text of section ${i + 1}.` }],
        })),
      }) as Promise<{ documentId: string; sectionIds: string[] }>;
    const quireBase = `${quire.url.replace(/^http/, "ws")}/collab`;
    const params = { token };
    const sectionText = (doc: Y.Doc) => (doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text;
    const plainText = (doc: Y.Doc) => doc.getText("t");

    log(
      `machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, Node ${process.version}, load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
    if (!MEMORY_ONLY) {
      log(`\n## Keystroke to peer: ${CLIENTS} clients, ${RATE} edits/s, ${ROUNDS} rounds of ${SECONDS} s each`);
      const live = await create("bench/live", 1);
      const room = `${live.documentId}/main/~${live.sectionIds[0]}`;
      // Alternating rounds, so neither server runs only while the clients' code is still being optimised or the box is busier.
      const quireLatency: number[] = [];
      const referenceLatency: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        quireLatency.push(...(await measureLatency(quireBase, room, params, "section", round)));
        referenceLatency.push(...(await measureLatency(reference.url, "bench-room", {}, "plain", round)));
      }
      quireLatency.sort((a, b) => a - b);
      referenceLatency.sort((a, b) => a - b);
      const row = (label: string, l: number[]) =>
        log(`| ${label} | ${l.length} | ${percentile(l, 50).toFixed(2)} | ${percentile(l, 99).toFixed(2)} | ${l.at(-1)?.toFixed(2)} |`);
      log("| server | deliveries | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|");
      row("Quire (broadcast on arrival, stored behind)", quireLatency);
      row("@y/websocket-server (memory)", referenceLatency);
      log(
        `ratio Quire / reference: p50 ${(percentile(quireLatency, 50) / percentile(referenceLatency, 50)).toFixed(2)}x, p99 ${(percentile(quireLatency, 99) / percentile(referenceLatency, 99)).toFixed(2)}x`,
      );
      const windows = quire.rooms.durabilityWindows;
      const stored = windows.sorted();
      log(
        `durability window (update applied and broadcast → stored in PostgreSQL), ${windows.count} updates: p50 ${percentile(stored, 50).toFixed(2)} ms, p99 ${percentile(stored, 99).toFixed(2)} ms, max ${windows.max.toFixed(2)} ms`,
      );

      log(`\n## MCP write to an open editor typing in the same text: ${API_WRITES} writes`);
      const apiLatency = await apiWriteToEditor(quire.url, quireBase, token, await create("bench/api", 1), sectionText);
      log(
        `update (tools/call over HTTP → in the editor's Y.Text): p50 ${percentile(apiLatency, 50).toFixed(1)} ms, p99 ${percentile(apiLatency, 99).toFixed(1)} ms, max ${apiLatency.at(-1)!.toFixed(1)} ms`,
      );
    }

    log(`\n## Memory per idle room: ${IDLE_ROOMS} rooms x 3 clients (the servers' heap + external + array buffers; clients in a worker)`);
    // A Quire section room's content (one text block): the reference's rooms are measured empty and holding it.
    const seedSection = await create("bench/idle-seed", 1);
    const seedClient = await connect(quireBase, `${seedSection.documentId}/main/~${seedSection.sectionIds[0]}`, params, sectionText);
    const seed = Y.encodeStateAsUpdate(seedClient.doc);
    close([seedClient]);
    const worker = new Worker(IDLE_WORKER, { eval: true });
    const passes: Array<{ quire: number; empty: number; same: number }> = [];
    try {
      // Twice: the first pass also pays for code compiled on the way; the second (warm) is the figure.
      for (let pass = 0; pass < 2; pass++) {
        const idle = await create(`bench/idle-${pass}`, IDLE_ROOMS);
        const quireRooms = idle.sectionIds.map((id) => `${idle.documentId}/main/~${id}`);
        const quireKb = await memoryPerRoom(worker, quireBase, quireRooms, params);
        // New names each phase: the reference keeps a room's doc after its clients leave (it has no persistence to write it to).
        const referenceRooms = (kind: string) => quireRooms.map((_, i) => `idle-${pass}-${kind}-${i}`);
        const emptyKb = await memoryPerRoom(worker, reference.url, referenceRooms("empty"), {});
        const sameKb = await memoryPerRoom(worker, reference.url, referenceRooms("same"), {}, seed);
        passes.push({ quire: quireKb, empty: emptyKb, same: sameKb });
      }
    } finally {
      await worker.terminate();
    }
    log(
      "| pass | Quire KB/room | reference, rooms empty | ratio | reference, rooms holding the section's content | ratio |\n|---|---|---|---|---|---|",
    );
    for (const [i, p] of passes.entries())
      log(
        `| ${i === 0 ? "first" : "warm"} | ${p.quire.toFixed(1)} | ${p.empty.toFixed(1)} | ${(p.quire / p.empty).toFixed(2)}x | ${p.same.toFixed(1)} | ${(p.quire / p.same).toFixed(2)}x |`,
      );
    if (!MEMORY_ONLY) {
      log(`\n## Opening a room on a ${BIG_DOCUMENT_SECTIONS}-section document`);
      const big = await create("bench/big", BIG_DOCUMENT_SECTIONS);
      const opens: Array<{ outline: number; section: number }> = [];
      for (let i = 0; i < 7; i++) {
        const started = performance.now();
        const outline = await connect(quireBase, `${big.documentId}/main`, params, plainText);
        const outlineMs = performance.now() - started;
        const sectionStarted = performance.now();
        const section = await connect(quireBase, `${big.documentId}/main/~${big.sectionIds[i * 100]}`, params, sectionText);
        opens.push({ outline: outlineMs, section: performance.now() - sectionStarted });
        close([outline, section]);
        await sleep(200);
      }
      const outlineTimes = opens.map((o) => o.outline);
      const sectionTimes = opens.map((o) => o.section).sort((a, b) => a - b);
      log(
        `outline (connect + sync, ${BIG_DOCUMENT_SECTIONS} ids): first ${outlineTimes[0]!.toFixed(1)} ms, median ${percentile(
          [...outlineTimes].sort((a, b) => a - b),
          50,
        ).toFixed(1)} ms`,
      );
      log(
        `section room (first open of a section: draft created, stored, synced): median ${percentile(sectionTimes, 50).toFixed(1)} ms, max ${sectionTimes.at(-1)!.toFixed(1)} ms`,
      );
    }
  } finally {
    await quire.close();
    reference.server.close();
    await drop();
  }
}

await main();
process.exit(0);
