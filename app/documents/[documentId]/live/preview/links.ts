/**
 * Links shown as links: `[text](url)` shows only its text, in the link style,
 * followed by a small ↗ that opens it (for touch screens); Ctrl/⌘ + click on
 * the text opens it too, while a plain click places the caret, as in any
 * editor. The brackets and the URL show again while the caret or selection
 * touches the link. `<url>` autolinks lose their angle brackets the same way,
 * and bare URLs are styled as links. Only URLs a reader's page would open are
 * offered (`safeHref`); any other stays text.
 */
import type { Extension } from "@codemirror/state";
import { Decoration, EditorView, WidgetType } from "@codemirror/view";
import { isHttpUrl } from "../../section-blocks";
import { hidden, visibleDecorations } from "./decorate";

/** The URL as a link target, or null: http(s), mailto and paths on this site (not `//host`) are opened; nothing else. */
export function safeHref(url: string): string | null {
  const trimmed = url.trim();
  if (isHttpUrl(trimmed) || /^mailto:[^\s]+$/i.test(trimmed)) return trimmed;
  return /^(?:\/(?!\/)|#)/.test(trimmed) ? trimmed : null;
}

const opensElsewhere = (href: string) => /^https?:/i.test(href);

class OpenLink extends WidgetType {
  constructor(readonly href: string) {
    super();
  }
  override eq(other: OpenLink) {
    return other.href === this.href;
  }
  toDOM() {
    const a = document.createElement("a");
    a.className = "cm-lp-link-open";
    a.href = this.href;
    a.textContent = "↗";
    a.title = `Open ${this.href}`;
    a.setAttribute("aria-label", `Open link ${this.href}`);
    if (opensElsewhere(this.href)) {
      a.target = "_blank";
      a.rel = "noopener noreferrer nofollow";
    }
    return a;
  }
}

const linkText = (href: string | null) =>
  Decoration.mark({
    class: "cm-lp-link",
    attributes: href ? { "data-href": href, title: `${href} — Ctrl/⌘ + click to open` } : {},
  });

const decorations = visibleDecorations((node, at) => {
  const { doc } = at.state;
  if (node.name === "Link") {
    const marks = node.node.getChildren("LinkMark");
    const url = node.node.getChild("URL");
    // Reference links (`[text][ref]`) and links still being typed are left as written.
    if (!url || marks.length < 3) return false;
    const textFrom = marks[0]!.to;
    const textTo = marks[1]!.from;
    const href = safeHref(doc.sliceString(url.from, url.to));
    if (textTo > textFrom) at.add(textFrom, textTo, linkText(href));
    if (textTo > textFrom && !at.revealed(node.from, node.to)) {
      at.add(node.from, textFrom, hidden);
      at.add(textTo, node.to, href ? Decoration.replace({ widget: new OpenLink(href) }) : hidden);
    }
    return false;
  }
  if (node.name === "Autolink") {
    const url = node.node.getChild("URL");
    if (!url) return false;
    at.add(url.from, url.to, linkText(safeHref(doc.sliceString(url.from, url.to))));
    if (!at.revealed(node.from, node.to)) for (const mark of node.node.getChildren("LinkMark")) at.add(mark.from, mark.to, hidden);
    return false;
  }
  if (node.name === "Image") return false;
  if (node.name === "URL") at.add(node.from, node.to, linkText(safeHref(doc.sliceString(node.from, node.to))));
  return undefined;
});

/** Ctrl/⌘ + press on a link's text opens it; a plain press is the editor's (the caret goes there). */
const openOnModifiedClick = EditorView.domEventHandlers({
  mousedown(event, view) {
    if (!(event.ctrlKey || event.metaKey) || event.button !== 0) return false;
    const link = (event.target as Element | null)?.closest?.("[data-href]");
    const href = link && view.contentDOM.contains(link) ? link.getAttribute("data-href") : null;
    if (!href) return false;
    event.preventDefault();
    if (opensElsewhere(href)) window.open(href, "_blank", "noopener,noreferrer");
    else window.location.assign(href);
    return true;
  },
});

export const links: Extension = [decorations, openOnModifiedClick];
