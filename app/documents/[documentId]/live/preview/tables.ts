/**
 * Tables as tables: a GFM table is shown as a rendered table in place of its
 * lines, until the caret enters it (a click on the table, or the arrow keys
 * reaching it): then its lines show as text, to edit. Cells show their inline
 * markdown (bold, italic, strikethrough, code, links as text in the link
 * style); comment markup in a cell is left out of the rendered table, as the
 * editor hides it in the text.
 */
import type { Text } from "@codemirror/state";
import { Decoration, type EditorView, WidgetType } from "@codemirror/view";
import type { SyntaxNode } from "@lezer/common";
import { blockDecorations, caretOnPress } from "./decorate";

/** A cell's content: text, or an inline element with its content. */
type Inline = string | { tag: "strong" | "em" | "s" | "code" | "span"; children: Inline[] };

const TAGS: Record<string, "strong" | "em" | "s" | "code"> = {
  StrongEmphasis: "strong",
  Emphasis: "em",
  Strikethrough: "s",
  InlineCode: "code",
};
/** Syntax that is not shown in a rendered cell. */
const MARKUP = new Set(["EmphasisMark", "StrikethroughMark", "CodeMark", "LinkMark", "LinkTitle", "LinkLabel", "HTMLTag", "Comment"]);

/** The inline content of a node, between its children's marks. */
function inline(doc: Text, node: SyntaxNode): Inline[] {
  const out: Inline[] = [];
  let at = node.from;
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.from > at) out.push(doc.sliceString(at, child.from));
    at = child.to;
    // A link's URL is not shown: its text is.
    if (MARKUP.has(child.name) || (child.name === "URL" && node.name === "Link")) continue;
    const tag = TAGS[child.name] ?? (child.name === "Link" ? "span" : undefined);
    if (tag) out.push({ tag, children: inline(doc, child) });
    else out.push(...inline(doc, child));
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

function readTable(doc: Text, table: SyntaxNode): Table {
  const cells = (row: SyntaxNode) => row.getChildren("TableCell").map((cell) => inline(doc, cell));
  const header = table.getChild("TableHeader");
  const delimiter = table.getChildren("TableDelimiter")[0];
  return {
    align: delimiter ? alignment(doc.sliceString(delimiter.from, delimiter.to)) : [],
    head: header ? cells(header) : [],
    rows: table.getChildren("TableRow").map(cells),
  };
}

function render(content: Inline[], into: HTMLElement) {
  for (const piece of content) {
    if (typeof piece === "string") into.append(piece);
    else {
      const element = document.createElement(piece.tag);
      if (piece.tag === "span") element.className = "cm-lp-link";
      render(piece.children, element);
      into.append(element);
    }
  }
}

class RenderedTable extends WidgetType {
  constructor(
    readonly source: string,
    readonly table: Table,
  ) {
    super();
  }
  override eq(other: RenderedTable) {
    return other.source === this.source;
  }
  toDOM(view: EditorView) {
    const frame = document.createElement("div");
    frame.className = "cm-lp-table";
    frame.title = "Click to edit the table as text";
    const table = document.createElement("table");
    const columns = Math.max(this.table.head.length, ...this.table.rows.map((r) => r.length));
    const row = (cells: Inline[][], tag: "th" | "td") => {
      const tr = document.createElement("tr");
      for (let i = 0; i < columns; i++) {
        const cell = document.createElement(tag);
        const align = this.table.align[i];
        if (align) cell.style.textAlign = align;
        render(cells[i] ?? [], cell);
        tr.append(cell);
      }
      return tr;
    };
    const thead = document.createElement("thead");
    thead.append(row(this.table.head, "th"));
    const tbody = document.createElement("tbody");
    for (const cells of this.table.rows) tbody.append(row(cells, "td"));
    table.append(thead, tbody);
    frame.append(table);
    caretOnPress(view, frame);
    return frame;
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
    at.add(first.from, last.to, Decoration.replace({ widget: new RenderedTable(source, readTable(doc, node.node)), block: true }));
  }
  return false;
});
