/**
 * Committed content <-> Yjs. A section's live state is one Y.Doc (see the
 * README, "Live collaboration"): its name and every text block are `Y.Text`,
 * so edits merge character by character (comment markup is text inside them);
 * every other block is a `Y.Map` of its fields, replaced whole when it
 * changes. A branch's outline (the order of the sections a principal may see)
 * is a `Y.Array` of section ids in its own Y.Doc.
 *
 * Pure: no storage, no network, no auth.
 */
import * as Y from "yjs";
import type { Block } from "@/server/core/blocks";
import { diffCharOps, diffTokenOps } from "@/server/core/text-diff";

/** What of a section is edited live: the rest of its version (permissions, references) follows the branch head. */
export interface LiveSection {
  name: string;
  content: Block[];
}

const SECTION_ROOT = "section";
const OUTLINE_ROOT = "outline";

const sectionRoot = (doc: Y.Doc): Y.Map<unknown> => doc.getMap(SECTION_ROOT);

function blockToY(block: Block): Y.Map<unknown> {
  const map = new Y.Map<unknown>();
  for (const [field, value] of Object.entries(block)) {
    if (value === undefined) continue;
    map.set(field, block.blockType === "text" && field === "text" ? new Y.Text(value as string) : value);
  }
  return map;
}

function blockFromY(map: Y.Map<unknown>): Block {
  const block: Record<string, unknown> = {};
  for (const [field, value] of map.entries()) block[field] = value instanceof Y.Text ? value.toString() : value;
  return block as Block;
}

/** Writes a section into an empty doc (a draft that has no stored state yet). */
export function sectionIntoYDoc(doc: Y.Doc, section: LiveSection): void {
  doc.transact(() => {
    const root = sectionRoot(doc);
    root.set("name", new Y.Text(section.name));
    const blocks = new Y.Array<Y.Map<unknown>>();
    blocks.push(section.content.map(blockToY));
    root.set("blocks", blocks);
  });
}

export function sectionFromYDoc(doc: Y.Doc): LiveSection {
  const root = sectionRoot(doc);
  const name = root.get("name");
  const blocks = root.get("blocks");
  return {
    name: name instanceof Y.Text ? name.toString() : "",
    // Only maps are blocks (the live face refuses anything else in the list; a draft stored before it did may hold one).
    content:
      blocks instanceof Y.Array
        ? blocks
            .toArray()
            .filter((b): b is Y.Map<unknown> => b instanceof Y.Map)
            .map(blockFromY)
        : [],
  };
}

/**
 * Where each position of `base` is in `current`, after the edits that turned
 * one into the other: positions in text `current` removed map to where the
 * removal happened, and `kept(i)` says whether base character i still exists.
 */
function positionMap(base: string, current: string): { at(i: number): number; kept(i: number): boolean } {
  const toCurrent = new Int32Array(base.length + 1);
  const survived = new Uint8Array(base.length);
  let b = 0;
  let c = 0;
  for (const { op, count } of diffCharOps(base, current)) {
    if (op === 2) c += count;
    else if (op === 1) {
      toCurrent.fill(c, b, b + count);
      b += count;
    } else {
      for (let k = 0; k < count; k++) toCurrent[b + k] = c + k;
      survived.fill(1, b, b + count);
      b += count;
      c += count;
    }
  }
  toCurrent[base.length] = c;
  return { at: (i) => toCurrent[i]!, kept: (i) => survived[i] === 1 };
}

/**
 * Applies the change from `base` to `next` into a Y.Text that may have moved
 * on from `base` (someone typing): the base->next text diff becomes inserts
 * and deletes at the positions those base characters have now, so characters
 * typed since `base` survive. With no local edits this is the minimal edit.
 *
 * Both diffs (base->next, and base->current to place it) are `diffCharOps`:
 * linear in the texts with a bounded budget, since this runs on the event
 * loop of a process serving every room. Where a diff is cut short it replaces
 * a stretch whole: base->next then deletes and reinserts characters it could
 * have kept (the text is still `next`), and base->current treats a stretch of
 * the live text as typed over the base characters there, so next's edits
 * inside it are inserted beside the live text rather than merged into it.
 */
export function applyTextChange(text: Y.Text, base: string, next: string): void {
  if (base === next) return;
  const current = text.toString();
  const map = current === base ? null : positionMap(base, current);
  const at = (i: number) => (map ? map.at(i) : i);
  const kept = (i: number) => (map ? map.kept(i) : true);
  // Collected in base order, applied from the end so earlier positions stay valid.
  const edits: Array<{ position: number; deleteCount: number; insert: string }> = [];
  let b = 0;
  let n = 0;
  for (const { op, count } of diffCharOps(base, next)) {
    // An insertion sticks to the base character before it, so it lands before text the draft added there.
    if (op === 2) {
      edits.push({ position: b > 0 && kept(b - 1) ? at(b - 1) + 1 : at(b), deleteCount: 0, insert: next.slice(n, n + count) });
      n += count;
    } else if (op === 1) {
      // Delete the removed base characters that still exist, each run of them contiguous in `current`.
      let k = 0;
      while (k < count) {
        while (k < count && !kept(b + k)) k++;
        const start = k;
        while (k < count && kept(b + k) && (k === start || at(b + k) === at(b + k - 1) + 1)) k++;
        if (k > start) edits.push({ position: at(b + start), deleteCount: k - start, insert: "" });
      }
      b += count;
    } else {
      b += count;
      n += count;
    }
  }
  for (let i = edits.length - 1; i >= 0; i--) {
    const edit = edits[i]!;
    if (edit.deleteCount > 0) text.delete(edit.position, edit.deleteCount);
    if (edit.insert) text.insert(edit.position, edit.insert);
  }
}

