"use client";

/**
 * Opening a hit: the client-side navigation to the document page, then a
 * scroll to the section once the page has rendered it. The document page
 * renders its sections after the navigation has ended, when the browser has
 * already looked for the `#section-…` target and not found it; once there, the
 * section is held in view while the page lays out around it (hold-in-view.ts).
 */
import type { useRouter } from "next/navigation";
import { holdInView } from "@/app/_components/hold-in-view";

/** How long a section is waited for before the jump settles for the top of the page. */
const WAIT_MS = 10_000;

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
      requestAnimationFrame(() => holdInView(id));
    } else if (Date.now() - started > WAIT_MS) {
      observer.disconnect();
    }
  };
  observer.observe(document.body, { childList: true, subtree: true });
  setTimeout(() => observer.disconnect(), WAIT_MS);
}
