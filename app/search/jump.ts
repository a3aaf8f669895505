"use client";

/**
 * Opening a hit: the client-side navigation to the document page, then a
 * scroll to the section once the page has rendered it. The document page
 * renders its sections after the navigation has ended, when the browser has
 * already looked for the `#section-…` target and not found it. And it goes on
 * laying them out after that (live sections replace their first render,
 * chunks far off screen are laid out when they come near), which can move the
 * section away again where the browser's scroll anchoring does not follow
 * (its anchor replaced, or a browser without it): the section is held at the
 * top until the page settles or the reader scrolls.
 */
import type { useRouter } from "next/navigation";

/** How long a section is waited for before the jump settles for the top of the page. */
const WAIT_MS = 10_000;
/** How long the section is held at the top while the page lays out around it (unless the reader moves first). */
const HOLD_MS = 10_000;
/** What a reader does to move on their own: the jump lets go. */
const READER_MOVES = ["wheel", "touchstart", "keydown", "pointerdown"] as const;

export function jumpTo(router: ReturnType<typeof useRouter>, href: string): void {
  router.push(href);
  const hash = href.indexOf("#");
  if (hash < 0) return;
  const id = decodeURIComponent(href.slice(hash + 1));
  const started = Date.now();
  // Watches the document (not a component, which the navigation unmounts) until the section is there.
  const observer = new MutationObserver(() => reveal());
  const reveal = () => {
    const target = document.getElementById(id);
    if (target && window.location.hash === `#${id}`) {
      observer.disconnect();
      requestAnimationFrame(() => holdAtTop(id));
    } else if (Date.now() - started > WAIT_MS) {
      observer.disconnect();
    }
  };
  observer.observe(document.body, { childList: true, subtree: true });
  setTimeout(() => observer.disconnect(), WAIT_MS);
}

/**
 * Scrolls the element with this id to the top, and again whenever the page's
 * layout changes for HOLD_MS (by id: a section may be rendered anew), until
 * the reader moves or the address no longer names it.
 */
function holdAtTop(id: string): void {
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
  };
  for (const move of READER_MOVES) window.addEventListener(move, release, { capture: true, passive: true });
  scroll();
  // The body's size changes as any section above (or below) is laid out anew; the first call comes at once.
  resized.observe(document.body);
}
