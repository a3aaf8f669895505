/**
 * The section-change seam: a change computed in the worker thread (a large
 * section) brings a doc to exactly what the same change computed on the
 * event loop brings it to, live edits included.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { type LiveSection, sectionFromYDoc, sectionIntoYDoc } from "@/server/collab/codec";
import { OFF_THREAD_CHARS, sectionChangeOnState, sectionChangeUpdate } from "@/server/collab/section-change";

const docOf = (section: LiveSection) => {
  const doc = new Y.Doc();
  sectionIntoYDoc(doc, section);
  return doc;
};

function applied(doc: Y.Doc, update: Uint8Array | null): LiveSection {
  const copy = new Y.Doc();
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
  if (update) Y.applyUpdate(copy, update);
  return sectionFromYDoc(copy);
}

const words = fc.array(fc.constantFrom("alpha ", "beta ", "gamma\n", "δέλτα ", "🎉 ", "x"), { maxLength: 40 }).map((w) => w.join(""));

describe("sectionChangeUpdate", () => {
  it("answers in the worker exactly as on the event loop, for large sections with live edits", async () => {
    await fc.assert(
      fc.asyncProperty(words, words, words, fc.nat(), async (baseTail, nextTail, typed, at) => {
        // A shared bulk puts the section past the threshold, so sectionChangeUpdate goes to the worker.
        const bulk = "lorem ipsum ".repeat(OFF_THREAD_CHARS / 12 + 1);
        const base: LiveSection = { name: "Plan", content: [{ blockType: "text", text: bulk + baseTail }] };
        const next: LiveSection = {
          name: "Plan v2",
          content: [
            { blockType: "text", text: bulk + nextTail },
            { blockType: "text", text: nextTail },
          ],
        };
        const doc = docOf(base);
        const text = (doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text;
        text.insert(at % (text.length + 1), typed);
        const inWorker = await sectionChangeUpdate(doc, base, next);
        const onLoop = sectionChangeOnState(Y.encodeStateAsUpdate(doc), base, next);
        expect(applied(doc, inWorker)).toEqual(applied(doc, onLoop));
      }),
      { numRuns: 15 },
    );
  });

  it("computes a small change on the event loop, to the same result", async () => {
    const base: LiveSection = { name: "A", content: [{ blockType: "text", text: "one two" }] };
    const next: LiveSection = { name: "B", content: [{ blockType: "text", text: "one three" }] };
    const doc = docOf(base);
    expect(applied(doc, await sectionChangeUpdate(doc, base, next))).toEqual(next);
  });

  it("leaves the doc it is given as it was", async () => {
    const bulk = "x".repeat(OFF_THREAD_CHARS);
    const base: LiveSection = { name: "A", content: [{ blockType: "text", text: bulk }] };
    const doc = docOf(base);
    await sectionChangeUpdate(doc, base, { name: "B", content: [] });
    expect(sectionFromYDoc(doc)).toEqual(base);
  });
});
