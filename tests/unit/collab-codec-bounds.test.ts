/**
 * Applying a committed change into a live Y.Text stays correct at the sizes
 * where its diffs are cut short by their work bound (server/core/text-diff.ts
 * `diffCharOps`): a million characters of random text, rewritten, edited in
 * scattered places, with live edits made in between. How long it takes is
 * measured in bench/head-move-cost.ts, not here.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { applySectionChange, applyTextChange, type LiveSection, sectionFromYDoc, sectionIntoYDoc } from "@/server/collab/codec";

const MILLION = 1_000_000;
// Three alphabets with nothing in common, so where each side's text goes is unambiguous.
const COMMITTED = "abcdefghijklmnopqrstuvwxyz ";
const NEXT = "0123456789";
const TYPED = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** A seeded generator (the same texts every run). */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  return {
    int: (below: number) => Math.floor(next() * below),
    text(length: number, alphabet: string) {
      const units = new Array<string>(length);
      for (let i = 0; i < length; i++) units[i] = alphabet[Math.floor(next() * alphabet.length)]!;
      return units.join("");
    },
  };
}

interface Edit {
  position: number;
  deleteCount: number;
  insert: string;
}

/** `count` edits of `text` (each deleting up to 8 characters and inserting 1-8 of `alphabet`), at least `gap` apart, in order. */
function scatteredEdits(random: ReturnType<typeof generator>, text: string, count: number, alphabet: string, gap: number): Edit[] {
  const stride = Math.floor(text.length / count);
  return Array.from({ length: count }, (_, i) => ({
    position: i * stride + random.int(stride - gap),
    deleteCount: random.int(9),
    insert: random.text(1 + random.int(8), alphabet),
  }));
}

/** `text` with non-overlapping `edits` (positions in `text`) made. */
function applied(text: string, edits: readonly Edit[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const edit of [...edits].sort((x, y) => x.position - y.position)) {
    parts.push(text.slice(at, edit.position), edit.insert);
    at = edit.position + edit.deleteCount;
  }
  parts.push(text.slice(at));
  return parts.join("");
}

/** A Y.Text holding `base`, with `live` edits made to it since (a draft someone typed in). */
function liveText(base: string, live: readonly Edit[] = []): Y.Text {
  const text = new Y.Doc().getText("t");
  text.insert(0, base);
  for (const edit of [...live].sort((x, y) => y.position - x.position)) {
    text.delete(edit.position, edit.deleteCount);
    text.insert(edit.position, edit.insert);
  }
  return text;
}

/** Bytes of the update `change` makes to `text`'s doc: small when the change was applied as edits, not as a rewrite. */
function updateBytes(text: Y.Text, change: () => void): number {
  let bytes = 0;
  const count = (update: Uint8Array) => {
    bytes += update.length;
  };
  text.doc!.on("update", count);
  change();
  text.doc!.off("update", count);
  return bytes;
}

describe("a million characters of random text", () => {
  const random = generator(22);
  const base = random.text(MILLION, COMMITTED);

  it("becomes an unrelated text", () => {
    const next = random.text(MILLION, NEXT);
    const text = liveText(base);
    applyTextChange(text, base, next);
    expect(text.toString() === next).toBe(true);
  });

  it("takes scattered edits as edits, not as a rewrite", () => {
    const next = applied(base, scatteredEdits(random, base, 300, NEXT, 0));
    const text = liveText(base);
    const bytes = updateBytes(text, () => applyTextChange(text, base, next));
    expect(text.toString() === next).toBe(true);
    expect(bytes).toBeLessThan(20_000);
  });

  it("keeps live edits made since the base, with the committed edits placed around them", () => {
    const live = scatteredEdits(random, base, 50, TYPED, 2_000);
    // The committed edits fall in the 2,000 characters after each live edit's stretch, so none overlaps one.
    const committed = live.map((edit) => ({
      position: edit.position + 100 + random.int(1_800),
      deleteCount: random.int(9),
      insert: random.text(1 + random.int(8), NEXT),
    }));
    const next = applied(base, committed);
    const text = liveText(base, live);
    applyTextChange(text, base, next);
    expect(text.toString() === applied(base, [...live, ...committed])).toBe(true);
  });

  it("keeps text typed into the draft when it becomes an unrelated text (the typed text goes before it)", () => {
    const live = scatteredEdits(random, base, 20, TYPED, 10).map((edit) => ({ ...edit, deleteCount: 0 }));
    const next = random.text(MILLION, NEXT);
    const text = liveText(base, live);
    applyTextChange(text, base, next);
    expect(text.toString() === live.map((edit) => edit.insert).join("") + next).toBe(true);
  });

  it("merges with typing the server had not yet seen (a replica's edits merged after the change)", () => {
    const section = (text: string): LiveSection => ({ name: "Big", content: [{ blockType: "text", text }] });
    const server = new Y.Doc();
    sectionIntoYDoc(server, section(base));
    const typist = new Y.Doc();
    Y.applyUpdate(typist, Y.encodeStateAsUpdate(server));
    const live = scatteredEdits(random, base, 50, TYPED, 2_000).map((edit) => ({ ...edit, deleteCount: 0 }));
    const typed = (typist.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text;
    for (const edit of [...live].reverse()) typed.insert(edit.position, edit.insert);
    const committed = live.map((edit) => ({ position: edit.position + 100 + random.int(1_800), deleteCount: random.int(9), insert: "" }));
    applySectionChange(server, section(base), section(applied(base, committed)));
    Y.applyUpdate(server, Y.encodeStateAsUpdate(typist));
    Y.applyUpdate(typist, Y.encodeStateAsUpdate(server));
    const merged = sectionFromYDoc(server).content[0];
    expect(merged?.blockType === "text" && merged.text === applied(base, [...live, ...committed])).toBe(true);
    expect(sectionFromYDoc(typist)).toEqual(sectionFromYDoc(server));
  });
});

describe("texts long enough to be cut into chunks", () => {
  // Astral characters (two UTF-16 code units each) among them: no edit may split one.
  const unit = fc.constantFrom("a", "b", "c", " ", "\n", "😀", "😁", "é");
  const long = fc.array(unit, { minLength: 0, maxLength: 3_000 }).map((units) => units.join(""));

  it("any text becomes any other", () => {
    fc.assert(
      fc.property(long, long, (base, next) => {
        const text = liveText(base);
        applyTextChange(text, base, next);
        expect(text.toString()).toBe(next);
      }),
      { numRuns: 60 },
    );
  });

  it("an edited text becomes its edit, and keeps live typing elsewhere", () => {
    const typed = fc.string({ unit: fc.constantFrom(..."XYZ"), minLength: 1, maxLength: 10 });
    fc.assert(
      fc.property(long, long, long, long, typed, (prefix, middle, suffix, change, typing) => {
        const base = `${prefix}|${middle}|${suffix}`;
        const next = `${prefix}|${middle}|${change}${suffix}`;
        const text = liveText(base, [{ position: prefix.length, deleteCount: 0, insert: typing }]);
        applyTextChange(text, base, next);
        expect(text.toString()).toBe(`${prefix}${typing}|${middle}|${change}${suffix}`);
      }),
      { numRuns: 60 },
    );
  });
});
