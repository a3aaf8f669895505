/**
 * Images shown inline. An image on a line of its own is shown in place of the
 * line until the caret enters it (a click on the image, or the arrow keys):
 * then its markdown shows, with the image below it. An image within other
 * text keeps its markdown on the line (faint while the caret is elsewhere)
 * and is shown below that line. Only http(s) images load, the same rule as
 * the rendered view (section-blocks.tsx). The editor draws only lines near
 * the screen, so its image is not lazy: it takes the copy the section's
 * placeholder loaded (same URL and referrer policy) in the frame it mounts,
 * where a lazy one stays empty for a frame and the lines below jump up and
 * back. The placeholder's images are lazy (placeholder.tsx).
 */
import { Decoration, type EditorView } from "@codemirror/view";
import { isHttpUrl } from "../../section-blocks";
import { blockDecorations, caretOnPress, ShapedWidget, type Shape } from "./decorate";

class InlineImage extends ShapedWidget {
  constructor(
    readonly src: string,
    readonly alt: string,
  ) {
    super();
  }
  override eq(other: InlineImage) {
    return other.src === this.src && other.alt === this.alt;
  }
  shape(): Shape {
    return {
      tag: "div",
      attributes: { class: "cm-lp-image" },
      children: [{ tag: "img", attributes: { src: this.src, alt: this.alt, referrerpolicy: "no-referrer" } }],
    };
  }
  override wire(figure: HTMLElement, view: EditorView) {
    caretOnPress(view, figure);
  }
  // Its height is unknown until it loads: CodeMirror measures it then.
  override get estimatedHeight() {
    return 200;
  }
}

const faintSource = Decoration.mark({ class: "cm-lp-image-source" });

export const images = blockDecorations((node, at) => {
  if (node.name !== "Image") return undefined;
  const { doc } = at.state;
  const marks = node.node.getChildren("LinkMark");
  const url = node.node.getChild("URL");
  const src = url ? doc.sliceString(url.from, url.to).trim() : "";
  if (!url || marks.length < 3 || !isHttpUrl(src)) return false;
  const widget = new InlineImage(src, doc.sliceString(marks[0]!.to, marks[1]!.from));
  const line = doc.lineAt(node.to);
  if (at.revealed(line.from, line.to)) {
    at.add(line.to, line.to, Decoration.widget({ widget, block: true, side: 1 }));
  } else if (line.from === doc.lineAt(node.from).from && line.text.trim() === doc.sliceString(node.from, node.to)) {
    at.add(line.from, line.to, Decoration.replace({ widget, block: true }));
  } else {
    at.add(node.from, node.to, faintSource);
    at.add(line.to, line.to, Decoration.widget({ widget, block: true, side: 1 }));
  }
  return false;
});
