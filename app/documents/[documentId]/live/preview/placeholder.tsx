/**
 * A text block as its editor will show it, before the editor mounts (the
 * section's room has not synced yet, or the section is the server's HTML):
 * the same markdown parse, the same decorators of the mode (decorate.ts:
 * each `Decorator.decorate`, over the whole text, with no caret in it), the
 * same syntax highlighting classes and the same widgets (their `shape`),
 * drawn as CodeMirror draws them (a `.cm-line` per line, marks as spans,
 * hidden ranges left out, block widgets in place of their lines). Mounting
 * the editor over it then changes nothing on screen: no heading grows, no
 * `**` vanishes, nothing below moves. Comment markup is hidden and its text
 * highlighted as the editor does (`commentDecorations`).
 */
import { ensureSyntaxTree, syntaxTree, syntaxTreeAvailable } from "@codemirror/language";
import { markdown, markdownLanguage } from "@codemirror/lang-markdown";
import { EditorState } from "@codemirror/state";
import type { Decoration } from "@codemirror/view";
import { highlightTree } from "@lezer/highlight";
import { memo } from "react";
import { commentDecorations, commentMarkupExtension } from "../editor-extensions";
import { collect, ShapedWidget, type Shape } from "./decorate";
import { type EditorMode, modeLook } from "./index";

interface Mark {
  from: number;
  to: number;
  attributes: Record<string, string>;
}

interface Replaced {
  from: number;
  to: number;
  widget: ShapedWidget | null;
  block: boolean;
}

/** What CodeMirror's decorations are, told apart as its view does (a replace or widget is a point with `isReplace`). */
type Classified =
  | { kind: "line"; className: string }
  | { kind: "mark"; attributes: Record<string, string> }
  | { kind: "point"; replace: boolean; block: boolean; widget: ShapedWidget | null };

function classify(decoration: Decoration): Classified {
  const spec = decoration.spec as { class?: string; attributes?: Record<string, string>; widget?: unknown };
  const widget = spec.widget instanceof ShapedWidget ? spec.widget : null;
  if (!decoration.point) return { kind: "mark", attributes: { ...spec.attributes, ...(spec.class ? { class: spec.class } : {}) } };
  const point = decoration as Decoration & { isReplace?: boolean; block?: boolean };
  if (point.isReplace === undefined) return { kind: "line", className: spec.class ?? "" };
  return { kind: "point", replace: point.isReplace, block: point.block === true, widget };
}

/** The text's state as its editor would have it: parsed to the end (an editor parses the lines on screen first), comments read. */
function stateOf(text: string, resolved: ReadonlySet<string>): EditorState {
  const state = EditorState.create({
    doc: text,
    extensions: [markdown({ base: markdownLanguage, addKeymap: false }), commentMarkupExtension(resolved)],
  });
  if (syntaxTreeAvailable(state)) return state;
  // The parse goes on in the state's parse context; a transaction takes its finished tree into the state.
  ensureSyntaxTree(state, state.doc.length, 60_000);
  return state.update({}).state;
}

/** Text and attribute values as HTML: the text is the writer's, never markup. */
const escaped = (value: string) => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

const attributesHtml = (attributes: Record<string, string>) =>
  Object.entries(attributes)
    .map(([name, value]) => ` ${name}="${escaped(value)}"`)
    .join("");

const VOID = new Set(["br", "img", "input"]);

/** A shape as HTML (its attributes are the DOM's). Images load as they come near the screen: the server's HTML holds every section's placeholder. */
function shapeHtml(shape: Shape): string {
  const attributes = shape.tag === "img" ? { ...shape.attributes, loading: "lazy" } : (shape.attributes ?? {});
  const open = `<${shape.tag}${attributesHtml(attributes)}>`;
  if (VOID.has(shape.tag)) return open;
  return `${open}${(shape.children ?? []).map((child) => (typeof child === "string" ? escaped(child) : shapeHtml(child))).join("")}</${shape.tag}>`;
}

/**
 * The lines of `text` as the editor in `mode` draws them with no caret in it, as HTML: a string costs the server's render
 * next to nothing, where 2,000 sections' lines as React elements cost it tens of milliseconds on every open.
 */
