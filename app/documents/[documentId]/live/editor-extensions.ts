/**
 * CodeMirror pieces of the section editor: markdown styled inline, and
 * comment markup kept intact while shown as highlights. Comment tags are found
 * by the server's own tokenizer (`commentTagTokens`), paired like the
 * rendered view pairs them (`commentTagPairs`): each tag is hidden behind an
 * atomic replace decoration (the cursor steps over it), the commented text is
 * marked, and local edits that would touch a tag are dropped, since the
 * server refuses a commit that loses a comment's tags. Edits arriving from
 * the room (other people, the server) always apply, or the editor and the
 * shared text would part. Each highlight carries its comment's id
 * (`data-comment-id`, for the comments panel to find it), is muted while
 * the comment is resolved (`setResolvedComments`) and flashes when the panel
 * brings it into view (`flashComment`). `withinLimits` keeps local edits
 * inside what the server stores (its limits in server/core): a change that
 * would pass them is refused whole and said so, before anything is lost.
 */
import { HighlightStyle } from "@codemirror/language";
import { ChangeSet, EditorState, type Extension, RangeSetBuilder, StateEffect, StateField, Transaction } from "@codemirror/state";
import { Decoration, type DecorationSet, EditorView } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { ySyncAnnotation } from "y-codemirror.next";
import { MAX_TEXT_BLOCK_CHARS } from "@/server/core/blocks";
import { commentTagTokens } from "@/server/core/comment-markup";
import { UNSTORABLE } from "@/server/core/limits";
import { MAX_NAME_CHARS } from "@/server/core/names";
import { commentTagPairs } from "../comment-markup";

interface CommentMarkup {
  /** Every tag, hidden. */
  hidden: DecorationSet;
  /** Hidden tags plus the highlighted text between balanced pairs (what the editor and its placeholder draw). */
  shown: DecorationSet;
  /** [from, to] of every tag, flat, for the change filter. */
  tagRanges: number[];
  /** The resolved comment ids, whose highlights are muted. */
  resolved: ReadonlySet<string>;
  /** The comment whose highlight flashes now. */
  flashing: string | null;
}

/** Tells an editor which comments are resolved now. */
export const setResolvedComments = StateEffect.define<ReadonlySet<string>>();
/** Flashes one comment's highlight (null: stops). Part of the editor's state, so a redrawn line keeps it. */
export const flashComment = StateEffect.define<string | null>();

const hiddenTag = Decoration.replace({});
const newComment = Decoration.mark({ class: "cm-comment-mark", attributes: { title: "Commented text" } });
const COMMENT_ID = /\sid="([^"]*)"/;

/** The highlight of one stored comment: its id on the element, muted while resolved. */
function commentedText(commentId: string, resolved: boolean, flashing: boolean): Decoration {
  return Decoration.mark({
    class: `cm-comment-mark${resolved ? " cm-comment-mark-resolved" : ""}${flashing ? " comment-flash" : ""}`,
    attributes: { title: resolved ? "Commented text (resolved)" : "Commented text", "data-comment-id": commentId },
  });
}

/** Where a stored comment's text starts in an editor's document (after its hidden opening tag), or null. */
export function commentPosition(state: EditorState, commentId: string): number | null {
  const open = commentTagTokens(state.doc.toString()).find((t) => !t.closing && COMMENT_ID.exec(t.raw)?.[1] === commentId);
  return open ? open.index + open.raw.length : null;
}

function commentMarkup(state: EditorState, resolved: ReadonlySet<string>, flashing: string | null = null): CommentMarkup {
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
    const commentId = COMMENT_ID.exec(open.raw)?.[1];
    const decoration = commentId === undefined ? newComment : commentedText(commentId, resolved.has(commentId), commentId === flashing);
    if (close.index > from) ranges.push({ from, to: close.index, decoration });
  }
  const shown = Decoration.set(
    ranges.map((r) => r.decoration.range(r.from, r.to)),
    true,
  );
  return { hidden: hidden.finish(), shown, tagRanges, resolved, flashing };
}

