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
import { canonicalJson } from "@/server/core/hashing";
import { commentTagTokens } from "@/server/core/comment-markup";
import {
  diffCharOps,
  diffTokenOps,
  withEditsAtWordBoundaries,
  withEditsSlidTogether,
  withoutCoincidentalEqualities,
} from "@/server/core/text-diff";

/** What of a section is edited live: the rest of its version (permissions, references) follows the branch head. */
export interface LiveSection {
  name: string;
  content: Block[];
}

const SECTION_ROOT = "section";
const OUTLINE_ROOT = "outline";

/**
 * A Y.Doc the server makes: a room's, one rebuilt from storage, one a change
 * is computed in. Its guid names a doc only to Yjs's subdocuments, which a
 * section never holds; left to Yjs it is a v4 UUID drawn through Web Crypto
 * one call per digit, 160-200 µs a doc on a 2-core box against 8 µs for all
 * the rest (bench/README.md). The client id, which must differ between the
 * docs whose updates meet, stays Yjs's random one.
 */
export function newServerDoc(): Y.Doc {
  return new Y.Doc({ guid: "quire-server-doc" });
}

const sectionRoot = (doc: Y.Doc): Y.Map<unknown> => doc.getMap(SECTION_ROOT);

/** A block as the shared map a section's list holds (the browser builds one the same way to move or restore a block). */
export function blockToY(block: Block): Y.Map<unknown> {
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

/** The shared text of a section doc's text block at `index` (null when that block is not a text block, or there is none). */
export function textBlockIn(doc: Y.Doc, index: number): Y.Text | null {
  const blocks = sectionRoot(doc).get("blocks");
  const block = blocks instanceof Y.Array && index >= 0 && index < blocks.length ? blocks.get(index) : null;
  const text = block instanceof Y.Map && block.get("blockType") === "text" ? block.get("text") : null;
  return text instanceof Y.Text ? text : null;
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
  // Only what the diff matches for good, and typed runs whole: characters typed live must not be taken for base
  // characters they resemble.
  const slid = withEditsSlidTogether(diffCharOps(base, current), base, current);
  for (const { op, count } of withoutCoincidentalEqualities(withEditsAtWordBoundaries(slid, base, current))) {
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
  const atoms = TagAtoms.over(base, current, next);
  const edits = atoms
    ? atoms.expandEdits(textEdits(atoms.compact(base).text, atoms.compact(current).text, atoms.compact(next).text), atoms.compact(current))
    : textEdits(base, current, next);
  // Applied from the end so earlier positions stay valid; an edit that replaces inserts first, so what it inserts goes
  // before the text it replaces (see withReplacingTagsInside).
  for (let i = edits.length - 1; i >= 0; i--) {
    const edit = edits[i]!;
    if (edit.insert) text.insert(edit.position, edit.insert);
    if (edit.deleteCount > 0) text.delete(edit.position + edit.insert.length, edit.deleteCount);
  }
}

interface TextEdit {
  position: number;
  deleteCount: number;
  insert: string;
}

/** The edits, in order of position in `current`, that carry the change `base` → `next` onto `current` (see applyTextChange). */
function textEdits(base: string, current: string, next: string): TextEdit[] {
  const map = current === base ? null : positionMap(base, current);
  const at = (i: number) => (map ? map.at(i) : i);
  const kept = (i: number) => (map ? map.kept(i) : true);
  const edits: TextEdit[] = [];
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
  return edits;
}

/** Unicode's private use area (in the BMP, so each stands for one UTF-16 unit, as positions count). */
const FIRST_ATOM = 0xe000;
const LAST_ATOM = 0xf8ff;
const PRIVATE_USE = /[\ue000-\uf8ff]/;

/**
 * Comment tags as single characters while a change is placed: a character
 * diff would otherwise align part of one tag with part of another (a removed
 * `<svc:comment id=…>` with a `<svc:comment-new …>` typed at the same place)
 * and cut the live one apart, leaving markup nobody wrote. Each distinct tag
 * becomes one private-use character for the diffs, and back in the edits, so a
 * tag is kept or removed whole. Not used when a text holds private-use
 * characters of its own (they could not be told apart) or has no tags.
 */
class TagAtoms {
  private readonly atomOf = new Map<string, string>();
  private readonly tagOf = new Map<string, string>();
  private readonly compacted = new Map<string, { text: string; starts: Int32Array }>();

  static over(...texts: string[]): TagAtoms | null {
    if (texts.some((t) => PRIVATE_USE.test(t))) return null;
    const atoms = new TagAtoms();
    for (const text of texts) {
      for (const token of commentTagTokens(text)) {
        if (atoms.atomOf.has(token.raw)) continue;
        const code = FIRST_ATOM + atoms.atomOf.size;
        if (code > LAST_ATOM) return null;
        const atom = String.fromCharCode(code);
        atoms.atomOf.set(token.raw, atom);
        atoms.tagOf.set(atom, token.raw);
      }
    }
    return atoms.atomOf.size > 0 ? atoms : null;
  }

  /** The text with each tag as its atom, and where each of its characters starts in the text (one more entry: the text's length). */
  compact(text: string): { text: string; starts: Int32Array } {
    const known = this.compacted.get(text);
    if (known) return known;
    const parts: string[] = [];
    const starts: number[] = [];
    let at = 0;
    const plain = (to: number) => {
      parts.push(text.slice(at, to));
      for (let i = at; i < to; i++) starts.push(i);
    };
    for (const token of commentTagTokens(text)) {
      plain(token.index);
      parts.push(this.atomOf.get(token.raw)!);
      starts.push(token.index);
      at = token.index + token.raw.length;
    }
    plain(text.length);
    starts.push(text.length);
    const compacted = { text: parts.join(""), starts: Int32Array.from(starts) };
    this.compacted.set(text, compacted);
    return compacted;
  }

  /** Edits made on the compact texts, as edits of the text `current` was compacted from. */
  expandEdits(edits: readonly TextEdit[], current: { text: string; starts: Int32Array }): TextEdit[] {
    return this.withReplacingTagsInside(edits, current.text).map(({ position, deleteCount, insert }) => {
      const from = current.starts[position]!;
      return {
        position: from,
        deleteCount: current.starts[position + deleteCount]! - from,
        insert: insert.replace(/[\ue000-\uf8ff]/g, (atom) => this.tagOf.get(atom)!),
      };
    });
  }

  /**
   * A tag that replaces another (a new comment's tags becoming its id's at
   * commit) goes on the comment's side of the one it replaces: an opening tag
   * after it, a closing tag before it. Text typed at that moment right outside
   * the comment sits beside the replaced tag, and Yjs orders two insertions
   * at one place by client id, so a tag placed on the outer side could end up
   * beyond the typing, taking it into the comment, and the typist's edit was
   * refused as altering a comment (the live fuzzer's seed 259430).
   */
  private withReplacingTagsInside(edits: readonly TextEdit[], current: string): TextEdit[] {
    const placed = [...edits];
    const closing = (atom: string) => this.tagOf.get(atom)?.startsWith("</");
    for (let i = 0; i + 1 < placed.length; i++) {
      const [first, second] = [placed[i]!, placed[i + 1]!];
      const [removal, tag] = first.deleteCount > 0 ? [first, second] : [second, first];
      const removed = current[removal.position] ?? "";
      const replaces =
        removal.deleteCount === 1 &&
        removal.insert === "" &&
        tag.deleteCount === 0 &&
        (tag.position === removal.position || tag.position === removal.position + 1) &&
        this.tagOf.has(removed) &&
        this.tagOf.has(tag.insert) &&
        closing(removed) === closing(tag.insert);
      if (!replaces) continue;
      // Yjs puts text inserted where deleted text was after the deleted text: a closing tag goes in before the old one is
      // deleted (one edit, applied insertion first); an opening tag after the old one, before it is deleted.
      if (closing(tag.insert)) placed.splice(i, 2, { ...removal, insert: tag.insert });
      else {
        placed.splice(i, 2, removal, { ...tag, position: removal.position + 1 });
        i += 1;
      }
    }
    return placed;
  }
}

/** Whether a live text block's text is no longer its base version's: someone typed into it since. */
function typedIntoSince(map: Y.Map<unknown>, baseBlock: Block): boolean {
  const text = map.get("text");
  return baseBlock.blockType === "text" && text instanceof Y.Text && text.toString() !== baseBlock.text;
}

/*
 * Blocks are compared by their canonical JSON: a live block's fields come in
 * the order its map received them (another process's update may set them in
 * another order than the committed version lists them), and equal blocks must
 * line up as equal, or a head move would leave a block it removes in place.
 */
/** A block as the block list is lined up: text blocks by their text, others by all their fields. */
const blockIdentity = (block: Block): string => (block.blockType === "text" ? `text:${block.text}` : canonicalJson(block));
/** A block as a committed list is lined up with the live one: any text block with any (its text may have been typed into), others by all their fields. */
const blockKind = (block: Block): string => (block.blockType === "text" ? "text" : canonicalJson(block));

/**
 * Applies the change from committed section `base` to committed section
 * `next` into a section doc as minimal edits, keeping live edits made since
 * `base`: the name and text blocks by text diff, the block list by a diff of
 * the blocks (text blocks by their text, so a block added between two others
 * lands between them and the live text of each stays with its block; a text
 * block removed and another added at the same place is one block whose text
 * changed). The change is worked out between the two committed versions and
 * carried onto the live blocks they correspond to (lined up by kind), so live
 * edits survive even when the live block list itself differs from `base` (a
 * block added or removed live, or an update the doc has not received yet): a
 * block the live list lacks takes no change, one only the live list has is
 * left alone, and a text block's change is always base text → next text,
 * never live text → next text (which would erase what was typed). A text
 * block the change removes (or turns into another kind) stays when it was
 * typed into since `base`, with what was typed: removing it would lose the
 * typing, which nobody committing or reverting saw (as git refuses to check
 * out over uncommitted changes; here the block simply stays in the draft,
 * for its editors to keep or delete).
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
    const liveMaps = list.toArray().filter((b): b is Y.Map<unknown> => b instanceof Y.Map);
    // The live block each base block is, where it has one. Bounded like the text diffs: a section may have thousands of blocks.
    const counterpart: Array<Y.Map<unknown> | undefined> = [];
    let liveIndex = 0;
    for (const step of diffTokenOps(
      base.content.map(blockKind),
      liveMaps.map((map) => blockKind(blockFromY(map))),
    )) {
      if (step.op === 0) for (let k = 0; k < step.count; k++) counterpart.push(liveMaps[liveIndex++]);
      else if (step.op === 1) for (let k = 0; k < step.count; k++) counterpart.push(undefined);
      else liveIndex += step.count;
    }
    const indexOf = (map: Y.Map<unknown>) => list.toArray().indexOf(map);
    let baseIndex = 0;
    let nextIndex = 0;
    /** New blocks go after the live counterpart of the last base block passed (or the last block inserted); at the start before any. */
    let anchor: Y.Map<unknown> | null = null;
    const insert = (count: number) => {
      const maps = next.content.slice(nextIndex, nextIndex + count).map(blockToY);
      list.insert(anchor ? indexOf(anchor) + 1 : 0, maps);
      anchor = maps.at(-1) ?? anchor;
      nextIndex += count;
    };
    const remove = (count: number) => {
      for (let k = 0; k < count; k++) {
        const baseBlock = base.content[baseIndex]!;
        const map = counterpart[baseIndex++];
        if (!map) continue;
        // Typed into since the base: kept where it is, so that a change never takes typed text away.
        if (typedIntoSince(map, baseBlock)) anchor = map;
        else list.delete(indexOf(map), 1);
      }
    };
    const keep = (count: number) => {
      for (let k = 0; k < count; k++) anchor = counterpart[baseIndex++] ?? anchor;
      nextIndex += count;
    };
    /** `count` base blocks become as many next blocks in place: text into text by a text diff, anything else replaced. */
    const change = (count: number) => {
      for (let k = 0; k < count; k++) {
        const baseBlock = base.content[baseIndex]!;
        const nextBlock = next.content[nextIndex]!;
        const map = counterpart[baseIndex];
        const text = map?.get("text");
        if (baseBlock.blockType === "text" && nextBlock.blockType === "text" && text instanceof Y.Text) {
          applyTextChange(text, baseBlock.text, nextBlock.text);
          anchor = map!;
          baseIndex++;
          nextIndex++;
        } else {
          remove(1);
          insert(1);
        }
      }
    };
    const steps = diffTokenOps(base.content.map(blockIdentity), next.content.map(blockIdentity));
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
      else keep(step.count);
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

/**
 * Empties a client's copy of an outline, as `origin` (its provider, which
 * then sends nothing of it). Each connection's outline is built anew by the
 * server, its items its own: a copy kept across a reconnect would take the
 * next connection's list as a second one, every id twice.
 */
export function forgetOutline(doc: Y.Doc, origin: unknown): void {
  const outline = doc.getArray<string>(OUTLINE_ROOT);
  doc.transact(() => outline.delete(0, outline.length), origin);
}
