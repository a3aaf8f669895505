/**
 * Head moves into live rooms (issue 22, item 3): what applying a committed
 * change into a section's live doc costs on the event loop, for random texts
 * of 5,000, 20,000 and 1,000,000 characters.
 *
 *   npx tsx bench/head-move-cost.ts
 *
 * In process (no database): `applySectionChange` on a copy of the live doc,
 * as `rebaseSection` runs it, for a rewrite (an unrelated random text), 1
 * scattered edit per 2,000 characters, the same with 1 live edit per 20,000
 * characters typed since the base, and a discard of a 10,000-character paste
 * (the live text back to the committed one).
 *
 * End to end: a real server and a y-websocket client in the section's room;
 * an MCP `sections update` writing the random text, and a 10,000-character
 * paste thrown away by `documents discard`, each timed from the call to the
 * client holding the result, with the server's longest event-loop stall
 * meanwhile (`monitorEventLoopDelay`; the server runs in this process).
 *
 * Environment (all optional):
 *   DATABASE_URL       PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
 *                      the bench creates and drops its own database quire_bench_headmove_* there.
 *   BENCH_SIZES        comma-separated text lengths (default 5000,20000,1000000)
 *   BENCH_RUNS=7       timed runs per in-process case (after one warm-up)
 *   BENCH_CODEC        another codec module to time in process instead (the tree before the fix:
 *                      `git show 134f685:server/collab/codec.ts > /tmp/codec-before.ts`); skips end to end
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import WebSocket from "ws";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import type * as Codec from "@/server/collab/codec";
import { startServer } from "@/server/http/server";
import { scratchDatabase } from "./scratch-database";
import { LocalObjectStore } from "@/server/storage/local";

const SIZES = (process.env.BENCH_SIZES ?? "5000,20000,1000000").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const PASTE_LENGTH = 10_000;

const log = (...args: unknown[]) => console.log(...args);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (value: number) => value.toFixed(1);

let seed = 22;
function randomText(length: number, alphabet = "abcdefghijklmnopqrstuvwxyz "): string {
  const units = new Array<string>(length);
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    units[i] = alphabet[Math.floor((seed / 2 ** 32) * alphabet.length)]!;
  }
  return units.join("");
}

/** `text` with one edit (up to 8 characters replaced by 1-8 random ones) every `every` characters. */
function scattered(text: string, every: number, alphabet?: string): string {
  const parts: string[] = [];
  for (let at = 0; at < text.length; at += every) parts.push(text.slice(at, at + every - 8), randomText(1 + (seed % 8), alphabet));
  return parts.join("");
}

const section = (text: string): Codec.LiveSection => ({ name: "Bench", content: [{ blockType: "text", text }] });

/** Milliseconds of `applySectionChange(base → next)` on a copy of a doc holding `live`, median and max of `RUNS`. */
function timeApply(codec: typeof Codec, base: string, live: string, next: string): { median: number; max: number } {
  const doc = new Y.Doc();
  codec.sectionIntoYDoc(doc, section(live));
  const state = Y.encodeStateAsUpdate(doc);
  const times: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const copy = new Y.Doc();
    Y.applyUpdate(copy, state);
    const started = performance.now();
    codec.applySectionChange(copy, section(base), section(next));
    const elapsed = performance.now() - started;
    if (run > 0) times.push(elapsed);
    copy.destroy();
  }
  return { median: median(times), max: Math.max(...times) };
}

