/**
 * Comment markup inside text blocks (`<svc:comment id="…">text</svc:comment>`)
 * is shown as highlighted text. The tags are not HTML to the markdown parser,
 * so before parsing each matched pair is swapped for two private-use marker
 * characters; after parsing, a rehype plugin turns the text between the
 * markers into <mark> elements. No HTML from the document is ever interpreted.
 */
import type { Element, ElementContent, Root, RootContent } from "hast";
import { type CommentTagToken, commentTagTokens } from "@/server/core/comment-markup";

const OPEN = "\uE000";
const CLOSE = "\uE001";
const MARKERS = /[\uE000\uE001]/g;
/**
 * The balanced pairs among a text's comment tags (an opening tag and the
 * closing tag that ends it, innermost first); self-closing and unmatched tags
 * are in no pair. Both the rendered view and the editor's highlights use it.
 */
export function commentTagPairs(tags: readonly CommentTagToken[]): Array<{ open: CommentTagToken; close: CommentTagToken }> {
  const pairs: Array<{ open: CommentTagToken; close: CommentTagToken }> = [];
  const open: CommentTagToken[] = [];
  for (const tag of tags) {
    if (tag.closing) {
      const start = open.pop();
      if (start !== undefined) pairs.push({ open: start, close: tag });
    } else if (!tag.raw.endsWith("/>")) {
      open.push(tag);
    }
  }
  return pairs;
}

/** Replaces balanced comment tags (found by the server's own tokenizer) with markers and drops unbalanced ones. */
export function markCommentRanges(markdown: string): string {
  const text = markdown.replace(MARKERS, "");
  const tags = commentTagTokens(text);
  if (tags.length === 0) return text;

  const replacement = new Map<number, string>();
  for (const { open, close } of commentTagPairs(tags)) {
    replacement.set(open.index, OPEN);
    replacement.set(close.index, CLOSE);
  }

  let out = "";
  let last = 0;
  for (const tag of tags) {
    out += text.slice(last, tag.index) + (replacement.get(tag.index) ?? "");
    last = tag.index + tag.raw.length;
  }
  return out + text.slice(last);
}

function mark(value: string): Element {
  return {
    type: "element",
    tagName: "mark",
    properties: { className: ["comment-mark"], title: "Commented text" },
    children: [{ type: "text", value }],
  };
}

/** rehype plugin: text between markers becomes <mark class="comment-mark">. */
export function rehypeCommentMarks() {
  return (tree: Root) => {
    let depth = 0;
    const walk = (parent: Root | Element) => {
      const children: Array<RootContent | ElementContent> = [];
      for (const child of parent.children) {
        if (child.type === "text") {
          const pieces = child.value.split(/([\uE000\uE001])/);
          for (const piece of pieces) {
            if (piece === OPEN) depth += 1;
            else if (piece === CLOSE) depth = Math.max(0, depth - 1);
            else if (piece !== "") children.push(depth > 0 && piece.trim() !== "" ? mark(piece) : { type: "text", value: piece });
          }
        } else {
          if (child.type === "element") walk(child);
          children.push(child);
        }
      }
      (parent as { children: Array<RootContent | ElementContent> }).children = children;
    };
    walk(tree);
  };
}
