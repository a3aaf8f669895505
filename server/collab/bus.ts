/**
 * Rooms across processes (QUIRE_REDIS_URL): every stored update and every
 * awareness change of a section room is published on one Redis channel and
 * applied by the processes that have that section open; a Redis lock lets
 * one process at a time compact a section's draft.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import type { SectionKey } from "@/server/store/drafts";

export interface BusMessage extends SectionKey {
  kind: "update" | "awareness";
  payload: Uint8Array;
}

export interface CollabBus {
  publish(message: BusMessage): Promise<void>;
  /** Receives other processes' messages (never this process's own); resolves to an unsubscribe. */
  subscribe(onMessage: (message: BusMessage) => void): Promise<() => Promise<void>>;
  /** Takes a lock held at most a minute; resolves to its release, or null when another process holds it. */
  lock(name: string): Promise<(() => Promise<void>) | null>;
  close(): Promise<void>;
}

const CHANNEL = "quire:collab";
const LOCK_MS = 60_000;

/** Frame: JSON header line (sender, key, kind) + newline + the raw Yjs bytes. */
function encode(sender: string, message: BusMessage): Buffer {
  const header = JSON.stringify({ s: sender, d: message.documentId, b: message.branchName, c: message.sectionId, k: message.kind });
  return Buffer.concat([Buffer.from(`${header}\n`), message.payload]);
}

function decode(frame: Buffer): { sender: string; message: BusMessage } | null {
  const newline = frame.indexOf(10);
  if (newline < 0) return null;
  try {
    const h = JSON.parse(frame.subarray(0, newline).toString("utf8")) as {
      s: string;
      d: string;
      b: string;
      c: string;
      k: BusMessage["kind"];
    };
    const payload = new Uint8Array(frame.subarray(newline + 1));
    return { sender: h.s, message: { documentId: h.d, branchName: h.b, sectionId: h.c, kind: h.k, payload } };
  } catch {
    return null;
  }
}

export async function connectRedisBus(url: string): Promise<CollabBus> {
  const processId = randomUUID();
  const publisher = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 3 });
  const subscriber = new Redis(url, { lazyConnect: true });
  await Promise.all([publisher.connect(), subscriber.connect()]);
  return {
    async publish(message) {
      await publisher.publish(CHANNEL, encode(processId, message));
    },
    async subscribe(onMessage) {
      const listener = (_channel: Buffer, frame: Buffer) => {
        const decoded = decode(frame);
        if (decoded && decoded.sender !== processId) onMessage(decoded.message);
      };
      subscriber.on("messageBuffer", listener);
      await subscriber.subscribe(CHANNEL);
      return async () => {
        subscriber.off("messageBuffer", listener);
        await subscriber.unsubscribe(CHANNEL);
      };
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
      subscriber.disconnect();
      await publisher.quit();
    },
  };
}