export function placeholderLines(text: string, mode: EditorMode, resolved: ReadonlySet<string>): string {
  const state = stateOf(text, resolved);
  const { doc } = state;
  const look = modeLook[mode];
  const lineClasses = new Map<number, string[]>();
  const marks: Mark[] = [];
  const replaced: Replaced[] = [];
  /** Block widgets drawn after a line (side 1 at its end), by line number. */
  const after = new Map<number, ShapedWidget[]>();

  highlightTree(syntaxTree(state), look.highlighter, (from, to, classes) => {
    marks.push({ from, to, attributes: { class: classes } });
  });
  const whole = [{ from: 0, to: doc.length }];
  const sets = [...look.decorators.map((d) => collect(state, whole, d.decorate)), commentDecorations(state)];
  for (const set of sets) {
    set.between(0, doc.length, (from, to, decoration) => {
      const found = classify(decoration);
      if (found.kind === "line") {
        const n = doc.lineAt(from).number;
        lineClasses.set(n, [...(lineClasses.get(n) ?? []), found.className]);
      } else if (found.kind === "mark") marks.push({ from, to, attributes: found.attributes });
      else if (found.replace) replaced.push({ from, to, widget: found.widget, block: found.block });
      else if (found.block && found.widget) {
        const n = doc.lineAt(from).number;
        after.set(n, [...(after.get(n) ?? []), found.widget]);
      }
    });
  }
  // Overlapping replacements: the first (outermost) wins, as in the editor.
  replaced.sort((a, b) => a.from - b.from || b.to - a.to);
  const kept: Replaced[] = [];
  for (const r of replaced) if (!kept.length || r.from >= kept[kept.length - 1]!.to) kept.push(r);

  let lines = "";
  let next = 0;
  for (let n = 1; n <= doc.lines; n++) {
    const line = doc.line(n);
    while (next < kept.length && kept[next]!.to < line.from) next++;
    const block = kept[next];
    if (block?.block && block.from <= line.from) {
      // A block widget stands for its lines.
      if (block.widget) lines += shapeHtml(block.widget.shape());
      n = doc.lineAt(block.to).number;
      for (const widget of after.get(n) ?? []) lines += shapeHtml(widget.shape());
      continue;
    }
    const cuts = new Set([line.from, line.to]);
    for (const m of marks) if (m.to > line.from && m.from < line.to) cuts.add(Math.max(m.from, line.from)).add(Math.min(m.to, line.to));
    const inLine = kept.filter((r) => !r.block && r.to >= line.from && r.from <= line.to);
    for (const r of inLine) cuts.add(Math.max(r.from, line.from)).add(Math.min(r.to, line.to));
    const points = [...cuts].sort((a, b) => a - b);
    let children = "";
    let skipTo = line.from;
    for (let i = 0; i < points.length; i++) {
      const at = points[i]!;
      for (const r of inLine) {
        if (r.from === at && at >= skipTo) {
          if (r.widget) children += shapeHtml(r.widget.shape());
          skipTo = Math.max(skipTo, r.to);
        }
      }
      const end = points[i + 1];
      if (end === undefined || at < skipTo) continue;
      let piece = escaped(doc.sliceString(at, end));
      for (const m of marks) if (m.from <= at && m.to >= end) piece = `<span${attributesHtml(m.attributes)}>${piece}</span>`;
      children += piece;
    }
    const classes = ["cm-line", ...(lineClasses.get(n) ?? [])].join(" ");
    // An empty line keeps its height as CodeMirror's does, with a <br>.
    lines += `<div class="${classes}">${children || "<br>"}</div>`;
    for (const widget of after.get(n) ?? []) lines += shapeHtml(widget.shape());
  }
  return lines;
}

/**
 * The placeholder cache: `placeholderLines`, kept by text, mode and the resolved comments that text holds. The server draws
 * every section's placeholder on each open of the page (2,000 on a long document: about 0.1-0.35 ms each, parse, decorators
 * and drawing), and a document's texts change little between opens. Answers exactly as `placeholderLines`
 * (tests/unit/editor-placeholder.test.ts). Bounded by the characters held (texts may be long): the least recently used
 * drawing goes first.
 */
const drawn = new Map<string, string>();
/** What the kept drawings may hold, in characters of their keys (which hold the texts) and their HTML. */
export const PLACEHOLDER_CHARS_KEPT = 32 * 1024 * 1024;
let drawnChars = 0;

export function drawnPlaceholder(text: string, mode: EditorMode, resolved: ReadonlySet<string>): string {
  const resolvedHere = [...resolved].filter((id) => text.includes(id)).sort();
  const key = `${mode}\n${resolvedHere.join(" ")}\n${text}`;
  const kept = drawn.get(key);
  if (kept !== undefined) {
    drawn.delete(key);
    drawn.set(key, kept);
    return kept;
  }
  const lines = placeholderLines(text, mode, resolved);
  const size = key.length + lines.length;
  // A drawing too large to keep among others is drawn each time.
  if (size > PLACEHOLDER_CHARS_KEPT / 16) return lines;
  drawn.set(key, lines);
  drawnChars += size;
  for (const [oldest, html] of drawn) {
    if (drawnChars <= PLACEHOLDER_CHARS_KEPT) break;
    drawn.delete(oldest);
    drawnChars -= oldest.length + html.length;
  }
  return lines;
}

/** The placeholder of one text block (`placeholder`: what an empty editor shows, as CodeMirror's placeholder). */
export const PreviewPlaceholder = memo(function PreviewPlaceholder({
  text,
  mode,
  resolved,
  placeholder,
}: {
  text: string;
  mode: EditorMode;
  resolved: ReadonlySet<string>;
  placeholder: string;
}) {
  if (text === "") {
    return (
      <div className="live-text-editor live-text-placeholder">
        <div className="cm-line">
          <span className="cm-placeholder">{placeholder}</span>
        </div>
      </div>
    );
  }
  return (
    <div
      className="live-text-editor live-text-placeholder"
      // biome-ignore lint/security/noDangerouslySetInnerHtml: drawn by placeholderLines, every text and attribute value escaped
      dangerouslySetInnerHTML={{ __html: drawnPlaceholder(text, mode, resolved) }}
    />
  );
});
