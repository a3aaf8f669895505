/**
 * Rooms across processes (QUIRE_REDIS_URL): the updates and awareness
 * changes of a section room held open in several processes are published on
 * one Redis channel and applied by the others (fan-out.ts says when a room
 * is shared); a Redis lock lets one process at a time compact a section's
 * draft.
 *
 * Messages published in one turn of the event loop go out together (a
 * frame: the sender's id, then the messages), so an edit and its author's
 * cursor, and the acknowledgements riding with them, cost one Redis command.
 * A message goes to every process (the channel all subscribe to) or to the
 * processes it names, each on its own channel: a room's traffic reaches only
 * the processes holding that room, and never comes back to its sender (who
 * would receive it only to skip it). A frame starts with the sender's 16-byte
 * id: a process skips its own frames coming back on the shared channel
 * before decoding anything. One sender's messages reach every receiver in
 * the order they were published: a turn's messages go out as runs of the
 * same destination, one frame per run, in order, and Redis delivers one
 * connection's PUBLISHes in order.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import type { SectionKey } from "@/server/store/drafts";
import { encode } from "./encode";

export interface BusMessage extends SectionKey {
  /**
   * "update": a Yjs update of a section; "awareness": its presence change;
   * "stored": the sender stored the updates it published before storing
   * (`payload`: their sequence numbers, no key); "head-moved": the branch
   * head moved (no section, no payload); "catch-up": a process started, and
   * its previous run may have died before storing or publishing updates —
   * every open room takes in what storage has (no key, no payload);
   * "opened": the sender opened the section's room (`payload`: its doc's
   * state vector), so the processes holding it send what it lacks and from
   * then on their traffic of it; "held": the answer of one that holds it
   * (`payload`: its state vector, for the opener to send what it lacks);
   * "closed": the sender's room of the section closed (no payload);
   * "settle": the sender is about to read a document's draft (of one branch,
   * or of every branch when `branchName` is empty) from storage, and every
   * process answers "settled" once what its rooms of it applied is stored
   * (`payload`: the request's number, no key on the answer).
   */
  kind: "update" | "awareness" | "stored" | "head-moved" | "catch-up" | "opened" | "held" | "closed" | "settle" | "settled";
  payload: Uint8Array;
  /**
   * An update published on arrival, before the sender stored it: its number
   * in the sender (a later "stored" message names it) and its author. A
   * receiver that never hears it was stored stores it itself (fan-out.ts).
   */
  unstored?: { seq: number; authorId: string | null };
}

export interface CollabBus {
  /**
   * Queues a message for every process, or for the processes `to` names (by
   * the ids `subscribe` hands over; kept as given, not copied, until the
   * turn's frames go out): the ones published in the same turn of the event
   * loop go out together, in order. Resolves to the number of subscribers it
   * reached (for every process, this process's own subscription among them).
   */
  publish(message: BusMessage, to?: readonly string[]): Promise<number>;
  /**
   * Receives other processes' messages (never this process's own), those
   * for every process and those for this one, with their sender's id.
   * `heard` runs first for every frame, the empty ones of `beat` too, with
   * its sender's id; `resubscribed` when the subscription is back
   * after a lost connection to Redis (messages published meanwhile never
   * arrive). Resolves to an unsubscribe.
   */
  subscribe(handlers: {
    message(message: BusMessage, sender: string): void;
    heard?(sender: string): void;
    resubscribed?(): void;
  }): Promise<() => Promise<void>>;
  /**
   * Says this process is alive, to every process: a frame of no messages,
   * unless a frame for every process goes out this turn anyway. (A process
   * of an earlier version decodes it to nothing.)
   */
  beat(): void;
  /** Records who this process has connected to a branch's rooms (an empty list clears it). */
  setPresence(documentId: string, branchName: string, userIds: readonly string[]): Promise<void>;
  /** Users connected to a document's rooms in any process, per branch (entries not refreshed within PRESENCE_TTL_MS are ignored). */
  presence(documentId: string): Promise<Map<string, string[]>>;
  /** Takes a lock held at most a minute; resolves to its release, or null when another process holds it. */
  lock(name: string): Promise<(() => Promise<void>) | null>;
  close(): Promise<void>;
}

