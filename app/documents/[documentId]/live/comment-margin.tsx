"use client";

/**
 * On a wide screen, the open threads beside the text they belong to (as in
 * Google Docs): a column at the document's right edge, each thread at the
 * height of its highlighted text — found by the highlight's `data-comment-id`
 * where its editor drew it, else at its section's top (an editor draws only
 * the lines near the screen; a section far away has no editor yet) — and
 * pushed down below the one above when they would overlap. Placed again
 * (once per frame at most) whenever the document's layout or content
 * changes. Below 1100 px the column is not shown (comment-margin.css) and the
 * comments panel is where threads are read.
 */
import { type ReactNode, useLayoutEffect, useRef, useSyncExternalStore } from "react";
import type { CommentThread } from "@/server/actions/live-views";
import "./comment-margin.css";

/** Where the column shows: the same width as comment-margin.css's media query. */
const WIDE_SCREEN = "(min-width: 1100px)";

/** Whether the screen is wide enough for the column (false while rendering on the server: the panel is there either way). */
export function useWideScreen(): boolean {
  return useSyncExternalStore(
    (changed) => {
      const query = window.matchMedia(WIDE_SCREEN);
      query.addEventListener("change", changed);
      return () => query.removeEventListener("change", changed);
    },
    () => window.matchMedia(WIDE_SCREEN).matches,
    () => false,
  );
}

/** Space kept between two threads stacked in the column. */
const GAP_PX = 8;

export function CommentMargin({
  threads,
  render,
}: {
  /** The open, anchored threads, in document order. */
  threads: CommentThread[];
  render: (thread: CommentThread, index: number) => ReactNode;
}) {
  const column = useRef<HTMLOListElement>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: new threads are new items to place, read from the DOM
  useLayoutEffect(() => {
    const list = column.current;
    const page = list?.closest<HTMLElement>(".live-document");
    if (!list || !page) return;
    let frame = 0;
    const place = () => {
      frame = 0;
      // Hidden on a narrow screen: nothing to place.
      if (list.offsetParent === null) return;
      const base = list.getBoundingClientRect().top;
      let floor = 0;
      for (const item of list.querySelectorAll<HTMLElement>(":scope > li")) {
        const { threadId, threadSection } = item.dataset;
        const anchor =
          page.querySelector(`[data-comment-id="${CSS.escape(threadId ?? "")}"]`) ??
          document.getElementById(`section-${threadSection ?? ""}`);
        const wanted = anchor ? anchor.getBoundingClientRect().top - base : floor;
        const top = Math.max(wanted, floor);
        item.style.top = `${Math.round(top)}px`;
        floor = top + item.offsetHeight + GAP_PX;
      }
    };
    const schedule = () => {
      if (frame === 0) frame = requestAnimationFrame(place);
    };
    place();
    const resized = new ResizeObserver(schedule);
    resized.observe(page);
    // Text typed, editors mounted, replies added: anything that may move a highlight or change a thread's height.
    const changed = new MutationObserver(schedule);
    changed.observe(page, { childList: true, subtree: true, characterData: true });
    window.addEventListener("resize", schedule);
    return () => {
      cancelAnimationFrame(frame);
      resized.disconnect();
      changed.disconnect();
      window.removeEventListener("resize", schedule);
    };
  }, [threads]);

  return (
    <aside className="comment-margin" aria-label="Threads beside the text">
      <ol ref={column} className="comment-margin-list">
        {threads.map((thread, index) => (
          <li key={thread.commentId} data-thread-id={thread.commentId ?? undefined} data-thread-section={thread.sectionId}>
            <ol className="comment-thread-list">{render(thread, index)}</ol>
          </li>
        ))}
      </ol>
    </aside>
  );
}
