/**
 * Links shown as links: `[text](url)` shows only its text, in the link style,
 * followed by a small ↗ that opens it (for touch screens); Ctrl/⌘ + click on
 * the text opens it too, while a plain click places the caret, as in any
 * editor. The brackets and the URL show again while the caret or selection
 * touches the link. Reference links (`[text][ref]`, `[ref][]`, `[ref]`) take
 * their URL from a `[ref]: url` definition in the same text block, as
 * CommonMark does; a definition line is shown small and faint while the caret
 * is elsewhere. `<url>` autolinks lose their angle brackets the same way,
 * and bare URLs are styled as links. Only URLs a reader's page would open are
 * offered (`safeHref`); any other stays text. A rendered table's cells use
 * `linkTarget` and `openLink` too (tables.ts).
 */
import { syntaxTree } from "@codemirror/language";
import type { EditorState } from "@codemirror/state";
import { Decoration, EditorView } from "@codemirror/view";
import type { Tree } from "@lezer/common";
import { isHttpUrl } from "../../section-blocks";
import { hidden, ShapedWidget, type Shape, visibleDecorations } from "./decorate";

/** The URL as a link target, or null: http(s), mailto and paths on this site (not `//host`) are opened; nothing else. */
export function safeHref(url: string): string | null {
  const trimmed = url.trim();
  if (isHttpUrl(trimmed) || /^mailto:[^\s]+$/i.test(trimmed)) return trimmed;
  return /^(?:\/(?!\/)|#)/.test(trimmed) ? trimmed : null;
}

const opensElsewhere = (href: string) => /^https?:/i.test(href);

/** Opens a link's target: a page elsewhere in a new tab, one of this site's in this one. */
export function openLink(href: string): void {
  if (opensElsewhere(href)) window.open(href, "_blank", "noopener,noreferrer");
  else window.location.assign(href);
}

/** The small ↗ after a link's text that opens it (what a touch screen has instead of Ctrl/⌘ + click). */
export function openLinkButton(href: string): Shape {
  return {
    tag: "a",
    attributes: {
      class: "cm-lp-link-open",
      href,
      title: `Open ${href}`,
      "aria-label": `Open link ${href}`,
      ...(opensElsewhere(href) ? { target: "_blank", rel: "noopener noreferrer nofollow" } : {}),
    },
    children: ["↗"],
  };
}

class OpenLink extends ShapedWidget {
  constructor(readonly href: string) {
    super();
  }
  override eq(other: OpenLink) {
    return other.href === this.href;
  }
  shape() {
    return openLinkButton(this.href);
  }
}

/** The attributes that make a link's text openable with Ctrl/⌘ + click (none for a URL that is not offered). */
export const linkTarget = (href: string | null): Record<string, string> =>
  href ? { "data-href": href, title: `${href} — Ctrl/⌘ + click to open` } : {};

const linkText = (href: string | null) => Decoration.mark({ class: "cm-lp-link", attributes: linkTarget(href) });

/** A reference label as CommonMark matches it: without its brackets, case and runs of white space folded. */
const labelKey = (label: string) => label.slice(1, -1).trim().replace(/\s+/g, " ").toLowerCase();

/** The text's link reference definitions (`[ref]: url`), label to URL; the first definition of a label wins. */
const definitionsOf = new WeakMap<Tree, Map<string, string>>();
export function linkDefinitions(state: EditorState): Map<string, string> {
  const tree = syntaxTree(state);
  let found = definitionsOf.get(tree);
  if (!found) {
    const definitions = new Map<string, string>();
    tree.iterate({
      enter: (node) => {
        if (node.name !== "LinkReference") return node.name === "Document" ? undefined : false;
        const label = node.node.getChild("LinkLabel");
        const url = node.node.getChild("URL");
        if (label && url) {
          const key = labelKey(state.doc.sliceString(label.from, label.to));
          if (!definitions.has(key)) definitions.set(key, state.doc.sliceString(url.from, url.to).replace(/^<|>$/g, ""));
        }
        return false;
      },
    });
    found = definitions;
    definitionsOf.set(tree, found);
  }
  return found;
}

/** A definition line while the caret is elsewhere: small and faint, as the note it is. */
const definitionLine = Decoration.line({ class: "cm-lp-link-definition" });

export const links = visibleDecorations((node, at) => {
  const { doc } = at.state;
  if (node.name === "Link") {
    const marks = node.node.getChildren("LinkMark");
    if (marks.length < 2) return false;
    const url = node.node.getChild("URL");
    const label = node.node.getChild("LinkLabel");
    const textFrom = marks[0]!.to;
    const textTo = marks[1]!.from;
    let target: string | undefined;
    if (url && marks.length >= 3) target = doc.sliceString(url.from, url.to);
    else if (!url) {
      // `[text][ref]`, `[ref][]` or `[ref]`: the label given, else the text, names a definition (none: left as written).
      const named = label && label.to - label.from > 2 ? label : null;
      target = linkDefinitions(at.state).get(
        labelKey(named ? doc.sliceString(named.from, named.to) : doc.sliceString(textFrom - 1, textTo + 1)),
      );
    }
    // Links still being typed, and references to nothing, are left as written.
    if (target === undefined) return false;
    const href = safeHref(target);
    if (textTo > textFrom) at.add(textFrom, textTo, linkText(href));
    if (textTo > textFrom && !at.revealed(node.from, node.to)) {
      at.add(node.from, textFrom, hidden);
      at.add(textTo, node.to, href ? Decoration.replace({ widget: new OpenLink(href) }) : hidden);
    }
    return false;
  }
  if (node.name === "LinkReference") {
    const line = doc.lineAt(node.from);
    if (!at.revealed(node.from, node.to)) at.add(line.from, line.from, definitionLine);
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
export const linkClicks = EditorView.domEventHandlers({
  mousedown(event, view) {
    if (!(event.ctrlKey || event.metaKey) || event.button !== 0) return false;
    const link = (event.target as Element | null)?.closest?.("[data-href]");
    const href = link && view.contentDOM.contains(link) ? link.getAttribute("data-href") : null;
    if (!href) return false;
    event.preventDefault();
    openLink(href);
    return true;
  },
});
