/**
 * The collab bus (server/collab/bus.ts) on a real Redis: a message for some
 * processes reaches them alone, on their own channels, in the order its
 * sender published it among the messages for every process; its sender
 * never gets it back; and a frame for a process that listens on no channel
 * of its own (one of an earlier version) goes to every process instead.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, expect, test } from "vitest";
import { type BusMessage, type CollabBus, connectRedisBus, decodeFrame } from "@/server/collab/bus";
import { waitFor } from "../helpers/collab";

const REDIS_URL = "redis://127.0.0.1:6379";
/** Other test files' processes share the channels: only this test's document counts. */
const key = { documentId: randomUUID(), branchName: "main", sectionId: "notes" };
const update = (n: number): BusMessage => ({ ...key, kind: "update", payload: new Uint8Array([n]) });

const closing: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const close of closing.splice(0)) await close();
});

/** A bus, and what it received of this test's document: each update's number with its sender. */
async function startProcess(): Promise<{ bus: CollabBus; received: Array<{ n: number; sender: string }> }> {
  const bus = await connectRedisBus(REDIS_URL);
  const received: Array<{ n: number; sender: string }> = [];
  const unsubscribe = await bus.subscribe({
    message: (message, sender) => {
      if (message.documentId === key.documentId) received.push({ n: message.payload[0]!, sender });
    },
  });
  closing.push(async () => {
    await unsubscribe();
    await bus.close();
  });
  return { bus, received };
}

test("a message for one process reaches it alone, in order with those for every process, never its sender, and falls back to every process when nobody listens on its channel", async () => {
  const [a, b, c] = [await startProcess(), await startProcess(), await startProcess()];
  // What goes over the channel of every process (as a process of an earlier version hears it).
  const shared: number[] = [];
  const listener = new Redis(REDIS_URL);
  closing.push(async () => listener.disconnect());
  listener.on("messageBuffer", (_channel: Buffer, frame: Buffer) => {
    for (const message of decodeFrame(frame) ?? []) if (message.documentId === key.documentId) shared.push(message.payload[0]!);
  });
  await listener.subscribe("quire:collab");

  // Process b makes itself known to a (its id is what a's messages for it name).
  await b.bus.publish(update(0));
  await waitFor(() => a.received.length === 1, 5_000, "b's first message at a");
  const bId = a.received[0]!.sender;
  expect(c.received).toEqual([{ n: 0, sender: bId }]);

  // One turn: for b, for every process, for b again.
  const sent = [a.bus.publish(update(1), [bId]), a.bus.publish(update(2)), a.bus.publish(update(3), [bId])];
  const [toB, toAll] = await Promise.all(sent);
  expect(toB).toBe(1);
  // a, b, c and the listener.
  expect(toAll).toBeGreaterThanOrEqual(4);
  await waitFor(() => b.received.length === 3 && c.received.length === 2, 5_000, "the turn's messages");
  expect(b.received.map((m) => m.n)).toEqual([1, 2, 3]);
  expect(c.received.map((m) => m.n)).toEqual([0, 2]);
  expect(shared).toEqual([0, 2]);
  expect(a.received.map((m) => m.n)).toEqual([0]);

  // For a process nobody listens as: every process gets it.
  expect(await a.bus.publish(update(4), ["0".repeat(32)])).toBeGreaterThanOrEqual(4);
  await waitFor(() => b.received.length === 4 && c.received.length === 3 && shared.length === 3, 5_000, "the fallback");
  expect(shared).toEqual([0, 2, 4]);
  expect(a.received.map((m) => m.n)).toEqual([0]);
});
