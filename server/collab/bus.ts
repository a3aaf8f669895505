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
  /**
   * A Yjs update or awareness change of a section; "head-moved": the branch
   * head moved (no section, no payload); "catch-up": a process started, and
   * its previous run may have died between storing updates and publishing
   * them — every open room takes in what storage has (no key, no payload).
   */
  kind: "update" | "awareness" | "head-moved" | "catch-up";
  payload: Uint8Array;
}

export interface CollabBus {
  publish(message: BusMessage): Promise<void>;
  /** Receives other processes' messages (never this process's own); resolves to an unsubscribe. */
  subscribe(onMessage: (message: BusMessage) => void): Promise<() => Promise<void>>;
  /** Records who this process has connected to a branch's rooms (an empty list clears it). */
  setPresence(documentId: string, branchName: string, userIds: readonly string[]): Promise<void>;
  /** Users connected to a document's rooms in any process, per branch (entries not refreshed within PRESENCE_TTL_MS are ignored). */
  presence(documentId: string): Promise<Map<string, string[]>>;
  /** Takes a lock held at most a minute; resolves to its release, or null when another process holds it. */
  lock(name: string): Promise<(() => Promise<void>) | null>;
  close(): Promise<void>;
}

const CHANNEL = "quire:collab";
const LOCK_MS = 60_000;
/** A process refreshes its presence entries more often than this; a dead process's entries stop counting after it. */
export const PRESENCE_TTL_MS = 60_000;
const presenceKey = (documentId: string) => `quire:presence:${documentId}`;

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
      subscriber.disconnect();
      await publisher.quit();
    },
  };
}
