"use client";

/**
 * Landing on a section (`#section-…`): the document page goes on laying its
 * sections out after the browser (or a jump, app/search/jump.ts) scrolled to
 * one — live sections replace their first render, chunks far off screen are
 * laid out when they come near — and the browser's scroll anchoring does not
 * always follow (its anchor rendered anew, or a browser without it). So the
 * section is held at the top while the page settles, until the reader moves.
 */

/** How long a section is held at the top while the page lays out around it (unless the reader moves first). */
const HOLD_MS = 10_000;
/** What a reader does to move on their own: the hold lets go. */
const READER_MOVES = ["wheel", "touchstart", "keydown", "pointerdown"] as const;

/** The hold under way: one at a time (a later landing replaces it). */
let releaseCurrent: (() => void) | null = null;

/**
 * Scrolls the element with this id to the top, and again whenever the page's
 * height changes for HOLD_MS (by id: a section may be rendered anew, or not be
 * there yet), until the reader moves or the address no longer names it.
 * Returns the release.
 */
export function holdInView(id: string): () => void {
  releaseCurrent?.();
  const scroll = () => {
    if (window.location.hash !== `#${id}`) return release();
    document.getElementById(id)?.scrollIntoView({ block: "start" });
  };
  const resized = new ResizeObserver(scroll);
  const timer = setTimeout(() => release(), HOLD_MS);
  const release = () => {
    resized.disconnect();
    clearTimeout(timer);
    for (const move of READER_MOVES) window.removeEventListener(move, release, { capture: true });
    if (releaseCurrent === release) releaseCurrent = null;
  };
  releaseCurrent = release;
  for (const move of READER_MOVES) window.addEventListener(move, release, { capture: true, passive: true });
  // The body's size changes as any section is laid out anew; its first call comes at once.
  resized.observe(document.body);
  return release;
}

/** The section id an address's fragment names (`#section-<id>`), or null. */
export function sectionAnchorOf(hash: string): string | null {
  return hash.startsWith("#section-") ? decodeURIComponent(hash.slice(1)) : null;
}
