/** Names built once per key object (server/collab/key-names.ts) answer as building them each time does. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { branchKey } from "@/server/collab/branch-queue";
import { namedOncePerKey } from "@/server/collab/key-names";

describe("namedOncePerKey", () => {
  it("answers what the build answers, for each key object, however often it is asked", () => {
    let builds = 0;
    const build = (key: { a: string; b: string }) => {
      builds += 1;
      return `${key.a}\u0000${key.b}`;
    };
    const named = namedOncePerKey(build);
    fc.assert(
      fc.property(fc.array(fc.record({ a: fc.string(), b: fc.string() }), { minLength: 1, maxLength: 20 }), (keys) => {
        builds = 0;
        for (let round = 0; round < 3; round++) for (const key of keys) expect(named(key)).toBe(`${key.a}\u0000${key.b}`);
        // Built once per object; equal keys that are other objects are named on their own, and alike.
        expect(builds).toBe(keys.length);
      }),
    );
  });

  it("names a branch as the plain concatenation did", () => {
    const key = { documentId: "d-1", branchName: "main" };
    expect(branchKey(key)).toBe("d-1\u0000main");
    expect(branchKey({ ...key })).toBe(branchKey(key));
  });
});
