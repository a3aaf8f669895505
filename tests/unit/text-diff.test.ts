import { applyPatch, parsePatch } from "diff";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { sectionToMarkdown } from "@/server/core/section-markdown";
import {
  type DiffStep,
  diffCharOps,
  splitLinesKeepEol,
  unifiedDiff,
  withEditsAtWordBoundaries,
  withEditsSlidTogether,
  withoutCoincidentalEqualities,
} from "@/server/core/text-diff";
import type { SectionVersion } from "@/server/core/document-model";

/** The patch must turn `before` into `after`. */
function expectCorrectPatch(before: string, after: string): string {
  const patch = unifiedDiff(before, after);
  if (before === after) {
    expect(patch).toBe("");
    return patch;
  }
  expect(patch.startsWith("--- before\n+++ after\n@@ ")).toBe(true);
  expect(applyPatch(before, patch)).toBe(after);
  return patch;
}

function hunkHeaders(patch: string): string[] {
  return patch.split("\n").filter((l) => l.startsWith("@@"));
}

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => `${f(i)}\n`).join("");

describe("unifiedDiff", () => {
  test("equal texts give an empty string", () => {
    expect(unifiedDiff("", "")).toBe("");
    expect(unifiedDiff("a\nb\n", "a\nb\n")).toBe("");
  });

  test("small change: headers, one hunk, three lines of context", () => {
    const before = lines(10, (i) => `line ${i}`);
    const after = before.replace("line 5\n", "line five\n");
    expect(unifiedDiff(before, after, { before: "base", after: "source" })).toBe(
      [
        "--- base",
        "+++ source",
        "@@ -3,7 +3,7 @@",
        " line 2",
        " line 3",
        " line 4",
        "-line 5",
        "+line five",
        " line 6",
        " line 7",
        " line 8",
        "",
      ].join("\n"),
    );
  });

  test("distant changes give separate hunks, close ones merge", () => {
    const before = lines(30, (i) => `l${i}`);
    const far = before.replace("l2\n", "L2\n").replace("l25\n", "L25\n");
    expect(hunkHeaders(expectCorrectPatch(before, far))).toEqual(["@@ -1,6 +1,6 @@", "@@ -23,7 +23,7 @@"]);
    const near = before.replace("l2\n", "L2\n").replace("l8\n", "L8\n");
    expect(hunkHeaders(expectCorrectPatch(before, near))).toEqual(["@@ -1,12 +1,12 @@"]);
  });

  test.each([
    ["add to empty", "", "x\n"],
    ["remove all", "x\ny\n", ""],
    ["no trailing newline on both", "a\nb", "a\nc"],
    ["trailing newline added", "a\nb", "a\nb\n"],
    ["trailing newline removed", "a\nb\n", "a\nb"],
    ["insert at start", "b\nc\n", "a\nb\nc\n"],
    ["insert at end", "a\nb\n", "a\nb\nc\n"],
    ["blank lines", "\n\n\n", "\n\nx\n\n"],
    ["carriage returns kept", "a\r\nb\r\n", "a\r\nc\r\n"],
    ["unicode", "héllo →\n", "héllo ←\n"],
  ])("edge case: %s", (_name, before, after) => {
    expectCorrectPatch(before, after);
  });

  test("pathological: 20,000-line full rewrite is a correct (coarse) patch", () => {
    const before = lines(20_000, (i) => `line ${i} alpha`);
    const after = lines(20_000, (i) => `row ${i} beta`);
    const patch = expectCorrectPatch(before, after);
    expect(hunkHeaders(patch)).toEqual(["@@ -1,20000 +1,20000 @@"]);
  });

  test("pathological: 1 line vs 13,000 lines, both directions", () => {
    const big = lines(13_000, (i) => `l${i}`);
    expectCorrectPatch("x\n", big);
    expectCorrectPatch(big, "x\n");
    // The single line also occurs in the big text: it is kept as context.
    const patch = expectCorrectPatch("l6500\n", big);
    expect(patch).toContain("\n l6500\n");
    expectCorrectPatch("a\n", "a\n".repeat(13_000));
    expectCorrectPatch("b\n", "a\n".repeat(13_000));
  });

  test("many scattered edits in a big text stay minimal (anchored fallback)", () => {
    const before = lines(20_000, (i) => `line ${i}`);
    const after = lines(20_000, (i) => (i % 10 === 0 ? `line ${i} changed` : `line ${i}`));
    const patch = expectCorrectPatch(before, after);
    const [parsed] = parsePatch(patch);
    const removed = parsed!.hunks.flatMap((h) => h.lines).filter((l) => l.startsWith("-")).length;
    expect(removed).toBe(2_000);
  });

  test("big text with heavy line repetition", () => {
    let x = 1;
    const rnd = () => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x;
    };
    const before = lines(20_000, () => `v${rnd() % 7}`);
    const after = lines(19_000, () => `v${rnd() % 7}`);
    expectCorrectPatch(before, after);
  });

  test("property: the patch always applies (random line texts)", () => {
    const text = fc
      .array(fc.constantFrom("a", "b", "c", "", "d e", "# h"), { maxLength: 40 })
      .chain((ls) => fc.boolean().map((eol) => ls.join("\n") + (eol && ls.length > 0 ? "\n" : "")));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const patch = unifiedDiff(before, after);
        if (before === after) return patch === "";
        return applyPatch(before, patch) === after;
      }),
      { numRuns: 300 },
    );
  });

  test("splitLinesKeepEol", () => {
    expect(splitLinesKeepEol("")).toEqual([]);
    expect(splitLinesKeepEol("a")).toEqual(["a"]);
    expect(splitLinesKeepEol("a\n")).toEqual(["a\n"]);
    expect(splitLinesKeepEol("a\n\nb")).toEqual(["a\n", "\n", "b"]);
  });
});