/** A block as the block list is lined up: text blocks by their text, others by all their fields. */
const blockIdentity = (block: Block): string => (block.blockType === "text" ? `text:${block.text}` : JSON.stringify(block));
/** Whether two block lists have the same kinds of block in the same places (text where text is). */
const sameKinds = (a: readonly Block[], b: readonly Block[]): boolean =>
  a.length === b.length &&
  a.every((block, i) => (block.blockType === "text" ? b[i]!.blockType === "text" : blockIdentity(block) === blockIdentity(b[i]!)));

/**
 * Applies the change from committed section `base` to committed section
 * `next` into a section doc as minimal edits, keeping live edits made since
 * `base`: the name and text blocks by text diff, the block list by a diff of
 * the blocks (text blocks by their text, so a block added between two others
 * lands between them and the live text of each stays with its block; a text
 * block removed and another added at the same place is one block whose text
 * changed). When live edits changed the block list itself, the next
 * version's block list is lined up against the live one instead.
 */
export function applySectionChange(doc: Y.Doc, base: LiveSection, next: LiveSection): void {
  doc.transact(() => {
    const root = sectionRoot(doc);
    let name = root.get("name");
    if (!(name instanceof Y.Text)) {
      name = new Y.Text();
      root.set("name", name);
    }
    applyTextChange(name as Y.Text, base.name, next.name);
    let blocks = root.get("blocks") as Y.Array<Y.Map<unknown>> | undefined;
    if (!(blocks instanceof Y.Array)) {
      blocks = new Y.Array<Y.Map<unknown>>();
      root.set("blocks", blocks);
    }
    const list = blocks;
    const live = (list.toArray() as Y.Map<unknown>[]).map(blockFromY);
    // From `from` (a list that lines up with the live blocks index for index) to `next.content`.
    const from = sameKinds(live, base.content) ? base.content : live;
    let index = 0;
    let fromIndex = 0;
    let nextIndex = 0;
    const insert = (count: number) => {
      list.insert(index, next.content.slice(nextIndex, nextIndex + count).map(blockToY));
      index += count;
      nextIndex += count;
    };
    const remove = (count: number) => {
      list.delete(index, count);
      fromIndex += count;
    };
    /** `count` blocks of `from` become as many of `next` in place: text into text by a text diff, anything else replaced. */
    const change = (count: number) => {
      for (let k = 0; k < count; k++) {
        const fromBlock = from[fromIndex]!;
        const nextBlock = next.content[nextIndex]!;
        const text = list.get(index).get("text");
        if (fromBlock.blockType === "text" && nextBlock.blockType === "text" && text instanceof Y.Text) {
          applyTextChange(text, fromBlock.text, nextBlock.text);
          index++;
          fromIndex++;
          nextIndex++;
        } else {
          remove(1);
          insert(1);
        }
      }
    };
    // Bounded like the text diffs: a section may have thousands of blocks.
    const steps = diffTokenOps(from.map(blockIdentity), next.content.map(blockIdentity));
    for (let k = 0; k < steps.length; k++) {
      const step = steps[k]!;
      const following = steps[k + 1];
      if (step.op !== 0 && following && following.op !== 0) {
        // A removal and an addition side by side (either order; the diff merges same-kind neighbours, so they alternate).
        const removed = step.op === 1 ? step.count : following.count;
        const added = step.op === 2 ? step.count : following.count;
        const paired = Math.min(removed, added);
        change(paired);
        if (removed > paired) remove(removed - paired);
        if (added > paired) insert(added - paired);
        k++;
      } else if (step.op === 2) insert(step.count);
      else if (step.op === 1) remove(step.count);
      else change(step.count);
    }
  });
}

/** Writes a branch outline (the section ids a principal may see, in order) into its doc as minimal edits. */
export function applyOutline(doc: Y.Doc, sectionIds: readonly string[]): void {
  const outline = doc.getArray<string>(OUTLINE_ROOT);
  doc.transact(() => {
    let index = 0;
    let next = 0;
    // Bounded like the text diffs: reordering thousands of sections costs no more than replacing the list.
    for (const step of diffTokenOps(outline.toArray(), sectionIds)) {
      if (step.op === 2) {
        outline.insert(index, sectionIds.slice(next, next + step.count));
        index += step.count;
        next += step.count;
      } else if (step.op === 1) outline.delete(index, step.count);
      else {
        index += step.count;
        next += step.count;
      }
    }
  });
}

export const outlineFromYDoc = (doc: Y.Doc): string[] => doc.getArray<string>(OUTLINE_ROOT).toArray();
