/** The proposed merge of a conflicting section: node-diff3 by line, markers only where both sides changed the same lines. */
import { describe, expect, test } from "vitest";
import type { SectionVersion } from "@/server/core/document-model";
import { proposeSectionMerge } from "@/server/core/section-three-way";

const version = (...texts: string[]): SectionVersion => ({
  name: "S",
  content: texts.map((text) => ({ blockType: "text" as const, text })),
  defaultPermission: null,
  aiAccess: null,
  references: [],
});

describe("proposeSectionMerge", () => {
  test.each([
    ["changes to different lines apply cleanly", version("a\nb\nc\nd"), version("A\nb\nc\nd"), version("a\nb\nc\nD"), "A\nb\nc\nD", 0],
    [
      "a line both changed is marked, the rest applied",
      version("a\nb\nc\nd\ne"),
      version("A\nb\nc\nd\ne-source"),
      version("a\nb\nC\nd\ne-target"),
      "A\nb\nC\nd\n<<<<<<< source\ne-source\n=======\ne-target\n>>>>>>> target",
      1,
    ],
    ["the same change on both sides is no conflict", version("a\nb"), version("a\nB"), version("a\nB"), "a\nB", 0],
    ["added on both sides (no base)", null, version("x"), version("y"), "<<<<<<< source\nx\n=======\ny\n>>>>>>> target", 1],
    ["deleted on one side: its text is empty", version("a\nb"), null, version("a\nB"), "<<<<<<< source\n=======\na\nB\n>>>>>>> target", 1],
    ["text blocks are joined by a blank line", version("a", "b"), version("a", "B"), version("a", "b"), "a\n\nB", 0],
  ])("%s", (_, base, source, target, text, conflictingHunks) => {
    expect(proposeSectionMerge(base, source, target)).toEqual({ text, conflictingHunks });
  });

  test("a section holding anything but text has no proposal", () => {
    const withImage: SectionVersion = {
      ...version("a"),
      content: [{ blockType: "image", type: "url", mediaType: "image/png", url: "https://example.test/a.png" }],
    };
    expect(proposeSectionMerge(version("a"), withImage, version("b"))).toBeNull();
  });
});