describe("sectionToMarkdown", () => {
  const full: SectionVersion = {
    name: "Pricing",
    content: [
      { blockType: "text", text: "Intro **bold**" },
      { blockType: "image", type: "url", mediaType: "image/png", url: "https://x.test/a.png", alt: "A chart" },
      { blockType: "image", type: "url", mediaType: "image/png", url: "https://x.test/b.png" },
      { blockType: "image", type: "base64", mediaType: "image/png", data: "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY" },
      { blockType: "image", type: "storage", mediaType: "image/jpeg", key: "ws/1/img.jpg" },
      { blockType: "document", type: "url", mediaType: "application/pdf", url: "https://x.test/d.pdf", filename: "d.pdf" },
      { blockType: "csv", type: "storage", mediaType: "text/csv", key: "ws/1/t.csv", filename: "t.csv", headers: ["a", "b"], rowCount: 12 },
      { blockType: "file", type: "storage", mediaType: "application/zip", key: "ws/1/f.zip", filename: "f.zip" },
      { blockType: "database_embed", databaseId: "6f1c1f0e-2b7a-4d5e-9a53-0f5f3c1d2e4b" },
    ],
    defaultPermission: "read",
    aiAccess: "none",
    references: [
      { referenceId: "r1", targetDocumentId: "doc-1", targetSectionId: "sec-1", displayTitle: "See also" },
      { referenceId: "r2", targetDocumentId: "doc-2", targetSectionId: null, displayTitle: null },
    ],
  };

  test("renders every block kind, references and permission overrides", () => {
    expect(sectionToMarkdown(full)).toBe(
      `${[
        "## Pricing",
        "Intro **bold**",
        "![A chart](https://x.test/a.png)",
        "![](https://x.test/b.png)",
        "![image](data:image/png;base64,QUJDREVGR0hJSktM… (24 bytes))",
        "![image](storage:ws/1/img.jpg)",
        "[d.pdf](https://x.test/d.pdf)",
        "[t.csv](storage:ws/1/t.csv) — CSV, headers: a, b, 12 rows",
        "[f.zip](storage:ws/1/f.zip)",
        "[database](database:6f1c1f0e-2b7a-4d5e-9a53-0f5f3c1d2e4b)",
        "→ reference: See also#sec-1",
        "→ reference: doc-2#",
        "<!-- defaultPermission: read -->",
        "<!-- aiAccess: none -->",
      ].join("\n\n")}\n`,
    );
  });

  test("no overrides, no references: heading and blocks only; never the whole base64 payload", () => {
    const data = "A".repeat(4_000);
    const md = sectionToMarkdown({
      name: "S",
      content: [{ blockType: "image", type: "base64", mediaType: "image/gif", data }],
      defaultPermission: null,
      aiAccess: null,
      references: [],
    });
    expect(md).toBe(`## S\n\n![image](data:image/gif;base64,${"A".repeat(16)}… (3000 bytes))\n`);
    expect(sectionToMarkdown(full)).toBe(sectionToMarkdown(structuredClone(full)));
  });

  test("an image's alt text and caption are written as markdown's alt and title, escaped", () => {
    const md = sectionToMarkdown({
      name: "S",
      content: [
        {
          blockType: "image",
          type: "storage",
          mediaType: "image/png",
          key: "ws/1/team.png",
          alt: "The team [2026]",
          caption: 'Our "offsite"\nin May',
        },
        { blockType: "image", type: "url", mediaType: "image/png", url: "https://x.test/a.png", caption: "Q3" },
      ],
      defaultPermission: null,
      aiAccess: null,
      references: [],
    });
    expect(md).toBe(`## S\n\n![The team \\[2026\\]](storage:ws/1/team.png "Our \\"offsite\\" in May")\n\n![](https://x.test/a.png "Q3")\n`);
  });
});

