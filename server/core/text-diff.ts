/**
 * Unified line diffs (for merge-request `sourceDiff` / `targetDiff`), computed
 * with jsdiff and bounded so that large or pathological inputs never hang.
 *
 * Strategy, for a pair of texts split into lines (each line keeps its "\n"):
 *
 * 1. Equal texts give "".
 * 2. The common prefix and suffix lines are trimmed (linear time).
 * 3. The middle is diffed with jsdiff's Myers (`diffArrays`) bounded by
 *    `maxEditLength`. Myers costs about O((N+M)·D + D²) for D edits, so the
 *    bound is chosen to keep (N+M)·D under a per-attempt cap, and that work
 *    is charged to a budget for the whole diff.
 * 4. When the bound is hit, the middle is split at anchors the patience way
 *    (lines that occur exactly once on each side, longest increasing run of
 *    their positions) and each gap between anchors goes back to step 2. A gap
 *    with no anchor left becomes one coarse hunk (all old lines removed, all
 *    new lines added) — always a correct patch, just not a minimal one.
 *
 * A global work budget and a recursion depth limit bound the whole thing, so a
 * 20,000-line rewrite or a 1-line vs 13,000-line pair finish in milliseconds.
 * Everything is deterministic: no wall-clock timeouts, so the same inputs
 * always give the same patch.
 *
 * Lines are one kind of token: `diffTokenOps` runs the same strategy on any
 * token list (the live rooms line up a section's blocks with it), and
 * `diffCharOps` uses it one level up from characters (see there).
 */
import { diffArrays, diffChars, formatPatch, FILE_HEADERS_ONLY, type StructuredPatch, type StructuredPatchHunk } from "diff";

export const DIFF_CONTEXT_LINES = 3;

/** Max edit length (D) of one bounded Myers attempt. */
const MAX_EDIT_LENGTH = 256;
/** Max work, (N+M)·D, of one Myers attempt: a long range gets a smaller bound, and with few edits still succeeds. */
const MAX_ATTEMPT_WORK = 262_144;
/** Total (N+M)·D spent on Myers attempts before only anchors and coarse hunks are used. */
const MYERS_BUDGET = 2_000_000;
/** Patience recursion depth limit; deeper gaps become coarse hunks. */
const MAX_ANCHOR_DEPTH = 32;

export interface DiffLabels {
  /** Header of the old side (`--- <before>`). Default "before". */
  before?: string;
  /** Header of the new side (`+++ <after>`). Default "after". */
  after?: string;
}

/** 0 = common, 1 = removed, 2 = added. */
export type DiffOp = 0 | 1 | 2;
/** `count` consecutive tokens (lines, chunks, blocks; UTF-16 code units for `diffCharOps`) kept, removed from the old side or added from the new. */
export interface DiffStep {
  op: DiffOp;
  count: number;
}

interface DiffState {
  a: readonly string[];
  b: readonly string[];
  /** Steps in order; each covers `count` tokens starting at the current positions. */
  ops: DiffStep[];
  myersBudget: number;
}

/** Splits text into lines, each keeping its trailing "\n" (the last may lack one). */
export function splitLinesKeepEol(text: string): string[] {
  if (text === "") return [];
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const nl = text.indexOf("\n", start);
    if (nl === -1) {
      if (start < text.length) lines.push(text.slice(start));
      return lines;
    }
    lines.push(text.slice(start, nl + 1));
    start = nl + 1;
  }
}

function push(state: { ops: DiffStep[] }, op: DiffOp, count: number): void {
  if (count <= 0) return;
  const last = state.ops[state.ops.length - 1];
  if (last && last.op === op) last.count += count;
  else state.ops.push({ op, count });
}

/** Emits a coarse replacement of a[a0,a1) by b[b0,b1). */
function coarse(state: DiffState, a0: number, a1: number, b0: number, b1: number): void {
  push(state, 1, a1 - a0);
  push(state, 2, b1 - b0);
}

