/**
 * The sync core's own work per message (issue 28), in process, no sockets:
 * a connection's keystroke through `LiveDoc.receive` with the section rules
 * on (decoded, judged, applied, broadcast to two peers), a presence message
 * with a cursor (stamped, applied, broadcast), and the same two as another
 * process publishes them (`applyRemote`, `applyRemoteAwareness`: applied and
 * broadcast). What scale-out.ts measures end to end includes this, plus
 * sockets, Redis and PostgreSQL.
 *
 *   node --import tsx bench/live-message-cost.ts
 *
 * Environment (all optional):
 *   BENCH_MESSAGES=20000   messages of each kind per run
 *   BENCH_RUNS=5           runs of each kind (the median is reported)
 *   BENCH_BLOCK_CHARS=300  characters of the paragraph typed into (it grows by one per keystroke)
 *   BENCH_BLOCKS=2         blocks in the section (the paragraph, then short ones)
 */
import * as encoding from "lib0/encoding";
import * as awarenessProtocol from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import * as Y from "yjs";
import { sectionIntoYDoc, textBlockIn } from "@/server/collab/codec";
import { type LiveConnection, LiveDoc } from "@/server/collab/live-doc";
import { stampAwarenessUpdate } from "@/server/collab/presence";

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 20_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const BLOCK_CHARS = Number(process.env.BENCH_BLOCK_CHARS ?? 300);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 2);
const USER_ID = "0b7d3a52-1f7e-4d8e-9a51-5a3f9c2f4d10";

function connection(name: string): LiveConnection {
  return {
    send() {},
    readOnly: false,
    authorId: USER_ID,
    agent: null,
    droppedUpdates: 0,
    presence: { userId: USER_ID, name },
    typist: { userId: USER_ID, mayUseKey: () => false },
    refused(reason) {
      throw new Error(`refused: ${reason}`);
    },
    pause() {},
    resume() {},
  };
}

function room() {
  const seed = new Y.Doc();
  const paragraph = "Some paragraph text of a plain kind. ".repeat(Math.ceil(BLOCK_CHARS / 37)).slice(0, BLOCK_CHARS);
  sectionIntoYDoc(seed, {
    name: "Bench",
    content: [
      { blockType: "text", text: paragraph },
      ...Array.from({ length: BLOCKS - 1 }, () => ({ blockType: "text" as const, text: "Another." })),
    ],
  });
  const live = new LiveDoc([Y.encodeStateAsUpdate(seed)], { store: async () => {} }, { sectionRules: true });
  const typist = connection("Typist");
  for (const each of [typist, connection("Peer one"), connection("Peer two")]) live.connect(each);
  return { seed, live, typist };
}

const message = (type: number, write: (encoder: encoding.Encoder) => void) => {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, type);
  write(encoder);
  return encoding.toUint8Array(encoder);
};

/** Keystrokes typed forward through the paragraph, as a client's updates (made before the clock starts). */
function keystrokes(seed: Y.Doc): Uint8Array[] {
  const client = new Y.Doc();
  Y.applyUpdate(client, Y.encodeStateAsUpdate(seed));
  const out: Uint8Array[] = [];
  client.on("update", (update: Uint8Array) => out.push(update));
  for (let i = 0; i < MESSAGES; i++) textBlockIn(client, 0)!.insert(10 + (i % BLOCK_CHARS), "x");
  return out;
}

/** A client's presence with its cursor moving, as y-codemirror.next publishes it (made before the clock starts). */
function presences(): Uint8Array[] {
  const doc = new Y.Doc();
  const awareness = new awarenessProtocol.Awareness(doc);
  const out: Uint8Array[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    const position = { type: { client: 1, clock: 2 }, tname: null, item: { client: doc.clientID, clock: i }, assoc: 0 };
    awareness.setLocalState({
      user: { name: "Typist", color: "#30bced", colorLight: "#30bced33" },
      cursor: { anchor: position, head: position },
    });
    out.push(awarenessProtocol.encodeAwarenessUpdate(awareness, [doc.clientID]));
  }
  awareness.destroy();
  return out;
}

const KINDS = ["keystroke", "presence", "another process's keystroke", "another process's presence"] as const;
type Kind = (typeof KINDS)[number];

/** What each kind hands the room (made before the clock starts), and how. */
function deliveries(kind: Kind, seed: Y.Doc, live: LiveDoc, typist: LiveConnection) {
  const fromTypist = (m: Uint8Array) => live.receive(typist, m);
  switch (kind) {
    case "keystroke":
      return { inputs: keystrokes(seed).map((u) => message(0, (e) => syncProtocol.writeUpdate(e, u))), deliver: fromTypist };
    case "presence":
      return { inputs: presences().map((u) => message(1, (e) => encoding.writeVarUint8Array(e, u))), deliver: fromTypist };
    case "another process's keystroke":
      return { inputs: keystrokes(seed), deliver: (u: Uint8Array) => live.applyRemote(u) };
    case "another process's presence":
      // Stamped where it was typed, as the other process publishes it.
      return {
        inputs: presences().map((u) => stampAwarenessUpdate(u, { userId: USER_ID, name: "Elsewhere" }, () => true)!),
        deliver: (u: Uint8Array) => live.applyRemoteAwareness(u),
      };
  }
}

function timeRun(kind: Kind): number {
  const { seed, live, typist } = room();
  const { inputs, deliver } = deliveries(kind, seed, live, typist);
  const started = performance.now();
  for (const each of inputs) deliver(each);
  const microseconds = ((performance.now() - started) * 1000) / inputs.length;
  live.destroy();
  return microseconds;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

for (const kind of KINDS) {
  const runs = Array.from({ length: RUNS }, () => timeRun(kind));
  console.log(
    `${kind}: median ${median(runs).toFixed(2)} µs per message (runs: ${runs.map((r) => r.toFixed(2)).join(", ")}; ${MESSAGES} messages each)`,
  );
}
