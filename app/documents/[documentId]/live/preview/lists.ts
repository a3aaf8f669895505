/**
 * Lists as lists: a bullet list's `-`, `*` or `+` is drawn as a bullet (•, ◦,
 * ▪ by depth), a numbered list's numbers are text in the text's colour (not
 * faint), and a task's `[ ]` / `[x]` is a checkbox that ticks the task in the
 * text. A marker shows as typed while the caret or selection touches it (so
 * it can be changed); the caret at the start of the item's text leaves the
 * bullet drawn.
 */
import { Decoration, type EditorView } from "@codemirror/view";
import { hidden, ShapedWidget, type Shape, visibleDecorations } from "./decorate";

const BULLETS = ["•", "◦", "▪"];

class Bullet extends ShapedWidget {
  constructor(readonly depth: number) {
    super();
  }
  override eq(other: Bullet) {
    return other.depth === this.depth;
  }
  shape(): Shape {
    return { tag: "span", attributes: { class: "cm-lp-bullet" }, children: [BULLETS[this.depth % BULLETS.length]!] };
  }
}

class Checkbox extends ShapedWidget {
  constructor(readonly checked: boolean) {
    super();
  }
  override eq(other: Checkbox) {
    return other.checked === this.checked;
  }
  shape(): Shape {
    return {
      tag: "input",
      attributes: {
        type: "checkbox",
        class: "cm-lp-task",
        "aria-label": this.checked ? "Done task" : "Open task",
        ...(this.checked ? { checked: "" } : {}),
      },
    };
  }
  override wire(box: HTMLElement, view: EditorView) {
    // The press would move the caret onto the marker and show it as text: the click ticks the task instead.
    box.addEventListener("mousedown", (event) => event.preventDefault());
    box.addEventListener("click", (event) => {
      event.preventDefault();
      const at = view.posAtDOM(box);
      // `[ ]` / `[x]`: the character between the brackets.
      view.dispatch({ changes: { from: at + 1, to: at + 2, insert: this.checked ? " " : "x" }, userEvent: "input" });
    });
  }
}

const numberMark = Decoration.mark({ class: "cm-lp-list-number" });

export const lists = visibleDecorations((node, at) => {
  if (node.name === "ListMark") {
    const item = node.node.parent;
    const list = item?.parent;
    if (!item || !list) return false;
    if (list.name === "OrderedList") {
      at.add(node.from, node.to, numberMark);
      return false;
    }
    if (list.name !== "BulletList" || at.revealed(node.from, node.to)) return false;
    if (item.getChild("Task")) {
      // A task shows its checkbox in place of the bullet.
      at.add(node.from, Math.min(node.to + 1, item.to), hidden);
      return false;
    }
    let depth = 0;
    for (let up = list.parent; up; up = up.parent) if (up.name === "BulletList") depth++;
    at.add(node.from, node.to, Decoration.replace({ widget: new Bullet(depth) }));
    return false;
  }
  if (node.name === "TaskMarker") {
    if (!at.revealed(node.from, node.to)) {
      const checked = /x/i.test(at.state.doc.sliceString(node.from, node.to));
      at.add(node.from, node.to, Decoration.replace({ widget: new Checkbox(checked) }));
    }
    return false;
  }
  return undefined;
});
