/**
 * Caches of what access decisions are made on (live API tokens with their
 * memberships, documents' permission settings and grants), so a busy API
 * request needs no query to authenticate and authorise. Every change to such
 * facts goes through announceAccessChange in its transaction: it clears every
 * cache of this process at once and, through NOTIFY on commit, of every other
 * Quire process on the database. The time-to-live only bounds how long a lost
 * notification could matter (a re-established listener clears as well).
 */
import { sql } from "drizzle-orm";
import { LRUCache } from "lru-cache";
import type { DatabaseHandle } from "@/db/client";
import type { Tx } from "./db";

const ACCESS_CHANGED_CHANNEL = "quire_access_changed";
const TIME_TO_LIVE_MS = 60_000;

const caches = new Set<AccessCache<object>>();
/** Bumped on every clear, so a lookup that overlapped a change does not cache its (possibly stale) answer. */
let generation = 0;

export class AccessCache<V extends object> {
  private readonly entries: LRUCache<string, V>;

  constructor(max: number) {
    this.entries = new LRUCache<string, V>({ max, ttl: TIME_TO_LIVE_MS });
    caches.add(this as unknown as AccessCache<object>);
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Call before the lookup whose answer will be cached; pass the result to `set`. */
  begin(): number {
    return generation;
  }

  /** Caches an answer unless access changed since its lookup began. */
  set(key: string, value: V, since: number): void {
    if (since === generation) this.entries.set(key, value);
  }

  clear(): void {
    this.entries.clear();
  }
}

const accessChangeListeners = new Set<() => void>();

/** Called whenever access may have changed (in this process or, through NOTIFY, another); returns unsubscribe. */
export function onAccessChanged(listener: () => void): () => void {
  accessChangeListeners.add(listener);
  return () => {
    accessChangeListeners.delete(listener);
  };
}

/** Clears every access cache of this process and tells those who hold access decisions (live rooms) to decide again. */
export function forgetAccess(): void {
  generation += 1;
  for (const cache of caches) cache.clear();
  for (const listener of accessChangeListeners) listener();
}

/** Called in the transaction that changes tokens, memberships or document permissions. */
export async function announceAccessChange(tx: Tx): Promise<void> {
  forgetAccess();
  await tx.execute(sql`select pg_notify(${ACCESS_CHANGED_CHANNEL}, '')`);
}

/** Keeps this process's access caches in step with changes other processes make. */
export function followAccessChanges(handle: DatabaseHandle): Promise<() => Promise<void>> {
  return handle.listen(ACCESS_CHANGED_CHANNEL, forgetAccess);
}