/** The text `steps` make of `before` and `after`: what they keep and add, in order (each side's count checked). */
function replay(steps: readonly DiffStep[], before: string, after: string): string {
  let a = 0;
  let b = 0;
  let out = "";
  for (const { op, count } of steps) {
    if (op === 0) {
      expect(before.slice(a, a + count)).toBe(after.slice(b, b + count));
      out += after.slice(b, b + count);
      a += count;
      b += count;
    } else if (op === 1) a += count;
    else {
      out += after.slice(b, b + count);
      b += count;
    }
  }
  expect([a, b]).toEqual([before.length, after.length]);
  return out;
}

describe("withoutCoincidentalEqualities", () => {
  test("still turns before into after, with no common run left that is shorter than the edits on both its sides", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "⟦", "x"), maxLength: 40 });
    fc.assert(
      fc.property(text, text, (before, after) => {
        const steps = withoutCoincidentalEqualities(diffCharOps(before, after));
        expect(replay(steps, before, after)).toBe(after);
        // Runs alternate between common and edited; every inner common run outweighs an edit run beside it.
        const runs: Array<{ common: number } | { edited: number; removed: number }> = [];
        for (const { op, count } of steps) {
          const last = runs.at(-1);
          if (op === 0) runs.push({ common: count });
          else {
            const edit = last && "edited" in last ? last : { edited: 0, removed: 0 };
            if (edit !== last) runs.push(edit);
            edit.edited += count;
            if (op === 1) edit.removed += count;
          }
        }
        for (let i = 1; i < runs.length - 1; i++) {
          const run = runs[i]!;
          if ("common" in run) {
            const left = runs[i - 1] as { edited: number; removed: number };
            const right = runs[i + 1] as { edited: number; removed: number };
            expect(run.common > left.edited || run.common > right.edited || left.removed + right.removed === 0).toBe(true);
          }
        }
      }),
    );
  });

  /** Steps the rule leaves as they are. */
  const expectKept = (steps: Array<{ op: 0 | 1 | 2; count: number }>) =>
    expect(withoutCoincidentalEqualities(steps.map((step) => ({ ...step })))).toEqual(steps);

  test("keeps a common run with only additions around it: typing before and after a word leaves the word", () => {
    expectKept([
      { op: 2, count: 20 },
      { op: 0, count: 4 },
      { op: 2, count: 20 },
    ]);
  });

  test("keeps a long common run between edits, and drops a single shared character between long ones", () => {
    expectKept([
      { op: 2, count: 3 },
      { op: 0, count: 10 },
      { op: 1, count: 2 },
    ]);
    expect(
      withoutCoincidentalEqualities([
        { op: 0, count: 6 },
        { op: 1, count: 20 },
        { op: 0, count: 1 },
        { op: 2, count: 30 },
        { op: 0, count: 6 },
      ]),
    ).toEqual([
      { op: 0, count: 6 },
      { op: 1, count: 21 },
      { op: 2, count: 31 },
      { op: 0, count: 6 },
    ]);
  });
});

