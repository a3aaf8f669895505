/**
 * Block quotes set as quotes: every line of a quote gets the quote's bar and
 * colour, and its `>` marks (with the space after) are hidden unless the
 * caret is on that line.
 */
import { Decoration } from "@codemirror/view";
import { hidden, visibleDecorations } from "./decorate";

const quoteLine = Decoration.line({ class: "cm-lp-quote" });

export const quotes = visibleDecorations((node, at) => {
  const { doc } = at.state;
  if (node.name === "Blockquote" && node.node.parent?.name !== "Blockquote") {
    for (let line = doc.lineAt(node.from); ; line = doc.line(line.number + 1)) {
      at.add(line.from, line.from, quoteLine);
      if (line.to >= node.to || line.number === doc.lines) break;
    }
    return undefined;
  }
  if (node.name === "QuoteMark") {
    const line = doc.lineAt(node.from);
    if (at.revealed(line.from, line.to)) return false;
    const to = doc.sliceString(node.to, node.to + 1) === " " ? node.to + 1 : node.to;
    at.add(node.from, to, hidden);
    return false;
  }
  return undefined;
});
