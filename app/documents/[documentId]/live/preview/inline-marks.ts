/**
 * Bold, italic, strikethrough and inline code shown without their marks
 * (`**`, `_`, `~~`, backticks) unless the caret or selection touches the
 * marked text; the styling itself is the syntax highlighter's.
 */
import { visibleDecorations, hidden } from "./decorate";

const MARKED: Record<string, string> = {
  Emphasis: "EmphasisMark",
  StrongEmphasis: "EmphasisMark",
  Strikethrough: "StrikethroughMark",
  InlineCode: "CodeMark",
};

export const inlineMarks = visibleDecorations((node, at) => {
  const mark = MARKED[node.name];
  if (!mark || at.revealed(node.from, node.to)) return undefined;
  for (const child of node.node.getChildren(mark)) at.add(child.from, child.to, hidden);
  return undefined;
});
