/**
 * What every live-preview extension shares: one walk over the markdown syntax
 * tree (lang-markdown parses incrementally; the walk reads the tree as parsed
 * so far and runs again when the parser extends it), deciding per node which
 * decorations it gets, and whether the person's caret or selection touches a
 * range, where the markdown's marks are shown as typed. Marks show only while
 * the editor has focus: an editor nobody is in keeps its caret at the start,
 * which must not reveal its first line.
 */
import { syntaxTree } from "@codemirror/language";
import { type EditorState, type Extension, type Range, StateEffect, StateField } from "@codemirror/state";
import { Decoration, type DecorationSet, EditorView, ViewPlugin, type ViewUpdate, WidgetType } from "@codemirror/view";
import type { SyntaxNodeRef } from "@lezer/common";

const focusChanged = StateEffect.define<boolean>();

const focusField = StateField.define<boolean>({
  create: () => false,
  update: (focused, tr) => tr.effects.findLast((e) => e.is(focusChanged))?.value ?? focused,
});

/** Whether the editor has focus, as part of its state (block decorations come from state fields, which see no view). */
export const editorFocus: Extension = [focusField, EditorView.focusChangeEffect.of((_state, focusing) => focusChanged.of(focusing))];

/** Whether the caret or a selection of this editor (while it has focus) touches from..to, ends included. */
export function revealed(state: EditorState, from: number, to: number): boolean {
  return state.field(focusField, false) === true && state.selection.ranges.some((r) => r.from <= to && r.to >= from);
}

export interface Decorating {
  state: EditorState;
  /** `revealed` for this state. */
  revealed: (from: number, to: number) => boolean;
  add: (from: number, to: number, decoration: Decoration) => void;
}

/** Decorates one node of the tree; `false` skips its children. */
export type Decorate = (node: SyntaxNodeRef, at: Decorating) => boolean | undefined;

/**
 * One kind of markdown's decorations: how it decorates a node, and the editor extension that applies that as the text and
 * caret change. The placeholder a section shows before its editor mounts (placeholder.tsx) calls the same `decorate`.
 */
export interface Decorator {
  decorate: Decorate;
  extension: Extension;
}

/**
 * A widget's element as data, so one widget renders the same in an editor (the DOM, `ShapedWidget.toDOM`) and in the
 * placeholder before it (React, placeholder.tsx). Attributes are the DOM's (`class`, `aria-label`, `checked`).
 */
export interface Shape {
  tag: string;
  attributes?: Record<string, string>;
  children?: Array<Shape | string>;
}

function buildElement(shape: Shape): HTMLElement {
  const element = document.createElement(shape.tag);
  for (const [name, value] of Object.entries(shape.attributes ?? {})) element.setAttribute(name, value);
  for (const child of shape.children ?? []) element.append(typeof child === "string" ? child : buildElement(child));
  return element;
}

/** A widget drawn from its `shape`; `wire` adds what it does in an editor (presses), which a placeholder has not. */
export abstract class ShapedWidget extends WidgetType {
  abstract shape(): Shape;
  wire?(element: HTMLElement, view: EditorView): void;
  toDOM(view: EditorView): HTMLElement {
    const element = buildElement(this.shape());
    this.wire?.(element, view);
    return element;
  }
}

/** Marks hidden from view (the text stays in the document). */
export const hidden = Decoration.replace({});

/**
 * The decorations `decorate` gives the nodes within `ranges`. A node reaching
 * over two ranges is decorated once, in the first.
 */
export function collect(state: EditorState, ranges: readonly { from: number; to: number }[], decorate: Decorate): DecorationSet {
  const tree = syntaxTree(state);
  const found: Range<Decoration>[] = [];
  const at: Decorating = {
    state,
    revealed: (from, to) => revealed(state, from, to),
    add: (from, to, decoration) => {
      found.push(decoration.range(from, to));
    },
  };
  let before = -1;
  for (const { from, to } of ranges) {
    const seenUpTo = before;
    tree.iterate({ from, to, enter: (node) => (node.from <= seenUpTo && node.to >= from ? undefined : decorate(node, at)) });
    before = to;
  }
  return Decoration.set(found, true);
}

/** Whether what the decorations depend on changed: the text, the selection, the parsed tree, or focus. */
const stale = (docChanged: boolean, selection: boolean, before: EditorState, after: EditorState) =>
  docChanged || selection || syntaxTree(before) !== syntaxTree(after) || before.field(focusField, false) !== after.field(focusField, false);

/** Inline decorations of the lines on screen (`view.visibleRanges`), kept as the view scrolls and the text changes. */
export function visibleDecorations(decorate: Decorate): Decorator {
  const extension = ViewPlugin.fromClass(
    class {
      decorations: DecorationSet;
      constructor(view: EditorView) {
        this.decorations = collect(view.state, view.visibleRanges, decorate);
      }
      update(update: ViewUpdate) {
        if (update.viewportChanged || stale(update.docChanged, update.selectionSet, update.startState, update.state)) {
          this.decorations = collect(update.state, update.view.visibleRanges, decorate);
        }
      }
    },
    { decorations: (plugin) => plugin.decorations },
  );
  return { decorate, extension };
}

/**
 * Block decorations (widgets between lines, lines replaced by a widget): CodeMirror takes these only from the state, not
 * from a view plugin, so they are found over the whole parsed text of the block (a text block is one section's paragraph
 * run, and only the sections near the screen have editors).
 */
export function blockDecorations(decorate: Decorate): Decorator {
  const field = StateField.define<DecorationSet>({
    create: (state) => collect(state, [{ from: 0, to: state.doc.length }], decorate),
    update: (decorations, tr) =>
      stale(tr.docChanged, tr.selection !== undefined, tr.startState, tr.state)
        ? collect(tr.state, [{ from: 0, to: tr.state.doc.length }], decorate)
        : decorations,
    provide: (f) => EditorView.decorations.from(f),
  });
  return { decorate, extension: field };
}

/** A press on a widget that stands for text (a table, an image) puts the caret at its start, which shows that text to edit. */
export function caretOnPress(view: EditorView, widget: HTMLElement): void {
  widget.addEventListener("mousedown", (event) => {
    event.preventDefault();
    view.dispatch({ selection: { anchor: view.posAtDOM(widget) }, scrollIntoView: true });
    view.focus();
  });
}
