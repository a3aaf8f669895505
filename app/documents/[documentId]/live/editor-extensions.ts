/**
 * CodeMirror pieces of the section editor: markdown styled inline, and
 * comment markup kept intact while shown as highlights. Comment tags are found
 * by the server's own tokenizer (`commentTagTokens`), paired like the
 * rendered view pairs them (`commentTagPairs`): each tag is hidden behind an
 * atomic replace decoration (the cursor steps over it), the commented text is
 * marked, and local edits that would touch a tag are dropped, since the
 * server refuses a commit that loses a comment's tags. Edits arriving from
 * the room (other people, the server) always apply, or the editor and the
 * shared text would part.
 */
import { HighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { EditorState, type Extension, RangeSetBuilder, StateField } from "@codemirror/state";
import { Decoration, type DecorationSet, EditorView } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { ySyncAnnotation } from "y-codemirror.next";
import { commentTagTokens } from "@/server/core/comment-markup";
import { commentTagPairs } from "../comment-markup";

interface CommentMarkup {
  /** Every tag, hidden. */
  hidden: DecorationSet;
  /** Hidden tags plus the highlighted text between balanced pairs. */
  shown: DecorationSet;
  /** [from, to] of every tag, flat, for the change filter. */
  tagRanges: number[];
}

const hiddenTag = Decoration.replace({});
const commentedText = Decoration.mark({ class: "cm-comment-mark", attributes: { title: "Commented text" } });

function commentMarkup(state: EditorState): CommentMarkup {
  const text = state.doc.toString();
  const tokens = commentTagTokens(text);
  const hidden = new RangeSetBuilder<Decoration>();
  const tagRanges: number[] = [];
  const ranges: Array<{ from: number; to: number; decoration: Decoration }> = [];
  for (const token of tokens) {
    const from = token.index;
    const to = token.index + token.raw.length;
    hidden.add(from, to, hiddenTag);
    tagRanges.push(from, to);
    ranges.push({ from, to, decoration: hiddenTag });
  }
  for (const { open, close } of commentTagPairs(tokens)) {
    const from = open.index + open.raw.length;
    if (close.index > from) ranges.push({ from, to: close.index, decoration: commentedText });
  }
  const shown = Decoration.set(
    ranges.map((r) => r.decoration.range(r.from, r.to)),
    true,
  );
  return { hidden: hidden.finish(), shown, tagRanges };
}

const commentMarkupField = StateField.define<CommentMarkup>({
  create: commentMarkup,
  update: (value, tr) => (tr.docChanged ? commentMarkup(tr.state) : value),
  provide: (field) => [
    EditorView.decorations.from(field, (markup) => markup.shown),
    EditorView.atomicRanges.of((view) => view.state.field(field).hidden),
  ],
});

/** Local edits never touch a comment tag; remote ones are the room's truth and always apply. */
const keepCommentTags = EditorState.changeFilter.of((tr) => {
  if (tr.annotation(ySyncAnnotation) !== undefined) return true;
  const ranges = tr.startState.field(commentMarkupField).tagRanges;
  return ranges.length === 0 ? true : ranges;
});

export const commentMarkupExtension: Extension = [commentMarkupField, keepCommentTags];

/** Markdown styled where it is written: headings larger, emphasis, links and code set apart. */
export const proseHighlighting: Extension = syntaxHighlighting(
  HighlightStyle.define([
    { tag: tags.heading1, fontSize: "1.35em", fontWeight: "700" },
    { tag: tags.heading2, fontSize: "1.2em", fontWeight: "700" },
    { tag: [tags.heading3, tags.heading4, tags.heading5, tags.heading6], fontSize: "1.05em", fontWeight: "700" },
    { tag: tags.strong, fontWeight: "700" },
    { tag: tags.emphasis, fontStyle: "italic" },
    { tag: tags.strikethrough, textDecoration: "line-through" },
    { tag: [tags.link, tags.url], color: "var(--accent)", textDecoration: "underline" },
    { tag: tags.monospace, fontFamily: "var(--font-mono, ui-monospace, monospace)", backgroundColor: "#f1f1ee", borderRadius: "3px" },
    { tag: [tags.processingInstruction, tags.contentSeparator, tags.list], color: "#7a7a74" },
    { tag: tags.quote, color: "#55554f", fontStyle: "italic" },
  ]),
);

/** The editor's own look: prose, not code (no gutter, wrapped lines, the page's font). */
export const proseTheme: Extension = EditorView.theme({
  "&": { fontSize: "inherit", backgroundColor: "transparent" },
  "&.cm-focused": { outline: "none" },
  ".cm-content": { fontFamily: "inherit", padding: "0", lineHeight: "1.6", caretColor: "var(--text, #1d1d1b)" },
  ".cm-line": { padding: "0" },
  ".cm-scroller": { fontFamily: "inherit", overflow: "visible" },
  // Remote carets keep their name label visible, not only on hover: you see who is typing where.
  ".cm-ySelectionInfo": { opacity: "1", fontFamily: "inherit", top: "-1.35em", borderRadius: "3px", padding: "0 4px" },
});
