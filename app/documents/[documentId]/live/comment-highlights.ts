"use client";

/**
 * What the document's comment highlights need beyond the text: which comments
 * are resolved (their highlight is muted in every editor), and bringing one
 * comment's highlight into view from the comments panel. The span is found
 * in the editor's own text (an editor draws only the lines near the screen;
 * each drawn highlight carries `data-comment-id`); a section far off screen
 * has no editor yet (rooms open near the screen), so it is scrolled to first
 * and the span is shown once its editor mounts.
 */
import { EditorView } from "@codemirror/view";
import { createContext } from "react";
import { commentPosition, flashComment } from "./editor-extensions";

/** The resolved comment ids of the document; editors subscribe and restyle their highlights. */
export class ResolvedComments {
  #ids: ReadonlySet<string>;
  readonly #listeners = new Set<() => void>();

  constructor(ids: Iterable<string>) {
    this.#ids = new Set(ids);
  }

  get ids(): ReadonlySet<string> {
    return this.#ids;
  }

  /** Marks one comment resolved or open; listeners hear only real changes. */
  set(commentId: string, resolved: boolean): void {
    if (this.#ids.has(commentId) === resolved) return;
    const next = new Set(this.#ids);
    if (resolved) next.add(commentId);
    else next.delete(commentId);
    this.#ids = next;
    for (const listener of this.#listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

export const ResolvedCommentsContext = createContext<ResolvedComments | null>(null);

/** How long to wait for a far section's editor to mount before giving up on the span (the section is in view by then). */
const MOUNT_WAIT_MS = 10_000;
const FLASH_MS = 1_600;

/**
 * Shows the comment's text in whichever editor of the section holds it:
 * scrolled into the middle of the screen (the editor draws only what is near
 * the screen, so it is found in the editor's text, not among drawn elements),
 * the cursor at its start, focused, flashing. False when no editor holds it.
 */
function showInEditor(section: HTMLElement, commentId: string): boolean {
  for (const element of section.querySelectorAll<HTMLElement>(".cm-editor")) {
    const view = EditorView.findFromDOM(element);
    const at = view ? commentPosition(view.state, commentId) : null;
    if (!view || at === null) continue;
    view.dispatch({ selection: { anchor: at }, effects: [EditorView.scrollIntoView(at, { y: "center" }), flashComment.of(commentId)] });
    view.focus();
    window.setTimeout(() => {
      if (view.dom.isConnected) view.dispatch({ effects: flashComment.of(null) });
    }, FLASH_MS);
    return true;
  }
  return false;
}

/**
 * Shows the comment's text where the section is rendered rather than edited
 * (for readers, or in Preview): the rendered highlights carry no id, so the
 * first one whose text is part of the comment's quoted text is taken. It is
 * scrolled into the middle of the screen, focused and flashed.
 */
function showRendered(section: HTMLElement, quote: string): boolean {
  const mark = [...section.querySelectorAll<HTMLElement>("mark.comment-mark")].find((m) => {
    const shown = m.textContent?.trim() ?? "";
    return shown !== "" && quote.includes(shown);
  });
  if (!mark) return false;
  mark.tabIndex = -1;
  mark.scrollIntoView({ block: "center" });
  mark.focus({ preventScroll: true });
  mark.classList.remove("comment-flash");
  void mark.offsetWidth;
  mark.classList.add("comment-flash");
  window.setTimeout(() => mark.classList.remove("comment-flash"), FLASH_MS);
  return true;
}

/**
 * Brings a comment's highlighted text (`quote`: the text between its tags)
 * into view and focus: in its editor, else where the section is rendered.
 * When the section shows neither yet (a far section waits for its room),
 * scrolls to the section and shows the text once it is there. Returns a
 * function that stops waiting.
 */
export function revealComment(sectionId: string, commentId: string, quote: string): () => void {
  const section = document.getElementById(`section-${sectionId}`);
  const show = () => section !== null && (showInEditor(section, commentId) || showRendered(section, quote));
  if (!section || show()) return () => {};
  section.scrollIntoView({ block: "start" });
  const observer = new MutationObserver(() => {
    if (show()) stop();
  });
  const timer = window.setTimeout(() => observer.disconnect(), MOUNT_WAIT_MS);
  const stop = () => {
    observer.disconnect();
    window.clearTimeout(timer);
  };
  observer.observe(section, { childList: true, subtree: true });
  return stop;
}
