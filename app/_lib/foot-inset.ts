"use client";

import { useCallback } from "react";

/** Room left between what scrolls into view and the bar pinned at the foot. */
const GAP_PX = 16;

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
    });
    if (node) observer.observe(node);
    return () => {
      observer.disconnect();
      root.style.scrollPaddingBottom = "";
    };
  }, []);
}