const CHANNEL = "quire:collab";
/** The channel of the process with this id (hex, as `subscribe` hands it over). */
const channelOf = (processId: string) => `${CHANNEL}:${processId}`;
const LOCK_MS = 60_000;
/** A process refreshes its presence entries more often than this; a dead process's entries stop counting after it. */
export const PRESENCE_TTL_MS = 60_000;
const presenceKey = (documentId: string) => `quire:presence:${documentId}`;

const KINDS: readonly BusMessage["kind"][] = [
  "update",
  "awareness",
  "stored",
  "head-moved",
  "catch-up",
  "opened",
  "held",
  "closed",
  "settle",
  "settled",
];
const SENDER_BYTES = 16;
/** An `unstored` update's author when it has none (a share-link visitor): user ids are UUIDs, never empty. */
const NO_AUTHOR = "";

/** Frame: the sender's 16 bytes, then per message its kind, key, payload and (an unstored update) its number and author. */
export function encodeFrame(sender: Uint8Array, messages: readonly BusMessage[]): Buffer {
  const frame = encode((encoder) => {
    encoding.writeUint8Array(encoder, sender);
    for (const message of messages) {
      encoding.writeVarUint(encoder, KINDS.indexOf(message.kind) * 2 + (message.unstored ? 1 : 0));
      encoding.writeVarString(encoder, message.documentId);
      encoding.writeVarString(encoder, message.branchName);
      encoding.writeVarString(encoder, message.sectionId);
      encoding.writeVarUint8Array(encoder, message.payload);
      if (message.unstored) {
        encoding.writeVarUint(encoder, message.unstored.seq);
        encoding.writeVarString(encoder, message.unstored.authorId ?? NO_AUTHOR);
      }
    }
  });
  return Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
}

/** The messages of a frame; null for bytes that are not one (nothing of a bad frame is applied). */
export function decodeFrame(frame: Uint8Array): BusMessage[] | null {
  try {
    const decoder = decoding.createDecoder(frame);
    decoding.readUint8Array(decoder, SENDER_BYTES);
    const messages: BusMessage[] = [];
    while (decoding.hasContent(decoder)) {
      const tag = decoding.readVarUint(decoder);
      const kind = KINDS[tag >> 1];
      if (!kind) return null;
      const message: BusMessage = {
        kind,
        documentId: decoding.readVarString(decoder),
        branchName: decoding.readVarString(decoder),
        sectionId: decoding.readVarString(decoder),
        payload: decoding.readVarUint8Array(decoder),
      };
      if (tag & 1) {
        const seq = decoding.readVarUint(decoder);
        const authorId = decoding.readVarString(decoder);
        message.unstored = { seq, authorId: authorId === NO_AUTHOR ? null : authorId };
      }
      messages.push(message);
    }
    return messages;
  } catch {
    return null;
  }
}

/** A turn's run of messages for one destination: every process (null), or the processes named. */
interface Run {
  to: readonly string[] | null;
  messages: BusMessage[];
  /** Settles as the run's PUBLISHes do. */
  sent: Promise<number>;
  settle(publishing: Promise<number>): void;
}

const sameIds = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, i) => id === b[i]);

