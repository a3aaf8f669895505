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
 *    bound caps the work of one attempt.
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
 */
import { diffArrays, formatPatch, FILE_HEADERS_ONLY, type StructuredPatch, type StructuredPatchHunk } from "diff";

export const DIFF_CONTEXT_LINES = 3;

/** Max edit length (D) of one bounded Myers attempt. */
const MAX_EDIT_LENGTH = 256;
/** Total D² spent on Myers attempts (≈ 60 ns per unit) before only anchors and coarse hunks are used. */
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
export type LineOp = 0 | 1 | 2;
type Op = LineOp;

interface DiffState {
  a: string[];
  b: string[];
  /** Ops in order; each op covers `count` lines starting at the current positions. */
  ops: Array<{ op: Op; count: number }>;
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

function push(state: DiffState, op: Op, count: number): void {
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

function indexIn(lines: string[], line: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (lines[i] === line) return i;
  return -1;
}

/** One bounded jsdiff Myers attempt; false when the bound or the budget is hit. */
function myers(state: DiffState, a0: number, a1: number, b0: number, b1: number): boolean {
  const n = a1 - a0 + (b1 - b0);
  const limit = Math.min(n, MAX_EDIT_LENGTH);
  const cost = limit * limit;
  if (cost > state.myersBudget) return false;
  state.myersBudget -= cost;
  const changes = diffArrays(state.a.slice(a0, a1), state.b.slice(b0, b1), { maxEditLength: limit });
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
function toHunks(a: string[], b: string[], ops: DiffState["ops"], context: number): StructuredPatchHunk[] {
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

/** The line-level edit script from `before` to `after` (exposed for tests and other views). */
export function diffLineOps(before: string, after: string): { a: string[]; b: string[]; ops: Array<{ op: Op; count: number }> } {
  const state: DiffState = { a: splitLinesKeepEol(before), b: splitLinesKeepEol(after), ops: [], myersBudget: MYERS_BUDGET };
  diffRange(state, 0, state.a.length, 0, state.b.length, 0);
  return { a: state.a, b: state.b, ops: state.ops };
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