const commentMarkupField = StateField.define<CommentMarkup>({
  create: (state) => commentMarkup(state, new Set()),
  update: (value, tr) => {
    const resolved = tr.effects.findLast((e) => e.is(setResolvedComments))?.value;
    const flashing = tr.effects.findLast((e) => e.is(flashComment));
    return tr.docChanged || resolved || flashing
      ? commentMarkup(tr.state, resolved ?? value.resolved, flashing ? flashing.value : value.flashing)
      : value;
  },
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

/** The comment markup's decorations in this state: tags hidden, commented text highlighted. */
export const commentDecorations = (state: EditorState): DecorationSet => state.field(commentMarkupField).shown;

/** Comment markup hidden and highlighted, starting with these comments resolved. */
export const commentMarkupExtension = (resolved: ReadonlySet<string>): Extension => [
  commentMarkupField.init((state) => commentMarkup(state, resolved)),
  keepCommentTags,
];

/** What one editor holds at most, and what may never be typed into it. */
export interface EditorLimits {
  maxChars: number;
  /** Characters dropped from what is typed or pasted (a global pattern). */
  dropped: RegExp;
  /** What the person is told when a change of `inserted` characters would pass `maxChars`. */
  refusal: (inserted: number, pasted: boolean) => string;
}

const what = (inserted: number, pasted: boolean) =>
  pasted ? `your paste of ${inserted.toLocaleString("en")} character${inserted === 1 ? "" : "s"}` : "what you typed";

export const TEXT_BLOCK_LIMITS: EditorLimits = {
  maxChars: MAX_TEXT_BLOCK_CHARS,
  dropped: new RegExp(UNSTORABLE.source, "g"),
  refusal: (inserted, pasted) =>
    `This block can hold at most ${MAX_TEXT_BLOCK_CHARS.toLocaleString("en")} characters; ${what(inserted, pasted)} was not added — split it across blocks or upload it as a file.`,
};

/** A name is one line of text: line breaks and other control characters are dropped as well. */
export const SECTION_NAME_LIMITS: EditorLimits = {
  maxChars: MAX_NAME_CHARS,
  dropped: new RegExp(`${UNSTORABLE.source}|[\u0001-\u001f\u007f]`, "g"),
  refusal: (inserted, pasted) => `A section name can hold at most ${MAX_NAME_CHARS} characters; ${what(inserted, pasted)} was not added.`,
};

/**
 * Local edits kept within `limits`: dropped characters are taken out of what is inserted, and a change that would make the
 * text longer than `maxChars` is refused whole (the text stays as it was, no paste half applied) and `refused` is told why.
 * Edits from the room are the room's truth and always apply.
 */
export function withinLimits(limits: EditorLimits, refused: (message: string) => void): Extension {
  return EditorState.transactionFilter.of((tr) => {
    if (!tr.docChanged || tr.annotation(ySyncAnnotation) !== undefined) return tr;
    const kept: Array<{ from: number; to: number; insert: string }> = [];
    let dropped = false;
    tr.changes.iterChanges((from, to, _fromB, _toB, inserted) => {
      const typed = inserted.toString();
      const insert = typed.replace(limits.dropped, "");
      dropped ||= insert !== typed;
      kept.push({ from, to, insert });
    });
    const changes = dropped ? ChangeSet.of(kept, tr.startState.doc.length) : tr.changes;
    if (changes.newLength > limits.maxChars && changes.newLength > changes.length) {
      refused(
        limits.refusal(
          kept.reduce((sum, change) => sum + change.insert.length, 0),
          tr.isUserEvent("input.paste"),
        ),
      );
      return [];
    }
    if (!dropped) return tr;
    const userEvent = tr.annotation(Transaction.userEvent);
    return {
      changes,
      selection: tr.startState.selection.map(changes, 1),
      scrollIntoView: tr.scrollIntoView,
      ...(userEvent ? { userEvent } : {}),
    };
  });
}

/**
 * How marks and marked text look in both modes: classes, styled in preview.css (colours from the page's theme variables, so
 * dark mode restyles them), so that a section's placeholder before its editor mounts (preview/placeholder.tsx), rendered on
 * the server too, carries the same styling.
 */
const markClasses = [
  { tag: tags.strong, class: "cm-md-strong" },
  { tag: tags.emphasis, class: "cm-md-em" },
  { tag: tags.strikethrough, class: "cm-md-strike" },
  { tag: [tags.link, tags.url], class: "cm-md-link" },
  { tag: tags.monospace, class: "cm-md-code" },
  // The marks themselves (`#`, `**`, `-`, `>`), not the list's or quote's text.
  { tag: [tags.processingInstruction, tags.contentSeparator], class: "cm-md-mark" },
  { tag: tags.quote, class: "cm-md-quote" },
];

/** The markdown source: headings larger, emphasis, links and code set apart, the marks faint. */
export const proseStyle = HighlightStyle.define([
  { tag: tags.heading1, class: "cm-md-heading cm-md-h1" },
  { tag: tags.heading2, class: "cm-md-heading cm-md-h2" },
  { tag: [tags.heading3, tags.heading4, tags.heading5, tags.heading6], class: "cm-md-heading cm-md-h3" },
  ...markClasses,
]);

/** The live preview's: the same, with headings sized by their lines (preview/headings.ts), so sizes do not compound. */
export const previewStyle = HighlightStyle.define([{ tag: tags.heading, class: "cm-md-heading" }, ...markClasses]);

/** The editor's own look: prose, not code (no gutter, wrapped lines, the page's font). */
export const proseTheme: Extension = EditorView.theme({
  "&": { fontSize: "inherit", backgroundColor: "transparent" },
  "&.cm-focused": { outline: "none" },
  ".cm-content": { fontFamily: "inherit", padding: "0", lineHeight: "1.6", caretColor: "var(--text)" },
  ".cm-line": { padding: "0" },
  // CodeMirror's base theme paints the caret black and the selection light grey unless told the editor is dark;
  // the page's theme variables follow the chosen or system theme instead, so both stay visible in either.
  ".cm-cursor, .cm-dropCursor": { borderLeftColor: "var(--text)" },
  ".cm-selectionBackground, &.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground": {
    background: "var(--selection)",
  },
  ".cm-scroller": { fontFamily: "inherit", overflow: "visible" },
  // Remote carets keep their name label visible, not only on hover: you see who is typing where.
  ".cm-ySelectionInfo": { opacity: "1", fontFamily: "inherit", top: "-1.35em", borderRadius: "3px", padding: "0 4px" },
});