describe("withEditsSlidTogether", () => {
  /** Steps from [kind, text] segments ("=" common, "-" removed, "+" added), and the two texts they turn into each other. */
  const fromSegments = (segments: Array<["=" | "-" | "+", string]>) => ({
    steps: segments.map(([kind, text]) => ({ op: kind === "=" ? 0 : kind === "-" ? 1 : 2, count: text.length }) as DiffStep),
    before: segments
      .filter(([kind]) => kind !== "+")
      .map(([, text]) => text)
      .join(""),
    after: segments
      .filter(([kind]) => kind !== "-")
      .map(([, text]) => text)
      .join(""),
  });

  test("still turns before into after, with no more edit runs than the diff had", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "⟦", "x"), maxLength: 40 });
    const editRuns = (steps: readonly DiffStep[]) => steps.filter((s, i) => s.op !== 0 && (i === 0 || steps[i - 1]!.op === 0)).length;
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = diffCharOps(before, after);
        const slid = withEditsSlidTogether(diff, before, after);
        expect(replay(slid, before, after)).toBe(after);
        expect(editRuns(slid)).toBeLessThanOrEqual(editRuns(diff));
      }),
    );
  });

  test("joins a typed run the diff split around characters it repeats (the live fuzzer's seed 199576)", () => {
    const { steps, before, after } = fromSegments([
      ["=", "api "],
      ["+", "\n"],
      ["=", "⟦m-"],
      ["+", "10⟧\n⟦m-"],
      ["=", "4⟧"],
    ]);
    expect(withEditsSlidTogether(steps, before, after)).toEqual(
      fromSegments([
        ["=", "api "],
        ["+", "\n⟦m-10⟧\n"],
        ["=", "⟦m-4⟧"],
      ]).steps,
    );
  });

  test("slides an edit right over the common run it starts with, and joins it to the edit after", () => {
    const { steps, before, after } = fromSegments([
      ["=", "x"],
      ["-", "ab"],
      ["=", "a"],
      ["-", "c"],
      ["=", "z"],
    ]);
    expect(withEditsSlidTogether(steps, before, after)).toEqual(
      fromSegments([
        ["=", "xa"],
        ["-", "bac"],
        ["=", "z"],
      ]).steps,
    );
  });
});

describe("withEditsAtWordBoundaries", () => {
  /** The text each step covers, as [kind, text] ("=" common, "-" removed, "+" added). */
  const segments = (steps: readonly DiffStep[], before: string, after: string) => {
    let [b, a] = [0, 0];
    return steps.map(({ op, count }) => {
      const text = op === 2 ? after.slice(a, a + count) : before.slice(b, b + count);
      if (op !== 2) b += count;
      if (op !== 1) a += count;
      return [op === 0 ? "=" : op === 1 ? "-" : "+", text];
    });
  };

  test("places a typed marker before a committed one like it whole, where the minimal diff cut through both", () => {
    const before = "Intro  typed ⟦s-20⟧ text";
    const after = "Intro  typed ⟦s-27⟧  typed ⟦s-20⟧ text";
    // The minimal diff's choice: the typed marker's start taken for the committed one's.
    const minimal = [
      { op: 0, count: "Intro  typed ⟦s-2".length },
      { op: 2, count: "7⟧  typed ⟦s-2".length },
      { op: 0, count: "0⟧ text".length },
    ] as DiffStep[];
    expect(replay(minimal, before, after)).toBe(after);
    const placed = withEditsAtWordBoundaries(minimal, before, after);
    expect(replay(placed, before, after)).toBe(after);
    const inserted = segments(placed, before, after).find(([kind]) => kind === "+")![1]!;
    expect(inserted).toContain("⟦s-27⟧");
  });

  test("still turns before into after with the same characters common and edited, never between a surrogate pair's halves", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "\n", "⟦", "🎉"), maxLength: 30 });
    const common = (steps: readonly DiffStep[]) => steps.filter((s) => s.op === 0).reduce((sum, s) => sum + s.count, 0);
    fc.assert(
      fc.property(text, text, (before, after) => {
        const diff = withEditsSlidTogether(diffCharOps(before, after), before, after);
        const placed = withEditsAtWordBoundaries(diff, before, after);
        expect(replay(placed, before, after)).toBe(after);
        expect(common(placed)).toBe(common(diff));
        for (const [, piece] of segments(placed, before, after)) expect(piece!.isWellFormed()).toBe(true);
      }),
    );
  });
});
