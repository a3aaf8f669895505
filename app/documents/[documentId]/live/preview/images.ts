/**
 * Images shown inline: below the line of each `![alt](url)` the image itself,
 * as a block between the lines; the markdown stays on its line (faint while
 * the caret is elsewhere), as it is what is edited. Only http(s) images load,
 * the same rule as the rendered view (section-blocks.tsx).
 */
import { Decoration, WidgetType } from "@codemirror/view";
import { isHttpUrl } from "../../section-blocks";
import { blockDecorations } from "./decorate";

class InlineImage extends WidgetType {
  constructor(
    readonly src: string,
    readonly alt: string,
  ) {
    super();
  }
  override eq(other: InlineImage) {
    return other.src === this.src && other.alt === this.alt;
  }
  toDOM() {
    const figure = document.createElement("div");
    figure.className = "cm-lp-image";
    const img = document.createElement("img");
    img.src = this.src;
    img.alt = this.alt;
    img.loading = "lazy";
    img.referrerPolicy = "no-referrer";
    figure.append(img);
    return figure;
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
  const alt = doc.sliceString(marks[0]!.to, marks[1]!.from);
  if (!at.revealed(node.from, node.to)) at.add(node.from, node.to, faintSource);
  at.add(doc.lineAt(node.to).to, doc.lineAt(node.to).to, Decoration.widget({ widget: new InlineImage(src, alt), block: true, side: 1 }));
  return false;
});