/** Diffs a[a0,a1) against b[b0,b1), appending ops. */
function diffRange(state: DiffState, a0: number, a1: number, b0: number, b1: number, depth: number): void {
  const { a, b } = state;
  // Common prefix.
  let pre = 0;
  while (a0 + pre < a1 && b0 + pre < b1 && a[a0 + pre] === b[b0 + pre]) pre++;
  push(state, 0, pre);
  a0 += pre;
  b0 += pre;
  // Common suffix (emitted after the middle).
  let suf = 0;
  while (a1 - suf > a0 && b1 - suf > b0 && a[a1 - suf - 1] === b[b1 - suf - 1]) suf++;
  a1 -= suf;
  b1 -= suf;

  if (a0 === a1 || b0 === b1) {
    coarse(state, a0, a1, b0, b1);
  } else if (a1 - a0 === 1 || b1 - b0 === 1) {
    singleLine(state, a0, a1, b0, b1);
  } else if (!myers(state, a0, a1, b0, b1) && !(depth < MAX_ANCHOR_DEPTH && anchored(state, a0, a1, b0, b1, depth))) {
    coarse(state, a0, a1, b0, b1);
  }
  push(state, 0, suf);
}

/**
 * One side of the (trimmed) range is a single line: the longest common
 * subsequence has at most that line, so matching its first occurrence on the
 * other side is optimal. Saves a Myers call for the many 1-line gaps.
 */
function singleLine(state: DiffState, a0: number, a1: number, b0: number, b1: number): void {
  const { a, b } = state;
  if (a1 - a0 === 1) {
    const at = indexIn(b, a[a0]!, b0, b1);
    if (at === -1) {
      coarse(state, a0, a1, b0, b1);
      return;
    }
    push(state, 2, at - b0);
    push(state, 0, 1);
    push(state, 2, b1 - at - 1);
  } else {
    const at = indexIn(a, b[b0]!, a0, a1);
    if (at === -1) {
      coarse(state, a0, a1, b0, b1);
      return;
    }
    push(state, 1, at - a0);
    push(state, 0, 1);
    push(state, 1, a1 - at - 1);
  }
}

function indexIn(lines: readonly string[], line: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (lines[i] === line) return i;
  return -1;
}

/**
 * Runs one bounded Myers attempt (`diff`, jsdiff with `maxEditLength`) on
 * `size` tokens within the budget, charging the work done: size × the edits
 * found, or size × the bound when the bound is hit. Undefined when the bound is
 * hit or the budget cannot pay for an attempt.
 */
function boundedMyers<T extends { added: boolean; removed: boolean; count: number }>(
  budget: { myersBudget: number },
  size: number,
  diff: (maxEditLength: number) => T[] | undefined,
): T[] | undefined {
  const limit = Math.min(size, MAX_EDIT_LENGTH, Math.floor(Math.min(budget.myersBudget, MAX_ATTEMPT_WORK) / size));
  if (limit < 1) return undefined;
  const changes = diff(limit);
  let edits = limit;
  if (changes) edits = changes.reduce((sum, c) => (c.added || c.removed ? sum + c.count : sum), 0);
  budget.myersBudget -= size * Math.max(edits, 1);
  return changes;
}

/** One bounded jsdiff Myers attempt on token ranges; false when the bound or the budget is hit. */
function myers(state: DiffState, a0: number, a1: number, b0: number, b1: number): boolean {
  const changes = boundedMyers(state, a1 - a0 + (b1 - b0), (maxEditLength) =>
    diffArrays(state.a.slice(a0, a1), state.b.slice(b0, b1), { maxEditLength }),
  );
  if (!changes) return false;
  for (const c of changes) push(state, c.added ? 2 : c.removed ? 1 : 0, c.count);
  return true;
}

/**
 * Patience split: anchors are lines occurring exactly once in a[a0,a1) and
 * once in b[b0,b1); the longest run of anchors increasing on both sides splits
 * the range into gaps diffed recursively. False when there is no anchor.
 */
