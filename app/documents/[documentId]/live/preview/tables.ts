/**
 * Tables as tables: a GFM table is shown as a rendered table in place of its
 * lines, until the caret enters it (a click on the table, or the arrow keys
 * reaching it): then its lines show as text, to edit. Cells show their inline
 * markdown (bold, italic, strikethrough, code, links as links: Ctrl/⌘ +
 * click on a link's text or its ↗ opens it, as outside a table, and a plain
 * click edits the table); comment markup in a cell is left out of the rendered
 * table, as the editor hides it in the text.
 */
import type { EditorState, Text } from "@codemirror/state";
import { Decoration, type EditorView } from "@codemirror/view";
import type { SyntaxNode } from "@lezer/common";
import { blockDecorations, caretOnPress, ShapedWidget, type Shape } from "./decorate";
import { linkDefinitions, linkTarget, openLink, openLinkButton, safeHref } from "./links";

/** A cell's content: text, or an inline element with its content (a link with the URL it opens, null when none is offered). */
type Inline = string | { tag: "strong" | "em" | "s" | "code"; children: Inline[] } | { tag: "a"; href: string | null; children: Inline[] };

const TAGS: Record<string, "strong" | "em" | "s" | "code"> = {
  StrongEmphasis: "strong",
  Emphasis: "em",
  Strikethrough: "s",
  InlineCode: "code",
};
/** Syntax that is not shown in a rendered cell. */
const MARKUP = new Set(["EmphasisMark", "StrikethroughMark", "CodeMark", "LinkMark", "LinkTitle", "LinkLabel", "HTMLTag", "Comment"]);

/** Where a link in a cell leads: its URL, or its reference's definition in the text; null when nothing is offered. */
function linkHref(state: EditorState, link: SyntaxNode): string | null {
  const url = link.getChild("URL");
  if (url) return safeHref(state.doc.sliceString(url.from, url.to));
  const label = link.getChild("LinkLabel");
  const marks = link.getChildren("LinkMark");
  const named = label && label.to - label.from > 2 ? label : marks.length >= 2 ? { from: marks[0]!.from, to: marks[1]!.to } : null;
  if (!named) return null;
  const key = state.doc.sliceString(named.from, named.to).slice(1, -1).trim().replace(/\s+/g, " ").toLowerCase();
  const defined = linkDefinitions(state).get(key);
  return defined === undefined ? null : safeHref(defined);
}

/** The inline content of a node, between its children's marks. */
function inline(state: EditorState, node: SyntaxNode): Inline[] {
  const doc: Text = state.doc;
  const out: Inline[] = [];
  let at = node.from;
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.from > at) out.push(doc.sliceString(at, child.from));
    at = child.to;
    // A link's URL is not shown: its text is.
    if (MARKUP.has(child.name) || (child.name === "URL" && node.name === "Link")) continue;
    const tag = TAGS[child.name];
    if (tag) out.push({ tag, children: inline(state, child) });
    else if (child.name === "Link") out.push({ tag: "a", href: linkHref(state, child), children: inline(state, child) });
    else out.push(...inline(state, child));
  }
  if (node.to > at) out.push(doc.sliceString(at, node.to));
  return out;
}

type Align = "left" | "center" | "right" | "";

interface Table {
  align: Align[];
  head: Inline[][];
  rows: Inline[][][];
}

/** The columns' alignment, from the delimiter row (`:--`, `:-:`, `--:`). */
function alignment(row: string): Align[] {
  return row
    .trim()
    .replace(/^\||\|$/g, "")
    .split("|")
    .map((cell) => {
      const c = cell.trim();
      if (c.startsWith(":") && c.endsWith(":")) return "center";
      if (c.endsWith(":")) return "right";
      return c.startsWith(":") ? "left" : "";
    });
}

function readTable(state: EditorState, table: SyntaxNode): Table {
  const { doc } = state;
  const cells = (row: SyntaxNode) => row.getChildren("TableCell").map((cell) => inline(state, cell));
  const header = table.getChild("TableHeader");
  const delimiter = table.getChildren("TableDelimiter")[0];
  return {
    align: delimiter ? alignment(doc.sliceString(delimiter.from, delimiter.to)) : [],
    head: header ? cells(header) : [],
    rows: table.getChildren("TableRow").map(cells),
  };
}

/** A cell's content as shapes: a link's text as the editor shows a link (Ctrl/⌘ + click opens it), then its ↗. */
function shapes(content: Inline[]): Array<Shape | string> {
  return content.flatMap((piece): Array<Shape | string> => {
    if (typeof piece === "string") return [piece];
    if (piece.tag !== "a") return [{ tag: piece.tag, children: shapes(piece.children) }];
    const text: Shape = { tag: "span", attributes: { class: "cm-lp-link", ...linkTarget(piece.href) }, children: shapes(piece.children) };
    return piece.href ? [text, openLinkButton(piece.href)] : [text];
  });
}

class RenderedTable extends ShapedWidget {
  constructor(
    readonly source: string,
    readonly table: Table,
  ) {
    super();
  }
  override eq(other: RenderedTable) {
    // The same lines may link elsewhere once a reference's definition changes.
    return other.source === this.source && JSON.stringify(other.table) === JSON.stringify(this.table);
  }
  shape(): Shape {
    const columns = Math.max(this.table.head.length, ...this.table.rows.map((r) => r.length));
    const row = (cells: Inline[][], tag: "th" | "td"): Shape => ({
      tag: "tr",
      children: Array.from({ length: columns }, (_, i) => {
        const align = this.table.align[i];
        return { tag, ...(align ? { attributes: { class: `cm-lp-align-${align}` } } : {}), children: shapes(cells[i] ?? []) };
      }),
    });
    return {
      tag: "div",
      attributes: { class: "cm-lp-table", title: "Click to edit the table as text" },
      children: [
        {
          tag: "table",
          children: [
            { tag: "thead", children: [row(this.table.head, "th")] },
            { tag: "tbody", children: this.table.rows.map((cells) => row(cells, "td")) },
          ],
        },
      ],
    };
  }
  override wire(frame: HTMLElement, view: EditorView) {
    // A link's ↗ opens it, and Ctrl/⌘ + press on its text too; any other press edits the table.
    frame.addEventListener("mousedown", (event) => {
      const target = event.target as Element;
      if (target.closest(".cm-lp-link-open")) {
        event.stopImmediatePropagation();
        return;
      }
      const href = (event.ctrlKey || event.metaKey) && event.button === 0 ? target.closest("[data-href]")?.getAttribute("data-href") : null;
      if (href) {
        event.preventDefault();
        event.stopImmediatePropagation();
        openLink(href);
      }
    });
    caretOnPress(view, frame);
  }
}

const sourceLine = Decoration.line({ class: "cm-lp-table-source" });

export const tables = blockDecorations((node, at) => {
  if (node.name !== "Table") return undefined;
  const { doc } = at.state;
  const first = doc.lineAt(node.from);
  const last = doc.lineAt(node.to);
  if (at.revealed(first.from, last.to)) {
    for (let n = first.number; n <= last.number; n++) at.add(doc.line(n).from, doc.line(n).from, sourceLine);
  } else {
    const source = doc.sliceString(first.from, last.to);
    at.add(first.from, last.to, Decoration.replace({ widget: new RenderedTable(source, readTable(at.state, node.node)), block: true }));
  }
  return false;
});