function inProcess(codec: typeof Codec): void {
  log("\n## In process: applySectionChange, milliseconds, median / max");
  log(
    "| characters | rewrite | scattered edits | scattered + live edits | discard of a 10,000-character paste |\n|---:|---:|---:|---:|---:|",
  );
  for (const size of SIZES) {
    const base = randomText(size);
    const live = scattered(base, 20_000, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    const pasted = base.slice(0, size / 2) + randomText(PASTE_LENGTH) + base.slice(size / 2);
    const cells = [
      timeApply(codec, base, base, randomText(size)),
      timeApply(codec, base, base, scattered(base, 2_000)),
      timeApply(codec, base, live, scattered(base, 2_000)),
      timeApply(codec, pasted, pasted, base),
    ].map((t) => `${ms(t.median)} / ${ms(t.max)}`);
    log(`| ${size.toLocaleString("en")} | ${cells.join(" | ")} |`);
  }
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Wall time of `operation` and the event loop's longest stall while it ran. */
async function measured(operation: () => Promise<unknown>): Promise<{ wall: number; stall: number }> {
  const delay = monitorEventLoopDelay({ resolution: 2 });
  delay.enable();
  const started = performance.now();
  await operation();
  const wall = performance.now() - started;
  delay.disable();
  return { wall, stall: delay.max / 1e6 };
}

async function endToEnd(): Promise<void> {
  const name = `quire_bench_headmove_${randomBytes(4).toString("hex")}`;
  const { database, drop } = await scratchDatabase(name);
  const quire = await startServer({
    database,
    port: 0,
    host: "127.0.0.1",
    objectStore: new LocalObjectStore(`${os.tmpdir()}/${name}`),
    next: false,
  });
  const mcp = new McpClient({ name: "bench", version: "1.0.0" });
  const providers: WebsocketProvider[] = [];
  try {
    await addUser(database.db, { email: "bench@example.test", name: "Bench", password: "correct horse battery" }, new Date());
    const { token } = await issueApiToken(database.db, { email: "bench@example.test", label: "bench" }, new Date());
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${quire.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const call = async (tool: string, args: Record<string, unknown>) => {
      const result = await mcp.callTool({ name: tool, arguments: args });
      if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
      return result.structuredContent as Record<string, unknown>;
    };
    /** A document whose one section holds `text`, with a synced client in its room. */
    const open = async (path: string, text: string) => {
      const created = (await call("documents", {
        action: "create",
        path,
        sections: [{ name: "Bench", content: [{ blockType: "text", text }] }],
      })) as {
        documentId: string;
        sectionIds: string[];
      };
      const doc = new Y.Doc();
      const provider = new WebsocketProvider(
        `${quire.url.replace(/^http/, "ws")}/collab`,
        `${created.documentId}/main/~${created.sectionIds[0]}`,
        doc,
        {
          WebSocketPolyfill: WebSocket as unknown as typeof globalThis.WebSocket,
          params: { token },
          disableBc: true,
        },
      );
      providers.push(provider);
      await waitFor(() => provider.synced, "sync");
      const clientText = () => (doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text;
      return { documentId: created.documentId, sectionId: created.sectionIds[0]!, clientText };
    };

    log("\n## End to end: MCP write or discard → the client holds the result; the server's longest event-loop stall meanwhile");
    log("| case | call to client, ms | longest stall, ms |\n|---|---:|---:|");
    const room = await open("bench/writes", randomText(2_000));
    for (const size of SIZES) {
      const written = randomText(size);
      const { wall, stall } = await measured(async () => {
        await call("sections", {
          action: "update",
          documentId: room.documentId,
          branchName: "main",
          sectionId: room.sectionId,
          newContent: [{ blockType: "text", text: written }],
        });
        await waitFor(() => room.clientText().toString() === written, "the write in the client");
      });
      log(`| \`sections update\` writing ${size.toLocaleString("en")} random characters | ${ms(wall)} | ${ms(stall)} |`);
    }
    const committed = randomText(20_000);
    const pasteRoom = await open("bench/discard", committed);
    pasteRoom.clientText().insert(committed.length / 2, randomText(PASTE_LENGTH));
    const pasted = pasteRoom.clientText().toString();
    for (;;) {
      const draft = (await call("read", { documentId: pasteRoom.documentId, includeDraft: true })) as {
        sections: Array<{ content: Array<{ text: string }> }>;
      };
      if (draft.sections[0]!.content[0]!.text === pasted) break;
    }
    const { wall, stall } = await measured(async () => {
      await call("documents", { action: "discard", documentId: pasteRoom.documentId, branchName: "main" });
      await waitFor(() => pasteRoom.clientText().toString() === committed, "the discard in the client");
    });
    log(`| 10,000-character paste into 20,000, then \`documents discard\` | ${ms(wall)} | ${ms(stall)} |`);
  } finally {
    for (const provider of providers) provider.destroy();
    await mcp.close();
    await quire.close();
    await drop();
  }
}

async function main(): Promise<void> {
  log(
    `machine: ${os.cpus().length} cores, ${os.cpus()[0]?.model}, Node ${process.version}, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  const alternative = process.env.BENCH_CODEC;
  const codec: typeof Codec = alternative ? await import(alternative) : await import("@/server/collab/codec");
  if (alternative) log(`codec: ${alternative}`);
  inProcess(codec);
  if (!alternative) await endToEnd();
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
