import { applyPatch } from "diff";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type IdentifiedSection, sectionChanges } from "@/server/core/section-changes";
import { sectionToMarkdown } from "@/server/core/section-markdown";

const section = (sectionId: string, text: string, name = sectionId.toUpperCase()): IdentifiedSection => ({
  sectionId,
  name,
  content: [{ blockType: "text", text }],
  defaultPermission: null,
  aiAccess: null,
  references: [],
});

describe("sectionChanges", () => {
  test("added, modified, deleted and untouched sections", () => {
    const before = [section("a", "one"), section("b", "two"), section("c", "three")];
    const after = [section("a", "one"), section("b", "two, edited"), section("d", "four")];
    const changes = sectionChanges(before, after);
    expect(changes.map((c) => [c.sectionId, c.status])).toEqual([
      ["b", "modified"],
      ["d", "added"],
      ["c", "deleted"],
    ]);
    expect(changes[0]!.diff).toMatch(/-two\n\+two, edited/);
  });

  test("a reorder reports only the sections that moved, not every shifted one", () => {
    const before = ["a", "b", "c", "d"].map((id) => section(id, id));
    const after = ["b", "c", "d", "a"].map((id) => section(id, id));
    expect(sectionChanges(before, after)).toEqual([{ sectionId: "a", name: "A", status: "moved", diff: "", moved: true }]);
  });

  test("a renamed section is modified, and its diff says so", () => {
    const [change] = sectionChanges([section("a", "x", "Old")], [section("a", "x", "New")]);
    expect(change).toMatchObject({ status: "modified", name: "New" });
    expect(change!.diff).toMatch(/-## Old\n\+## New/);
  });

  test("every diff turns the section's markdown before into its markdown after", () => {
    const ids = ["a", "b", "c", "d", "e"];
    const state = fc
      .uniqueArray(fc.constantFrom(...ids))
      .chain((present) => fc.tuple(...present.map((id) => fc.string({ maxLength: 12 }).map((t) => section(id, t)))));
    fc.assert(
      fc.property(state, state, (before, after) => {
        const byId = (list: IdentifiedSection[], id: string) => list.find((s) => s.sectionId === id);
        for (const change of sectionChanges(before, after)) {
          const old = byId(before, change.sectionId);
          const now = byId(after, change.sectionId);
          const oldText = old ? sectionToMarkdown(old) : "";
          const newText = now ? sectionToMarkdown(now) : "";
          if (change.status === "moved") expect(oldText).toBe(newText);
          else expect(applyPatch(oldText, change.diff)).toBe(newText);
        }
      }),
    );
  });
});