function anchored(state: DiffState, a0: number, a1: number, b0: number, b1: number, depth: number): boolean {
  const { a, b } = state;
  // line -> index in a if unique (-1 when repeated)
  const inA = new Map<string, number>();
  for (let i = a0; i < a1; i++) {
    const line = a[i]!;
    inA.set(line, inA.has(line) ? -1 : i);
  }
  const inB = new Map<string, number>();
  for (let j = b0; j < b1; j++) {
    const line = b[j]!;
    if (inA.has(line) && inA.get(line) !== -1) inB.set(line, inB.has(line) ? -1 : j);
  }
  // Candidate pairs in b order, keyed by a index.
  const pairs: Array<[number, number]> = [];
  for (let j = b0; j < b1; j++) {
    const line = b[j]!;
    if (inB.get(line) === j) pairs.push([inA.get(line)!, j]);
  }
  if (pairs.length === 0) return false;
  // Longest increasing subsequence of a indices (pairs already increase in b).
  const tails: number[] = []; // index into pairs
  const prev: number[] = new Array<number>(pairs.length).fill(-1);
  for (let k = 0; k < pairs.length; k++) {
    const ai = pairs[k]![0];
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (pairs[tails[mid]!]![0] < ai) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[k] = tails[lo - 1]!;
    tails[lo] = k;
  }
  const chain: Array<[number, number]> = [];
  for (let k = tails[tails.length - 1]!; k !== -1; k = prev[k]!) chain.push(pairs[k]!);
  chain.reverse();

  let pa = a0;
  let pb = b0;
  for (const [ai, bj] of chain) {
    diffRange(state, pa, ai, pb, bj, depth + 1);
    push(state, 0, 1);
    pa = ai + 1;
    pb = bj + 1;
  }
  diffRange(state, pa, a1, pb, b1, depth + 1);
  return true;
}

/** Turns an op list into unified-diff hunks with `context` lines of context. */
function toHunks(a: string[], b: string[], ops: readonly DiffStep[], context: number): StructuredPatchHunk[] {
  // Expand ops into line-addressed segments.
  const hunks: StructuredPatchHunk[] = [];
  let ia = 0;
  let ib = 0;
  let hunk: StructuredPatchHunk | null = null;
  const line = (prefix: string, text: string, out: string[]) => {
    if (text.endsWith("\n")) out.push(prefix + text.slice(0, -1));
    else out.push(prefix + text, "\\ No newline at end of file");
  };
  for (let k = 0; k < ops.length; k++) {
    const { op, count } = ops[k]!;
    if (op === 0) {
      if (hunk) {
        const isLast = k === ops.length - 1;
        if (!isLast && count <= 2 * context) {
          for (let i = 0; i < count; i++) line(" ", a[ia + i]!, hunk.lines);
          hunk.oldLines += count;
          hunk.newLines += count;
        } else {
          const take = Math.min(count, context);
          for (let i = 0; i < take; i++) line(" ", a[ia + i]!, hunk.lines);
          hunk.oldLines += take;
          hunk.newLines += take;
          hunks.push(hunk);
          hunk = null;
        }
      }
      ia += count;
      ib += count;
    } else {
      if (!hunk) {
        const take = Math.min(context, ia);
        hunk = { oldStart: ia - take + 1, oldLines: take, newStart: ib - take + 1, newLines: take, lines: [] };
        for (let i = ia - take; i < ia; i++) line(" ", a[i]!, hunk.lines);
      }
      if (op === 1) {
        for (let i = 0; i < count; i++) line("-", a[ia + i]!, hunk.lines);
        hunk.oldLines += count;
        ia += count;
      } else {
        for (let i = 0; i < count; i++) line("+", b[ib + i]!, hunk.lines);
        hunk.newLines += count;
        ib += count;
      }
    }
  }
  if (hunk) hunks.push(hunk);
  return hunks;
}

/** The edit script from token list `a` to token list `b`, bounded as above (tokens compare by `===`). */
export function diffTokenOps(a: readonly string[], b: readonly string[]): DiffStep[] {
  const state: DiffState = { a, b, ops: [], myersBudget: MYERS_BUDGET };
  diffRange(state, 0, a.length, 0, b.length, 0);
  return state.ops;
}

/** The line-level edit script from `before` to `after` (exposed for tests and other views). */
export function diffLineOps(before: string, after: string): { a: string[]; b: string[]; ops: DiffStep[] } {
  const a = splitLinesKeepEol(before);
  const b = splitLinesKeepEol(after);
  return { a, b, ops: diffTokenOps(a, b) };
}

/**
 * Unified diff from `before` to `after`: `--- before` / `+++ after` header
 * lines, then `@@` hunks with 3 lines of context. "" when the texts are equal.
 * `applyPatch(before, unifiedDiff(before, after))` gives back `after`.
 */
