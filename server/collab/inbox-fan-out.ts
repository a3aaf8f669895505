/**
 * Inbox and comment-thread changes across Quire processes (QUIRE_REDIS_URL, event-fan-out.ts): an inbox changed in
 * one process (a new item, items read) is published on `quire:inbox` with the people's ids; a thread changed (a
 * comment posted, a reply, a resolution) on `quire:threads` with its document's id. Every other process tells its
 * own listeners (the live badges and comments panels it serves).
 */
import { announceThreadsChangedHere, relayThreadsChanges } from "@/server/store/comments";
import { announceInboxChangedHere, relayInboxChanges } from "@/server/store/notifications";
import { shareEvents } from "./event-fan-out";

/** Connects, relays this process's inbox changes and hears the others'; resolves to the stop function. */
export function shareInboxChanges(redisUrl: string): Promise<() => Promise<void>> {
  return shareEvents<readonly string[]>(redisUrl, {
    channel: "quire:inbox",
    relay: relayInboxChanges,
    hear: announceInboxChangedHere,
    parse: (value) => (Array.isArray(value) ? value.filter((id): id is string => typeof id === "string") : null),
  });
}

/** Connects, relays this process's comment-thread changes and hears the others'; resolves to the stop function. */
export function shareThreadsChanges(redisUrl: string): Promise<() => Promise<void>> {
  return shareEvents<string>(redisUrl, {
    channel: "quire:threads",
    relay: relayThreadsChanges,
    hear: announceThreadsChangedHere,
    parse: (value) => (typeof value === "string" ? value : null),
  });
}
