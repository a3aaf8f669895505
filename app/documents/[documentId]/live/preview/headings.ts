/**
 * Headings at their size: each ATX heading's line is set as a heading of its
 * level, and its `#` marks (with the space after them, and any closing `#`s)
 * are hidden unless the caret is on the line. A setext heading's text line is
 * sized the same; its underline stays, as typed.
 */
import { visibleDecorations, hidden } from "./decorate";
import { Decoration } from "@codemirror/view";

const lineOf = Array.from({ length: 6 }, (_, i) => Decoration.line({ class: `cm-lp-heading cm-lp-h${i + 1}` }));
const HEADING = /^(?:ATXHeading|SetextHeading)([1-6])$/;

export const headings = visibleDecorations((node, at) => {
  const level = HEADING.exec(node.name)?.[1];
  if (!level) return undefined;
  const line = at.state.doc.lineAt(node.from);
  at.add(line.from, line.from, lineOf[Number(level) - 1]!);
  if (node.name.startsWith("SetextHeading") || at.revealed(line.from, line.to)) return false;
  const marks = node.node.getChildren("HeaderMark");
  for (const mark of marks) {
    // The opening marks take the spaces after them; closing ones the spaces before.
    const opening = mark.from === node.from;
    const text = line.text;
    let from = mark.from;
    let to = mark.to;
    if (opening) while (to < line.to && text[to - line.from] === " ") to++;
    else while (from > line.from && text[from - line.from - 1] === " ") from--;
    if (to > from) at.add(from, to, hidden);
  }
  return false;
});
