/**
 * hashTree writes a tree's canonical JSON for the tree's own shape
 * (document-model.ts treeCanonicalJson) instead of canonicalize's generic
 * walk. For every tree it must give exactly canonicalize's hash, and where
 * canonicalize refuses a value (a lone surrogate, a number that is not
 * finite) it must refuse too: a different hash would make an unchanged
 * document look changed.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type DocumentTree, hashTree, normalizeTree, treeCanonicalJson } from "@/server/core/document-model";
import { canonicalHash } from "@/server/core/hashing";

// Strings of any UTF-16 code units: lone surrogates, escapes, quotes, non-ASCII.
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
);
// Numbers include what canonicalize refuses (NaN, ±Infinity) and -0, which it writes as 0.
const propertyValue = fc.oneof(
  anyString,
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
);
const entry = fc.record({ sectionId: anyString, blobHash: anyString });

const tree: fc.Arbitrary<DocumentTree> = fc.record({
  path: anyString,
  name: anyString,
  description: fc.option(anyString, { nil: null }),
  deleted: fc.boolean(),
  tagIds: fc.array(anyString, { maxLength: 5 }),
  properties: fc.dictionary(anyString, propertyValue, { maxKeys: 6 }),
  sections: fc.array(entry, { maxLength: 12 }),
});

/** A tree as it might come back from storage written by another version: extra or missing keys, other value types. */
const oddTree = fc
  .tuple(tree, fc.dictionary(anyString, fc.jsonValue(), { maxKeys: 2 }), fc.subarray(["description", "tagIds", "deleted"]))
  .map(([t, extra, dropped]) => {
    const odd: Record<string, unknown> = { ...extra, ...t };
    for (const key of dropped) delete odd[key];
    return odd as unknown as DocumentTree;
  });

function outcome(hash: () => string): string {
  try {
    return hash();
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

describe("hashTree", () => {
  it("gives canonicalize's hash for every tree", () => {
    fc.assert(
      fc.property(fc.oneof(tree, oddTree), (t) => {
        expect(outcome(() => hashTree(t))).toBe(outcome(() => canonicalHash(normalizeTree(t))));
      }),
      { numRuns: 3_000 },
    );
  });

  it("writes the usual tree itself rather than handing it to canonicalize", () => {
    const usual: DocumentTree = {
      path: "/notes/plan",
      name: "Plan 🎉",
      description: null,
      deleted: false,
      tagIds: ["b", "a"],
      properties: { z: 1.5, a: "x", m: true },
      sections: [{ sectionId: "s1", blobHash: "h1" }],
    };
    expect(treeCanonicalJson(normalizeTree(usual))).toBe(
      '{"deleted":false,"description":null,"name":"Plan 🎉","path":"/notes/plan","properties":{"a":"x","m":true,"z":1.5},"sections":[{"blobHash":"h1","sectionId":"s1"}],"tagIds":["a","b"]}',
    );
  });
});