export function unifiedDiff(before: string, after: string, labels: DiffLabels = {}): string {
  if (before === after) return "";
  const { a, b, ops } = diffLineOps(before, after);
  const patch: StructuredPatch = {
    oldFileName: labels.before ?? "before",
    newFileName: labels.after ?? "after",
    oldHeader: undefined,
    newHeader: undefined,
    hunks: toHunks(a, b, ops, DIFF_CONTEXT_LINES),
  };
  return formatPatch(patch, FILE_HEADERS_ONLY);
}

/*
 * Character-level diffs (the live rooms apply a committed change into a
 * Y.Text with them, see server/collab/codec.ts). Plain Myers over characters
 * costs O(N·D) time and memory: a 20,000-character rewrite took seconds. So
 * the strategy above runs one level up, on chunks of text:
 *
 * 1. The common prefix and suffix are trimmed (linear time).
 * 2. The middle of each side is cut into content-defined chunks: where a
 *    rolling hash of the last 32 code units has its top 6 bits zero, at least
 *    32 and at most 256 code units apart (about 96 on average). A cut depends
 *    on the text just before it (and the previous cut), so text both sides
 *    share is cut the same way on both within a chunk or two of an edit.
 * 3. The chunk lists are diffed as tokens by the strategy above (bounded
 *    Myers, patience anchors, coarse hunks), which finds the few chunks an
 *    edit touched.
 * 4. Each run of changed chunks is diffed by characters: its own common
 *    prefix and suffix trimmed, then jsdiff's `diffChars` bounded the same
 *    way, from the same budget. A run whose middle exceeds its bound, or comes
 *    once the budget is spent, is replaced whole: a correct script, just a
 *    coarser one (for the live rooms: those characters are deleted and
 *    inserted rather than kept).
 *
 * Work is linear in the texts plus the budget, whatever they are; no
 * wall-clock timeout, so the same texts always give the same script. Counts
 * are UTF-16 code units (as `String.length` and Y.Text count), and no step
 * boundary falls inside a surrogate pair.
 */

/** Top 6 bits of the rolling hash zero: a cut every 64 code units on average, after the minimum. */
const CHUNK_BOUNDARY_MASK = 0xfc000000 | 0;
const MIN_CHUNK_LENGTH = 32;
const MAX_CHUNK_LENGTH = 256;
/**
 * Myers budget of one `diffCharOps`, chunk and character diffs together:
 * smaller than a line diff's, as a character diff runs in a live room's
 * head move, on the event loop (≈ 30 ns a unit: about 15 ms at worst).
 */
const CHAR_MYERS_BUDGET = 500_000;

/** Gear-hash table: a fixed pseudo-random 32-bit value per byte (splitmix32), so chunks are cut the same way in every process. */
const GEAR = (() => {
  const table = new Int32Array(256);
  let seed = 0;
  for (let i = 0; i < table.length; i++) {
    seed = (seed + 0x9e3779b9) | 0;
    let z = seed;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    table[i] = z ^ (z >>> 16);
  }
  return table;
})();

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** Length of the common prefix of `a` and `b`, not ending inside a surrogate pair. */
function commonPrefixLength(a: string, b: string): number {
  const max = Math.min(a.length, b.length);
  let length = 0;
  while (length < max && a.charCodeAt(length) === b.charCodeAt(length)) length++;
  if (length > 0 && isHighSurrogate(a.charCodeAt(length - 1))) length--;
  return length;
}

/** Length of the common suffix of `a` and `b` outside their first `prefix` code units, not starting inside a surrogate pair. */
function commonSuffixLength(a: string, b: string, prefix: number): number {
  const max = Math.min(a.length, b.length) - prefix;
  let length = 0;
  while (length < max && a.charCodeAt(a.length - 1 - length) === b.charCodeAt(b.length - 1 - length)) length++;
  if (length > 0 && isLowSurrogate(a.charCodeAt(a.length - length))) length--;
  return length;
}

