/**
 * Caches of what access decisions are made on (live API tokens with their
 * memberships, documents' permission settings and grants), so a busy API
 * request needs no query to authenticate and authorise. Every change to such
 * facts calls announceAccessChange in its transaction: once it commits, every
 * access cache of this process is cleared, and NOTIFY (delivered on commit)
 * clears them in every other Quire process on the database. The time-to-live
 * only bounds how long a lost notification could matter (a re-established
 * listener clears as well).
 */
import { sql } from "drizzle-orm";
import type { DatabaseHandle } from "@/db/client";
import { type Cache, createCache } from "./caches";
import type { Tx } from "./db";
import { afterCommit } from "@/db/commit-hooks";

const ACCESS_CHANGED_CHANNEL = "quire_access_changed";
const TIME_TO_LIVE_MS = 60_000;

const accessCaches: Array<Cache<string, unknown>> = [];

/** What keeps every access cache true. */
const ACCESS_KEPT_TRUE_BY =
  "every change of tokens, memberships or document permissions calls announceAccessChange: cleared here after its commit, in other processes by NOTIFY; entries live at most 60 s";

/** An access cache: cleared with all the others whenever access changes. */
export function createAccessCache<V>(name: string, max: number): Cache<string, V> {
  const cache = createCache<string, V>({ name, keptTrueBy: ACCESS_KEPT_TRUE_BY, max, ttlMs: TIME_TO_LIVE_MS });
  accessCaches.push(cache as Cache<string, unknown>);
  return cache;
}

const accessChangeListeners = new Set<() => void>();

/**
 * Called whenever access may have changed, after the change committed (in
 * this process or, through NOTIFY, another); returns unsubscribe. Live rooms
 * decide their connections again.
 */
export function onAccessChanged(listener: () => void): () => void {
  accessChangeListeners.add(listener);
  return () => {
    accessChangeListeners.delete(listener);
  };
}

/** Clears every access cache of this process now and tells those who hold access decisions to decide again. */
function forgetAccess(): void {
  for (const cache of accessCaches) cache.invalidateNow();
  for (const listener of accessChangeListeners) listener();
}

/** Called in the transaction that changes tokens, memberships or document permissions. */
export async function announceAccessChange(tx: Tx): Promise<void> {
  await tx.execute(sql`select pg_notify(${ACCESS_CHANGED_CHANNEL}, '')`);
  for (const cache of accessCaches) cache.invalidateAfterCommit(tx);
  afterCommit(tx, () => {
    for (const listener of accessChangeListeners) listener();
  });
}

/** Keeps this process's access caches in step with changes other processes make. */
export function followAccessChanges(handle: DatabaseHandle): Promise<() => Promise<void>> {
  return handle.listen(ACCESS_CHANGED_CHANNEL, forgetAccess);
}
