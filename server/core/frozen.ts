/**
 * Deeply read-only values: what per-process caches hand out (server/store/
 * caches.ts) and what immutable objects (trees, section versions, commits)
 * are typed as, so a shared object cannot be changed by accident: the
 * compiler refuses it, and `deepFreeze` makes the runtime refuse it too.
 */
export type Frozen<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends Date
    ? T
    : T extends ReadonlyMap<infer K, infer V>
      ? ReadonlyMap<K, Frozen<V>>
      : T extends ReadonlySet<infer V>
        ? ReadonlySet<Frozen<V>>
        : T extends readonly unknown[]
          ? { readonly [I in keyof T]: Frozen<T[I]> }
          : T extends object
            ? { readonly [K in keyof T]: Frozen<T[K]> }
            : T;

/**
 * Freezes `value` and everything reachable from it (plain objects, arrays,
 * and the values of Maps and Sets, whose own entries stay changeable at
 * runtime: their Readonly types guard those). Already frozen parts are not
 * walked again, so freezing a tree of shared frozen parts costs only the new ones.
 */
export function deepFreeze<T>(value: T): Frozen<T> {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value as Frozen<T>;
  Object.freeze(value);
  if (value instanceof Map) for (const entry of value.values()) deepFreeze(entry);
  else if (value instanceof Set) for (const entry of value) deepFreeze(entry);
  else if (!(value instanceof Date)) for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value as Frozen<T>;
}