/** Cuts text[from, to) into content-defined chunks (see above). */
function splitChunks(text: string, from: number, to: number): string[] {
  const chunks: string[] = [];
  let start = from;
  let hash = 0;
  for (let i = from; i < to; i++) {
    const unit = text.charCodeAt(i);
    // Shifted left once per unit: bit k of the hash depends on the last k + 1 units only.
    hash = ((hash << 1) + GEAR[(unit ^ (unit >>> 8)) & 0xff]!) | 0;
    const length = i + 1 - start;
    if (isHighSurrogate(unit) || length < MIN_CHUNK_LENGTH) continue;
    if ((hash & CHUNK_BOUNDARY_MASK) === 0 || length >= MAX_CHUNK_LENGTH) {
      chunks.push(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < to) chunks.push(text.slice(start, to));
  return chunks;
}

/** Appends the character-level script from `removed` to `added` (a run of changed chunks), paid from `budget`. */
function diffChangedRun(state: { ops: DiffStep[]; myersBudget: number }, removed: string, added: string): void {
  const prefix = commonPrefixLength(removed, added);
  const suffix = commonSuffixLength(removed, added, prefix);
  const from = removed.slice(prefix, removed.length - suffix);
  const to = added.slice(prefix, added.length - suffix);
  push(state, 0, prefix);
  // With one side empty, removing or adding the other whole is the exact script.
  const parts =
    from.length > 0 && to.length > 0
      ? boundedMyers(state, from.length + to.length, (maxEditLength) => diffChars(from, to, { maxEditLength }))
      : undefined;
  if (parts) for (const part of parts) push(state, part.added ? 2 : part.removed ? 1 : 0, part.value.length);
  else {
    push(state, 1, from.length);
    push(state, 2, to.length);
  }
  push(state, 0, suffix);
}

/**
 * The steps with each edit slid sideways over a common run it repeats, where
 * that joins it to the edit beyond (diff-match-patch's cleanupMerge, second
 * pass): `A<ins>BA</ins>C` is `<ins>AB</ins>AC`, and `A<ins>BA</ins>` joins
 * an insertion before the `A`. A minimal diff may split one typed run around
 * characters it repeats: "\n⟦m-10⟧\n" typed just before "⟦m-4⟧" can come out
 * as an insertion of "\n", a common "⟦m-", an insertion of "10⟧\n⟦m-"; the
 * common characters are then the typed ones, and an edit of the base's
 * marker lands in the typed one. Only an edit of one kind between two common
 * runs slides, by a whole common run, until nothing slides.
 */
export function withEditsSlidTogether(steps: readonly DiffStep[], before: string, after: string): DiffStep[] {
  const runs = textRuns(steps, before, after);
  /** Joins the run at `k` into the one before it when they are of one kind; true when it did. */
  const joinBack = (k: number): boolean => {
    const [earlier, later] = [runs[k - 1], runs[k]];
    if (!earlier || !later || earlier.op !== later.op) return false;
    earlier.text += later.text;
    runs.splice(k, 1);
    return true;
  };
  // One pass that steps back after a slide (the joined edit may slide again): each slide removes a common run, so
  // the pass is linear in the runs plus the slides.
  for (let i = 1; i < runs.length - 1; ) {
    const [previous, edit, following] = [runs[i - 1]!, runs[i]!, runs[i + 1]!];
    if (previous.op !== 0 || following.op !== 0 || edit.op === 0) {
      i++;
      continue;
    }
    if (edit.text.endsWith(previous.text)) {
      // Left: the common run before becomes the edit's start, and is common again after it.
      edit.text = previous.text + edit.text.slice(0, edit.text.length - previous.text.length);
      following.text = previous.text + following.text;
      runs.splice(i - 1, 1);
      i = joinBack(i - 1) ? i - 2 : i - 1;
    } else if (edit.text.startsWith(following.text)) {
      previous.text += following.text;
      edit.text = edit.text.slice(following.text.length) + following.text;
      runs.splice(i + 1, 1);
      joinBack(i + 1);
    } else i++;
    i = Math.max(1, i);
  }
  return stepsOf(runs);
}

/** The steps as runs of one kind with their text (of `before` for common and removed runs, of `after` for added ones). */
function textRuns(steps: readonly DiffStep[], before: string, after: string): Array<{ op: DiffOp; text: string }> {
  const runs: Array<{ op: DiffOp; text: string }> = [];
  let b = 0;
  let a = 0;
  for (const { op, count } of steps) {
    if (count <= 0) continue;
    const text = op === 2 ? after.slice(a, a + count) : before.slice(b, b + count);
    if (op !== 2) b += count;
    if (op !== 1) a += count;
    const last = runs.at(-1);
    if (last && last.op === op) last.text += text;
    else runs.push({ op, text });
  }
  return runs;
}

function stepsOf(runs: ReadonlyArray<{ op: DiffOp; text: string }>): DiffStep[] {
  const out: DiffStep[] = [];
  for (const run of runs) if (run.text.length > 0) push({ ops: out }, run.op, run.text.length);
  return out;
}

/** How far an edit is slid looking for a better place (a long run of one repeated character would be walked whole). */
const BOUNDARY_SLIDE_LIMIT = 256;

/**
 * How good a place the boundary between `left` and `right` is for an edit to
 * start or end (diff-match-patch's cleanupSemanticScore): the edge of the
 * text 6, a blank line 5, a line break 4, the end of a sentence 3,
 * whitespace 2, other punctuation 1, inside a word 0. Never inside a
 * surrogate pair (-1).
 */
function boundaryScore(left: string, right: string): number {
  if (left.length === 0 || right.length === 0) return 6;
  const last = left.charCodeAt(left.length - 1);
  if (isHighSurrogate(last)) return -1;
  const [one, two] = [left[left.length - 1]!, right[0]!];
  const nonAlphanumeric1 = !/[\p{L}\p{N}]/u.test(one);
  const nonAlphanumeric2 = !/[\p{L}\p{N}]/u.test(two);
  const whitespace1 = nonAlphanumeric1 && /\s/.test(one);
  const whitespace2 = nonAlphanumeric2 && /\s/.test(two);
  const lineBreak1 = whitespace1 && /[\r\n]/.test(one);
  const lineBreak2 = whitespace2 && /[\r\n]/.test(two);
  // Only the characters beside the boundary are looked at (the common runs may be the whole text).
  if (/\n\r?\n$/.test(left.slice(-3)) || /^\r?\n\r?\n/.test(right.slice(0, 4))) return 5;
  if (lineBreak1 || lineBreak2) return 4;
  if (nonAlphanumeric1 && !whitespace1 && whitespace2) return 3;
  if (whitespace1 || whitespace2) return 2;
  if (nonAlphanumeric1 || nonAlphanumeric2) return 1;
  return 0;
}

/** An edit's place between two common runs: the sum of its two boundaries' scores; -1 if either splits a surrogate pair. */
function placeScore(left: string, edit: string, right: string): number {
  const [start, end] = [boundaryScore(left, edit), boundaryScore(edit, right)];
  return start < 0 || end < 0 ? -1 : start + end;
}

/**
 * The steps with each edit that stands alone between two common runs slid
 * sideways to the best boundary it can take (diff-match-patch's
 * cleanupSemanticLossless): where the edit repeats the text beside it, the
 * diff may place it anywhere along the repeat, and the minimal script's
 * choice can cut through words. " ⟦m-27⟧ " typed just before " ⟦m-20⟧ "
 * can come out as a common " ⟦m-2", an insertion of "7⟧  ⟦m-2", a common
 * "0⟧ ": read as "these are still the base's characters", the typed marker
 * is taken for the base's one, and a change that removes the base's marker
 * removes most of the typed one (the live fuzzer's seed 773894). At word
 * boundaries the insertion is the typed marker whole. The same characters
 * are common and edited either way; only which of the repeated ones changes.
 */
export function withEditsAtWordBoundaries(steps: readonly DiffStep[], before: string, after: string): DiffStep[] {
  const runs = textRuns(steps, before, after);
  for (let i = 1; i < runs.length - 1; i++) {
    const [previous, edit, following] = [runs[i - 1]!, runs[i]!, runs[i + 1]!];
    if (previous.op !== 0 || following.op !== 0 || edit.op === 0) continue;
    // Slid as far left as the edit's end repeats the common text before it, then tried at each place to the right.
    let shift = 0;
    while (
      shift < Math.min(previous.text.length, edit.text.length, BOUNDARY_SLIDE_LIMIT) &&
      previous.text[previous.text.length - 1 - shift] === edit.text[edit.text.length - 1 - shift]
    )
      shift++;
    let left = previous.text.slice(0, previous.text.length - shift);
    let middle = edit.text.slice(edit.text.length - shift) + edit.text.slice(0, edit.text.length - shift);
    let right = edit.text.slice(edit.text.length - shift) + following.text;
    let best = { left, middle, right, score: placeScore(left, middle, right) };
    for (let step = 0; step < BOUNDARY_SLIDE_LIMIT && right.length > 0 && middle[0] === right[0]; step++) {
      left += middle[0];
      middle = middle.slice(1) + right[0];
      right = right.slice(1);
      const score = placeScore(left, middle, right);
      // Ties go right, as diff-match-patch's do.
      if (score >= best.score) best = { left, middle, right, score };
    }
    previous.text = best.left;
    edit.text = best.middle;
    following.text = best.right;
  }
  return stepsOf(runs);
}

/**
 * The steps with their coincidental equalities turned into edits: a common
 * run no longer than the edits on each side of it (up to the neighbouring
 * common runs), the rule of diff-match-patch's semantic cleanup, where
 * characters of `before` were removed beside it. A minimal diff lines up any
 * characters two texts happen to share, so between a deleted stretch and a
 * typed one it keeps a space here, a `⟦` there; read as "this character is
 * still the old one", such a match is wrong. With nothing removed on either
 * side there is no deleted stretch to take the run from: text only added
 * around it (typing before and after a word) leaves it what it is. Linear:
 * each merge is checked once against the common run before it.
 */
export function withoutCoincidentalEqualities(steps: readonly DiffStep[]): DiffStep[] {
  type Run = { common: number } | { removed: number; added: number };
  const runs: Run[] = [];
  const edits = (run: Run | undefined) => (run && !("common" in run) ? run : null);
  for (const { op, count } of steps) {
    if (count <= 0) continue;
    if (op === 0) {
      runs.push({ common: count });
      continue;
    }
    let edit = edits(runs.at(-1));
    if (!edit) {
      edit = { removed: 0, added: 0 };
      runs.push(edit);
    }
    if (op === 1) edit.removed += count;
    else edit.added += count;
    // A common run between two edit runs each at least as long is coincidental: the three become one edit run.
    for (;;) {
      const right = edits(runs.at(-1));
      const middle = runs.at(-2);
      const left = edits(runs.at(-3));
      if (!right || !left || !middle || !("common" in middle)) break;
      const length = middle.common;
      if (length > left.removed + left.added || length > right.removed + right.added) break;
      if (left.removed === 0 && right.removed === 0) break;
      runs.splice(-3, 3, { removed: left.removed + length + right.removed, added: left.added + length + right.added });
    }
  }
  const out: DiffStep[] = [];
  for (const run of runs) {
    if ("common" in run) push({ ops: out }, 0, run.common);
    else {
      push({ ops: out }, 1, run.removed);
      push({ ops: out }, 2, run.added);
    }
  }
  return out;
}

/** The character-level edit script from `before` to `after` (counts in UTF-16 code units), in linear time plus a bounded budget. */
export function diffCharOps(before: string, after: string): DiffStep[] {
  const prefix = commonPrefixLength(before, after);
  const suffix = commonSuffixLength(before, after, prefix);
  const a = splitChunks(before, prefix, before.length - suffix);
  const b = splitChunks(after, prefix, after.length - suffix);
  // The chunk diff and the character diffs of its changed runs share one budget.
  const chunkState: DiffState = { a, b, ops: [], myersBudget: CHAR_MYERS_BUDGET };
  diffRange(chunkState, 0, a.length, 0, b.length, 0);
  const state = { ops: [] as DiffStep[], myersBudget: chunkState.myersBudget };
  push(state, 0, prefix);
  const length = (chunks: readonly string[], from: number, count: number) => {
    let sum = 0;
    for (let i = from; i < from + count; i++) sum += chunks[i]!.length;
    return sum;
  };
  let ia = 0;
  let ib = 0;
  let atA = prefix;
  let atB = prefix;
  const chunkSteps = chunkState.ops;
  for (let k = 0; k < chunkSteps.length; ) {
    if (chunkSteps[k]!.op === 0) {
      const { count } = chunkSteps[k++]!;
      const common = length(a, ia, count);
      push(state, 0, common);
      ia += count;
      ib += count;
      atA += common;
      atB += common;
      continue;
    }
    // A run of changed chunks, up to the next common one.
    let removed = 0;
    let added = 0;
    for (; k < chunkSteps.length && chunkSteps[k]!.op !== 0; k++) {
      const { op, count } = chunkSteps[k]!;
      if (op === 1) {
        removed += length(a, ia, count);
        ia += count;
      } else {
        added += length(b, ib, count);
        ib += count;
      }
    }
    diffChangedRun(state, before.slice(atA, atA + removed), after.slice(atB, atB + added));
    atA += removed;
    atB += added;
  }
  push(state, 0, suffix);
  return state.ops;
}
