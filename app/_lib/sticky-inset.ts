"use client";

import { useCallback } from "react";

/**
 * A callback ref for an element pinned to an edge of the screen: its height,
 * kept in the root's CSS `variable` while it is mounted, so the page's scroll
 * padding (globals.css) keeps what scrolls into view clear of it — a control
 * reached with Tab, a `#section` link. The height follows the element (a bar
 * that wraps to two rows on a narrow screen, a confirmation that adds one).
 */
export function useStickyInset(variable: `--${string}`): (node: HTMLElement | null) => () => void {
  return useCallback(
    (node: HTMLElement | null) => {
      const root = document.documentElement;
      const observer = new ResizeObserver(([entry]) => {
        if (entry) root.style.setProperty(variable, `${Math.ceil(entry.borderBoxSize[0]?.blockSize ?? 0)}px`);
      });
      if (node) observer.observe(node);
      return () => {
        observer.disconnect();
        root.style.removeProperty(variable);
      };
    },
    [variable],
  );
}
