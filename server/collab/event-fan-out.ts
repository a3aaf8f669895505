/**
 * Events across Quire processes (QUIRE_REDIS_URL): an event a store announces in one process (an inbox changed, a
 * comment thread changed) is published on its own Redis channel, and every other process tells its own listeners
 * (the live views it serves). Pub/sub delivers at most once: a lost message leaves a view behind until the next
 * event of its kind or until the page is opened again, which reads afresh.
 */
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

export interface SharedEvent<T> {
  /** The Redis channel. */
  channel: string;
  /** Sets (null: removes) the store's relay: what it calls with each event announced here. */
  relay(publish: ((event: T) => void) | null): void;
  /** Tells this process's listeners of another process's event. */
  hear(event: T): void;
  /** The event read back from a message, or null when the message is not one (ignored). */
  parse(value: unknown): T | null;
}

/** Connects, relays this process's events and hears the others'; resolves to the stop function. */
export async function shareEvents<T>(redisUrl: string, event: SharedEvent<T>): Promise<() => Promise<void>> {
  const processId = randomUUID();
  const publisher = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
  const subscriber = new Redis(redisUrl, { lazyConnect: true });
  await Promise.all([publisher.connect(), subscriber.connect()]);
  subscriber.on("message", (_channel: string, message: string) => {
    try {
      const { from, value } = JSON.parse(message) as { from: string; value: unknown };
      const heard = from === processId ? null : event.parse(value);
      if (heard !== null) event.hear(heard);
    } catch {
      // Not a message of ours: ignored.
    }
  });
  await subscriber.subscribe(event.channel);
  event.relay((value) => {
    publisher.publish(event.channel, JSON.stringify({ from: processId, value })).catch((error: unknown) => {
      console.error(`[quire] publishing on ${event.channel} failed`, error);
    });
  });
  return async () => {
    event.relay(null);
    await subscriber.quit().catch(() => undefined);
    await publisher.quit().catch(() => undefined);
  };
}
