/**
 * Every per-process cache of the server is made here, so they all keep the
 * same rules:
 *
 * - A cached value is read-only in its type (`Frozen`) and frozen when it is
 *   stored (deepFreeze), so no reader can change what other requests see;
 *   code that wants a changed value builds a new one.
 * - Each cache says in one line what keeps it true (`keptTrueBy`, required).
 * - Invalidation happens after the commit that made the entry wrong, never
 *   before (`invalidateAfterCommit`): invalidated earlier, a reader between
 *   the invalidation and the commit could cache the old value again.
 * - A lookup that began before an invalidation does not store its answer
 *   (`begin` / `set(…, since)`): it may have read what the commit replaced.
 *
 * Caches (the `keptTrueBy` of each is next to it):
 * objects.ts (trees and section versions by hash), commits.ts (commits by id,
 * merge bases by commit pair), access-cache.ts (live API tokens, documents'
 * permissions and grants), group-commit.ts (branch tips while a branch's
 * queue runs), auth/rate-limit-guard.ts (exhausted and clear addresses),
 * actions/merge-state.ts (the merge message `analyze` proposes, by heads),
 * actions/access.ts (the sections that hide at a tree, by tree hash).
 * Not here: core/document-model.ts remembers each section version's hash in
 * a WeakMap keyed by the version object itself (core stays free of the
 * store), kept true because versions are read-only and frozen once shared,
 * and CommitGraph (commits.ts) keeps the commits one walk loaded, for that
 * walk only.
 */
import { LRUCache } from "lru-cache";
import { afterCommit } from "@/db/commit-hooks";
import { deepFreeze, type Frozen } from "@/server/core/frozen";
import type { Tx } from "./db";

export interface CacheOptions<V> {
  /** Shown in errors and in `describeCaches`. */
  name: string;
  /** One line: why an entry of this cache cannot be wrong (or what makes it right again). */
  keptTrueBy: string;
  /** At most this many entries… */
  max?: number;
  /** …or at most this total size, each entry measured by `sizeOf`. */
  maxSize?: number;
  sizeOf?: (value: Frozen<V>) => number;
  /** Entries expire after this long. */
  ttlMs?: number;
}

/** Weakly held: a cache made per database or per server goes away with it. */
const registry = new Set<WeakRef<Cache<unknown, unknown>>>();

export class Cache<K, V> {
  readonly name: string;
  readonly keptTrueBy: string;
  private readonly entries: LRUCache<K & {}, Frozen<V> & {}>;
  /** Bumped on every invalidation: a lookup that began under an older generation does not store its answer. */
  private generation = 0;

  constructor(options: CacheOptions<V>) {
    this.name = options.name;
    this.keptTrueBy = options.keptTrueBy;
    const sizeOf = options.sizeOf;
    this.entries = new LRUCache<K & {}, Frozen<V> & {}>({
      max: options.max,
      maxSize: options.maxSize,
      sizeCalculation: sizeOf ? (value) => Math.max(1, sizeOf(value)) : undefined,
      ttl: options.ttlMs,
    } as LRUCache.Options<K & {}, Frozen<V> & {}, unknown>);
    registry.add(new WeakRef(this as Cache<unknown, unknown>));
  }

  get(key: K): Frozen<V> | undefined {
    return this.entries.get(key as K & {});
  }

  /** Call before the lookup whose answer will be cached, and pass the result to `set`. */
  begin(): number {
    return this.generation;
  }

  /**
   * Freezes `value` (deeply; it must not be changed afterwards by anyone)
   * and caches it, unless the cache was invalidated since `since`. Returns
   * the frozen value.
   */
  set(key: K, value: V | Frozen<V>, since = this.generation): Frozen<V> {
    const frozen = deepFreeze(value) as Frozen<V>;
    if (since === this.generation) this.entries.set(key as K & {}, frozen as Frozen<V> & {});
    return frozen;
  }

  /** Forgets `keys` (every entry without them) once `tx` has committed, at once for an autocommit handle. */
  invalidateAfterCommit(tx: Tx, keys?: readonly K[]): void {
    afterCommit(tx, () => this.invalidateNow(keys));
  }

  /**
   * Forgets `keys` (every entry without them) now. Only for what happened
   * outside a transaction of this process: a notification from another
   * process, a value whose truth ended (a finished queue), tests.
   */
  invalidateNow(keys?: readonly K[]): void {
    this.generation += 1;
    if (keys) for (const key of keys) this.entries.delete(key as K & {});
    else this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Makes a per-process cache; every one is made through here. */
export function createCache<K, V>(options: CacheOptions<V>): Cache<K, V> {
  return new Cache<K, V>(options);
}

/** Every cache made so far, with what keeps it true. */
export function describeCaches(): Array<{ name: string; keptTrueBy: string; size: number }> {
  const live: Array<{ name: string; keptTrueBy: string; size: number }> = [];
  for (const ref of registry) {
    const cache = ref.deref();
    if (cache) live.push({ name: cache.name, keptTrueBy: cache.keptTrueBy, size: cache.size });
    else registry.delete(ref);
  }
  return live;
}
