/**
 * Inbox changes across Quire processes (QUIRE_REDIS_URL): an inbox changed in one process (a new item, items read)
 * is published on the Redis channel `quire:inbox` with the people's ids, and every other process tells its own
 * listeners (the live badges it serves). Pub/sub delivers at most once: a lost message leaves a badge behind until
 * that person's inbox changes again or the page is opened again, which reads the inbox afresh.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { announceInboxChangedHere, relayInboxChanges } from "@/server/store/notifications";

const CHANNEL = "quire:inbox";

/** Connects, relays this process's inbox changes and hears the others'; resolves to the stop function. */
export async function shareInboxChanges(redisUrl: string): Promise<() => Promise<void>> {
  const processId = randomUUID();
  const publisher = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
  const subscriber = new Redis(redisUrl, { lazyConnect: true });
  await Promise.all([publisher.connect(), subscriber.connect()]);
  subscriber.on("message", (_channel: string, message: string) => {
    try {
      const { from, userIds } = JSON.parse(message) as { from: string; userIds: string[] };
      if (from !== processId && Array.isArray(userIds)) announceInboxChangedHere(userIds.filter((id) => typeof id === "string"));
    } catch {
      // Not a message of ours: ignored.
    }
  });
  await subscriber.subscribe(CHANNEL);
  relayInboxChanges((userIds) => {
    publisher.publish(CHANNEL, JSON.stringify({ from: processId, userIds })).catch((error: unknown) => {
      console.error("[quire] publishing an inbox change failed", error);
    });
  });
  return async () => {
    relayInboxChanges(null);
    await subscriber.quit().catch(() => undefined);
    await publisher.quit().catch(() => undefined);
  };
}
