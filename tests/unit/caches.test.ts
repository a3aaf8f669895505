/**
 * The cache module's rules (server/store/caches.ts): cached values are frozen
 * all the way down, invalidation waits for the commit (and does not happen on
 * rollback), a lookup that overlapped an invalidation is not cached, and every
 * cache of the server says what keeps it true. The transactions are PGlite's,
 * in memory, through the same openDatabase as the server's.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/db/client";
import { createCache, describeCaches } from "@/server/store/caches";
// Imported for the caches they make at load time.
import "@/server/store/objects";
import "@/server/store/commits";
import "@/server/store/documents";
import "@/server/store/accounts";
import "@/server/auth/rate-limit-guard";

let handle: DatabaseHandle;

beforeAll(async () => {
  handle = await openDatabase({});
});
afterAll(async () => {
  await handle?.close();
});

const newCache = () =>
  createCache<string, { tree: { tagIds: string[]; properties: Record<string, string> }; at: Date }>({
    name: "test",
    keptTrueBy: "the test says so",
    max: 10,
  });

describe("cached values", () => {
  test("are frozen all the way down: changing one throws and changes nothing", () => {
    const cache = newCache();
    const stored = cache.set("k", { tree: { tagIds: ["a"], properties: { p: "1" } }, at: new Date(0) });
    const read = cache.get("k")!;
    expect(read).toBe(stored);
    expect(Object.isFrozen(read)).toBe(true);
    expect(Object.isFrozen(read.tree)).toBe(true);
    expect(Object.isFrozen(read.tree.tagIds)).toBe(true);
    expect(() => (read.tree.tagIds as string[]).push("b")).toThrow(TypeError);
    expect(() => {
      (read.tree.properties as Record<string, string>).p = "2";
    }).toThrow(TypeError);
    expect(() => {
      (read as { at: Date }).at = new Date(1);
    }).toThrow(TypeError);
    expect(cache.get("k")).toEqual({ tree: { tagIds: ["a"], properties: { p: "1" } }, at: new Date(0) });
  });
});

describe("invalidation", () => {
  test("happens after the commit, not before", async () => {
    const cache = newCache();
    cache.set("k", { tree: { tagIds: [], properties: {} }, at: new Date(0) });
    let seenInside: unknown;
    await handle.db.transaction(async (tx) => {
      await tx.execute("select 1");
      cache.invalidateAfterCommit(tx, ["k"]);
      seenInside = cache.get("k");
    });
    expect(seenInside).toBeDefined();
    expect(cache.get("k")).toBeUndefined();
  });

  test("does not happen when the transaction rolls back", async () => {
    const cache = newCache();
    cache.set("k", { tree: { tagIds: [], properties: {} }, at: new Date(0) });
    await expect(
      handle.db.transaction(async (tx) => {
        cache.invalidateAfterCommit(tx);
        throw new Error("roll back");
      }),
    ).rejects.toThrow("roll back");
    expect(cache.get("k")).toBeDefined();
  });

  test("on the database itself (an autocommit statement already ran) happens at once", () => {
    const cache = newCache();
    cache.set("k", { tree: { tagIds: [], properties: {} }, at: new Date(0) });
    cache.invalidateAfterCommit(handle.db, ["k"]);
    expect(cache.get("k")).toBeUndefined();
  });

  test("drops the answer of a lookup that began before it", async () => {
    const cache = newCache();
    const since = cache.begin();
    await handle.db.transaction(async (tx) => cache.invalidateAfterCommit(tx));
    const answer = cache.set("k", { tree: { tagIds: [], properties: {} }, at: new Date(0) }, since);
    expect(Object.isFrozen(answer)).toBe(true);
    expect(cache.get("k")).toBeUndefined();
    cache.set("k", answer, cache.begin());
    expect(cache.get("k")).toBe(answer);
  });
});

test("every cache of the server says what keeps it true", () => {
  const names = describeCaches().map((c) => c.name);
  for (const expected of [
    "trees and section versions by hash",
    "commits by id",
    "merge bases by commit pair",
    "live API tokens by hash",
    "documents with their grants, for writes",
  ]) {
    expect(names).toContain(expected);
  }
  for (const cache of describeCaches()) expect(cache.keptTrueBy.length).toBeGreaterThan(10);
});
