"use client";

import { type RefObject, useCallback, useLayoutEffect } from "react";

/** Room left between what scrolls into view and the bar pinned at the foot. */
const GAP_PX = 16;

/** The bar at the foot (the commit bar's slot) while one is mounted, and who follows where it is. */
let footBar: HTMLElement | null = null;
const footBarMoved = new Set<() => void>();
const announceFootBar = () => {
  for (const follow of footBarMoved) follow();
};

/**
 * A callback ref for a bar pinned to the foot of the screen: while it is
 * mounted, the page's scroll padding at the foot is the bar's height and a
 * gap, so what scrolls into view (a control reached with Tab, a `#section`
 * link) stops clear of it (WCAG 2.4.11). The height follows the bar (two
 * rows on a narrow screen, a confirmation that adds one). Set on the root's
 * own style rather than through a custom property, which every element of
 * the page inherits: changing one restyles a 2,000-section page whole.
 */
export function useFootInset(): (node: HTMLElement | null) => () => void {
  return useCallback((node: HTMLElement | null) => {
    const root = document.documentElement;
    const observer = new ResizeObserver(([entry]) => {
      if (entry) root.style.scrollPaddingBottom = `${Math.ceil(entry.borderBoxSize[0]?.blockSize ?? 0) + GAP_PX}px`;
      announceFootBar();
    });
    if (node) {
      observer.observe(node);
      footBar = node;
      announceFootBar();
    }
    return () => {
      observer.disconnect();
      root.style.scrollPaddingBottom = "";
      if (footBar === node) {
        footBar = null;
        announceFootBar();
      }
    };
  }, []);
}

/**
 * Keeps an element fixed at the foot of the screen (the toast) clear of the
 * foot bar while it shows something (`shown`: what it shows, each new one
 * placed anew, as its height may differ; null when nothing): where the two
 * would meet, its `bottom` rises above the bar's top. Pinned, the bar sits
 * at the foot; at the end of a page, or on a page shorter than the screen,
 * it sits higher, where a fixed offset covered its Commit and Discard;
 * scrolled past it (the sidebar follows the text at 390 px), it is above the
 * element's own place. Followed per frame at most, on scroll, resize and the
 * bar's own changes (it appears, grows, empties).
 */
export function useClearOfFootBar(element: RefObject<HTMLElement | null>, shown: unknown): void {
  useLayoutEffect(() => {
    const node = element.current;
    if (shown === null || !node) return;
    let frame = 0;
    const place = () => {
      frame = 0;
      node.style.bottom = "";
      const bar = footBar?.getBoundingClientRect();
      if (!bar || bar.height === 0 || bar.bottom <= 0 || bar.top >= window.innerHeight) return;
      // At its own place (the foot of the screen) it is clear when the bar ends above it (scrolled up, at a page's end).
      if (node.getBoundingClientRect().top >= bar.bottom) return;
      node.style.bottom = `${Math.ceil(window.innerHeight - bar.top) + GAP_PX / 2}px`;
    };
    const follow = () => {
      frame ||= requestAnimationFrame(place);
    };
    place();
    window.addEventListener("scroll", follow, { passive: true });
    window.addEventListener("resize", follow);
    footBarMoved.add(follow);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener("scroll", follow);
      window.removeEventListener("resize", follow);
      footBarMoved.delete(follow);
      node.style.bottom = "";
    };
  }, [element, shown]);
}
