/**
 * List editing as in any editor. Enter continues a list (lang-markdown's
 * `insertNewlineContinueMarkup`: the same bullet, the next number, an open
 * task); Enter on an empty item ends the list: a nested item moves out one
 * level, a top-level one loses its marker and is set apart from the list by a
 * blank line, so what is typed next is a paragraph of its own (without the
 * blank line markdown reads it as the last item's continuation). Backspace
 * right after a marker removes it (`deleteMarkupBackward`). Tab and
 * Shift+Tab move the items the selection is in (with their sub-items) one
 * level in or out; outside a list, Tab is left to the browser, which moves
 * focus on.
 */
import { deleteMarkupBackward, insertNewlineContinueMarkup } from "@codemirror/lang-markdown";
import { syntaxTree } from "@codemirror/language";
import { type ChangeSpec, type EditorState, type Extension, Prec, type StateCommand } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import type { SyntaxNode } from "@lezer/common";

/** A line that starts a list item: indentation, marker, and the spaces after it. */
const ITEM_LINE = /^(\s*)([-*+]|(\d+)([.)]))(\s+|$)/;
/** An item line with nothing after its marker (an open task's `[ ]` counts as nothing). */
const EMPTY_ITEM = /^\s*(?:[-*+]|\d+[.)])(?:\s+\[[ xX]\])?\s*$/;

/** The list item whose marker is on the line starting at `lineFrom`, if any. */
function itemStartingAt(state: EditorState, lineFrom: number, indent: number): SyntaxNode | null {
  for (let node: SyntaxNode | null = syntaxTree(state).resolveInner(lineFrom + indent, 1); node; node = node.parent) {
    if (node.name === "ListItem") return state.doc.lineAt(node.from).from === lineFrom ? node : null;
  }
  return null;
}

interface ItemLine {
  line: number;
  indent: number;
  number: number | null;
}

function itemLine(state: EditorState, lineNumber: number): ItemLine | null {
  const line = state.doc.line(lineNumber);
  const match = ITEM_LINE.exec(line.text);
  if (!match || !itemStartingAt(state, line.from, match[1]!.length)) return null;
  return { line: lineNumber, indent: match[1]!.length, number: match[3] === undefined ? null : Number(match[3]) };
}

/** The nearest item line above `lineNumber` (within its list) whose indentation passes `accept`. */
function itemAbove(state: EditorState, lineNumber: number, accept: (other: ItemLine) => boolean): ItemLine | null {
  for (let n = lineNumber - 1; n >= 1; n--) {
    const text = state.doc.line(n).text;
    if (!/\S/.test(text)) continue;
    const other = itemLine(state, n);
    if (other && accept(other)) return other;
    // A line at the left edge that is no item ends the list.
    if (!other && !/^\s/.test(text)) return null;
  }
  return null;
}

/**
 * Moves the items the selection is in by one level (`direction` 1: in, under the item above; -1: out, beside their
 * parent), each with its sub-items; a numbered item takes the number of its new place. False outside a list, so Tab
 * keeps moving focus there.
 */
function shiftItems(direction: 1 | -1): StateCommand {
  return ({ state, dispatch }) => {
    const items: Array<{ item: ItemLine; node: SyntaxNode }> = [];
    for (const range of state.selection.ranges) {
      for (let n = state.doc.lineAt(range.from).number; n <= state.doc.lineAt(range.to).number; n++) {
        const line = state.doc.line(n);
        const item = itemLine(state, n);
        const node = item && itemStartingAt(state, line.from, item.indent);
        // Sub-items of an item already moving move with it.
        if (item && node && !items.some((outer) => outer.node.from <= node.from && outer.node.to >= node.to)) items.push({ item, node });
      }
    }
    if (items.length === 0) {
      // Inside a list item's text (not on its marker line) Tab does nothing rather than leave the editor.
      const inList = state.selection.ranges.some((r) => {
        for (let node: SyntaxNode | null = syntaxTree(state).resolveInner(r.head, -1); node; node = node.parent)
          if (node.name === "ListItem") return true;
        return false;
      });
      return inList;
    }
    const changes: ChangeSpec[] = [];
    for (const { item, node } of items) {
      let target: number;
      let number: number | null = null;
      if (direction === 1) {
        const sibling = itemAbove(state, item.line, (other) => other.indent <= item.indent);
        if (!sibling || sibling.indent < item.indent) continue;
        const siblingText = state.doc.line(sibling.line).text;
        // Under the sibling's text: past its marker and the space after it.
        const marker = ITEM_LINE.exec(siblingText)!;
        target = sibling.indent + Math.max(marker[0].length - sibling.indent, marker[2]!.length + 1);
        const before = itemAbove(state, item.line, (other) => other.indent <= target);
        number = before && before.indent === target && before.number !== null ? before.number + 1 : 1;
      } else {
        if (item.indent === 0) continue;
        const parent = itemAbove(state, item.line, (other) => other.indent < item.indent);
        target = parent?.indent ?? 0;
        number = parent?.number !== null && parent?.number !== undefined ? parent.number + 1 : 1;
      }
      const delta = target - item.indent;
      const first = item.line;
      const last = state.doc.lineAt(node.to).number;
      for (let n = first; n <= last; n++) {
        const line = state.doc.line(n);
        const leading = /^\s*/.exec(line.text)![0].length;
        if (delta > 0 && /\S/.test(line.text)) changes.push({ from: line.from, insert: " ".repeat(delta) });
        else if (delta < 0) changes.push({ from: line.from, to: line.from + Math.min(leading, -delta) });
      }
      if (item.number !== null) {
        const match = ITEM_LINE.exec(state.doc.line(first).text)!;
        const at = state.doc.line(first).from + item.indent;
        changes.push({ from: at, to: at + match[3]!.length, insert: String(number) });
      }
    }
    if (changes.length === 0) return true;
    dispatch(state.update({ changes, userEvent: direction === 1 ? "input.indent" : "delete.dedent", scrollIntoView: true }));
    return true;
  };
}

export const indentListItem = shiftItems(1);
export const outdentListItem = shiftItems(-1);

/** Enter on an empty item: out one level if nested, else the list ends there (see the top of this file). */
export const endEmptyListItem: StateCommand = ({ state, dispatch }) => {
  const range = state.selection.main;
  if (state.selection.ranges.length > 1 || !range.empty) return false;
  const line = state.doc.lineAt(range.head);
  if (range.head !== line.to || !EMPTY_ITEM.test(line.text)) return false;
  const item = itemLine(state, line.number);
  if (!item) return false;
  if (item.indent > 0) return outdentListItem({ state, dispatch });
  const previous = line.number > 1 ? state.doc.line(line.number - 1) : null;
  const gap = previous && /\S/.test(previous.text) ? state.lineBreak : "";
  dispatch(
    state.update({
      changes: { from: line.from, to: line.to, insert: gap },
      selection: { anchor: line.from + gap.length },
      userEvent: "input",
      scrollIntoView: true,
    }),
  );
  return true;
};

/** The list keys, ahead of the editor's defaults. */
export const listEditing: Extension = Prec.high(
  keymap.of([
    { key: "Enter", run: endEmptyListItem },
    { key: "Enter", run: insertNewlineContinueMarkup },
    { key: "Backspace", run: deleteMarkupBackward },
    { key: "Tab", run: indentListItem, shift: outdentListItem },
  ]),
);
