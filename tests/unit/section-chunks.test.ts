/**
 * The live document's chunks (app/documents/[documentId]/live/section-chunks.ts):
 * every section once, in order, with its place; and a section's chunk stays
 * the same when others are added, moved or deleted elsewhere, so React keeps
 * it mounted (its room and editor with it).
 */
import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CHUNK_SPREAD, sectionChunks } from "@/app/documents/[documentId]/live/section-chunks";

const chunkOf = (order: string[]) => {
  const byId = new Map<string, string>();
  for (const chunk of sectionChunks(order)) for (const { sectionId } of chunk.sections) byId.set(sectionId, chunk.key);
  return byId;
};

const ids = (n: number) => Array.from({ length: n }, () => randomUUID());

describe("sectionChunks", () => {
  it("lists every section once, in order, with its place in the outline", () => {
    const order = ids(2_000);
    const chunks = sectionChunks(order);
    expect(chunks.flatMap((c) => c.sections.map((s) => s.sectionId))).toEqual(order);
    expect(chunks.flatMap((c) => c.sections.map((s) => s.index))).toEqual(order.map((_, i) => i));
    expect(new Set(chunks.map((c) => c.key)).size).toBe(chunks.length);
    // About one chunk per CHUNK_SPREAD sections: far fewer boxes than sections, and more than one.
    expect(chunks.length).toBeGreaterThan(2_000 / CHUNK_SPREAD / 3);
    expect(chunks.length).toBeLessThan((2_000 / CHUNK_SPREAD) * 3);
  });

  it("starts a chunk only at an anchor section, named after it (the first one, if no anchor, is 'start')", () => {
    const order = ids(500);
    const chunks = sectionChunks(order);
    for (const [i, chunk] of chunks.entries()) {
      if (i === 0 && chunk.key === "start") continue;
      expect(chunk.key).toBe(chunk.sections[0]!.sectionId);
    }
    expect(sectionChunks([])).toEqual([]);
  });

  it("keeps every other section in its chunk when one is added, or a non-anchor one deleted or moved", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), (size, from, to) => {
        const order = ids(size);
        const before = chunkOf(order);
        const added = randomUUID();
        const withAdded = [...order.slice(0, from % (size + 1)), added, ...order.slice(from % (size + 1))];
        const afterAdd = chunkOf(withAdded);
        // An added anchor starts its own chunk and takes the sections after it up to the next anchor; anything else moves nobody.
        const addedIsAnchor = afterAdd.get(added) === added;
        for (const id of order) if (!addedIsAnchor) expect(afterAdd.get(id)).toBe(before.get(id));

        const moved = order[from % size]!;
        if (before.get(moved) === moved) return;
        const rest = order.filter((id) => id !== moved);
        const afterDelete = chunkOf(rest);
        for (const id of rest) expect(afterDelete.get(id)).toBe(before.get(id));
        const place = to % size;
        const afterMove = chunkOf([...rest.slice(0, place), moved, ...rest.slice(place)]);
        for (const id of rest) expect(afterMove.get(id)).toBe(before.get(id));
      }),
      { numRuns: 300 },
    );
  });
});