export async function connectRedisBus(url: string): Promise<CollabBus> {
  const processId = randomUUID();
  const senderBytes = Buffer.from(processId.replaceAll("-", ""), "hex");
  const publisher = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  // Named after the process, so Redis's CLIENT LIST tells an operator which process a subscription is.
  const subscriber = new Redis(url, { lazyConnect: true, connectionName: `quire-collab-subscriber-${process.pid}` });
  await Promise.all([publisher.connect(), subscriber.connect()]);
  const ownId = senderBytes.toString("hex");
  /** This turn's messages, as runs of one destination (null: every process), each with the promise its PUBLISHes settle. */
  let turn: Run[] | null = null;
  const publishTurn = () => {
    for (const run of turn ?? []) {
      const frame = encodeFrame(senderBytes, run.messages);
      run.settle(
        run.to === null
          ? publisher.publish(CHANNEL, frame)
          : Promise.all(run.to.map((id) => publishTo(id, frame))).then((reached) => reached.reduce((sum, each) => sum + each, 0)),
      );
    }
    turn = null;
  };
  /**
   * A frame for one process, on its channel; on the channel of every process
   * if that reached nobody (a process of an earlier version listens there
   * alone; a dead one is dropped by its peers within a few beats).
   */
  const publishTo = async (id: string, frame: Buffer): Promise<number> =>
    (await publisher.publish(channelOf(id), frame)) || publisher.publish(CHANNEL, frame);
  return {
    publish(message, to) {
      if (!turn) {
        turn = [];
        setImmediate(publishTurn);
      }
      const destination = to ?? null;
      const last = turn.at(-1);
      if (last && (last.to === destination || (last.to !== null && destination !== null && sameIds(last.to, destination)))) {
        last.messages.push(message);
        return last.sent;
      }
      let settle!: Run["settle"];
      const sent = new Promise<number>((resolve, reject) => {
        settle = (publishing) => publishing.then(resolve, reject);
      });
      turn.push({ to: destination, messages: [message], sent, settle });
      return sent;
    },
    beat() {
      if (turn?.some((run) => run.to === null)) return;
      // Not logged: while Redis is away this fails every few seconds, and the publishes that carry something say so.
      publisher.publish(CHANNEL, senderBytes).catch(() => undefined);
    },
    async subscribe(handlers) {
      const listener = (_channel: Buffer, frame: Buffer) => {
        // This process's own frame, back on the channel of every process: skipped before anything is decoded.
        if (frame.length < SENDER_BYTES || senderBytes.equals(frame.subarray(0, SENDER_BYTES))) return;
        const sender = frame.subarray(0, SENDER_BYTES).toString("hex");
        handlers.heard?.(sender);
        for (const message of decodeFrame(frame) ?? []) handlers.message(message, sender);
      };
      // After a reconnect ioredis subscribes again by itself; asking once more (a no-op for Redis) answers once that is done.
      const resubscribed = () =>
        void subscriber.subscribe(CHANNEL, channelOf(ownId)).then(
          () => handlers.resubscribed?.(),
          () => undefined,
        );
      subscriber.on("messageBuffer", listener);
      await subscriber.subscribe(CHANNEL, channelOf(ownId));
      subscriber.on("ready", resubscribed);
      return async () => {
        subscriber.off("messageBuffer", listener);
        subscriber.off("ready", resubscribed);
        await subscriber.unsubscribe(CHANNEL, channelOf(ownId));
      };
    },
    async setPresence(documentId, branchName, userIds) {
      const field = `${processId}\n${branchName}`;
      if (userIds.length === 0) await publisher.hdel(presenceKey(documentId), field);
      else {
        await publisher.hset(presenceKey(documentId), field, JSON.stringify({ at: Date.now(), userIds }));
        await publisher.pexpire(presenceKey(documentId), PRESENCE_TTL_MS);
      }
    },
    async presence(documentId) {
      const byBranch = new Map<string, Set<string>>();
      for (const [field, value] of Object.entries(await publisher.hgetall(presenceKey(documentId)))) {
        const entry = JSON.parse(value) as { at: number; userIds: string[] };
        if (Date.now() - entry.at > PRESENCE_TTL_MS) continue;
        const branchName = field.slice(field.indexOf("\n") + 1);
        const users = byBranch.get(branchName) ?? new Set<string>();
        for (const id of entry.userIds) users.add(id);
        byBranch.set(branchName, users);
      }
      return new Map([...byBranch].map(([branch, users]) => [branch, [...users].sort()]));
    },
    async lock(name) {
      const key = `quire:lock:${name}`;
      const owner = randomUUID();
      if ((await publisher.set(key, owner, "PX", LOCK_MS, "NX")) !== "OK") return null;
      return async () => {
        // Released only by its owner (a lock that expired and was taken by another process stays theirs).
        await publisher.eval(
          "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
          1,
          key,
          owner,
        );
      };
    },
    async close() {
      // What was queued goes out first (the rooms' "closed" of a process shutting down among it).
      await Promise.all((turn ?? []).map((run) => run.sent.catch(() => undefined)));
      subscriber.disconnect();
      await publisher.quit();
    },
  };
}
