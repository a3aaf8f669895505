"use client";

/**
 * Quick open (Ctrl+K, ⌘K on a Mac, or the header's Search button): a dialog
 * that searches as you type (through the typed tRPC client, once typing rests)
 * and jumps to the hit's section. Keyboard: arrows move, Enter opens, Escape
 * closes. A combobox controlling a listbox, so screen readers follow the
 * active option.
 */
import { usePathname, useRouter } from "next/navigation";
import { useCallback, useEffect, useId, useRef, useState } from "react";
import { createPortal } from "react-dom";
import { toolCall } from "@/app/_lib/tool-call";
import { useTRPCClient } from "@/app/_lib/trpc";
import { hitHref, hitTitle, KIND_LABELS, resultCount, type SearchResult, Snippet } from "@/app/search/hit";
import { jumpTo } from "@/app/search/jump";
import type { searchTool } from "@/server/actions/search";
import "./quick-open.css";

/** How long typing must rest before a search is sent. */
const DEBOUNCE_MS = 150;
const LIMIT = 8;

type Answer = { query: string } & ({ ok: true; result: SearchResult } | { ok: false; message: string });

export function QuickOpen() {
  const [open, setOpen] = useState(false);
  const opener = useRef<HTMLElement | null>(null);
  const pathname = usePathname();

  const show = useCallback(() => {
    opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    setOpen(true);
  }, []);
  const close = useCallback(() => {
    setOpen(false);
    opener.current?.focus();
  }, []);

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === "k") {
        event.preventDefault();
        if (open) close();
        else show();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [open, show, close]);

  // A jump to another page closes the dialog.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on navigation only
  useEffect(() => setOpen(false), [pathname]);

  return (
    <>
      {/* A link to the search page, opened as the dialog once the page runs: it works before (and without) the script. */}
      <a
        href="/search"
        className="quick-open-button"
        aria-haspopup="dialog"
        aria-keyshortcuts="Control+K Meta+K"
        onClick={(event) => {
          if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
          event.preventDefault();
          show();
        }}
      >
        <span aria-hidden="true" className="quick-open-icon">
          ⌕
        </span>
        Search
        <span className="quick-open-shortcut" aria-hidden="true">
          Ctrl K
        </span>
      </a>
      {/* In the body, not the header: the header's backdrop-filter makes it the box a fixed element fills, so the
          dimmed backdrop covered the header alone. */}
      {open ? createPortal(<QuickOpenDialog onClose={close} />, document.body) : null}
    </>
  );
}

function QuickOpenDialog({ onClose }: { onClose: () => void }) {
  const search = toolCall<typeof searchTool>(useTRPCClient().search.query);
  const router = useRouter();
  const [query, setQuery] = useState("");
  const [answer, setAnswer] = useState<Answer | null>(null);
  const [active, setActive] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const ids = useId();
  const listId = `${ids}-list`;
  const optionId = (i: number) => `${ids}-option-${i}`;
  const searchRef = useRef(search);
  searchRef.current = search;

  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => input.current?.focus(), []);

  // A press outside the dialog (on the backdrop) closes it.
  useEffect(() => {
    const onPointerDown = (event: PointerEvent) => {
      if (dialog.current && !dialog.current.contains(event.target as Node)) onClose();
    };
    window.addEventListener("pointerdown", onPointerDown);
    return () => window.removeEventListener("pointerdown", onPointerDown);
  }, [onClose]);

  useEffect(() => {
    const text = query.trim();
    if (text === "") {
      setAnswer(null);
      return;
    }
    let current = true;
    const timer = setTimeout(async () => {
      const outcome = await searchRef.current({ query: text, limit: LIMIT });
      if (!current) return;
      setAnswer(outcome.ok ? { query: text, ok: true, result: outcome.value } : { query: text, ok: false, message: outcome.message });
      setActive(0);
    }, DEBOUNCE_MS);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [query]);

  const hits = answer?.ok ? answer.result.hits : [];
  const go = (href: string) => {
    onClose();
    jumpTo(router, href);
  };
  const allResults = `/search?q=${encodeURIComponent(query.trim())}`;

  const onKeyDown = (event: React.KeyboardEvent<HTMLInputElement>) => {
    if (event.key === "ArrowDown") {
      event.preventDefault();
      setActive((i) => (hits.length === 0 ? 0 : (i + 1) % hits.length));
    } else if (event.key === "ArrowUp") {
      event.preventDefault();
      setActive((i) => (hits.length === 0 ? 0 : (i - 1 + hits.length) % hits.length));
    } else if (event.key === "Enter") {
      event.preventDefault();
      const hit = hits[active];
      if (hit) go(hitHref(hit));
      else if (query.trim() !== "") go(allResults);
    } else if (event.key === "Escape") {
      event.preventDefault();
      onClose();
    }
  };

  return (
    <div className="quick-open-backdrop">
      <div ref={dialog} className="quick-open" role="dialog" aria-modal="true" aria-label="Quick open">
        <input
          ref={input}
          className="quick-open-input"
          type="text"
          role="combobox"
          aria-expanded={hits.length > 0}
          aria-controls={listId}
          aria-autocomplete="list"
          aria-activedescendant={hits.length > 0 ? optionId(active) : undefined}
          aria-label="Search documents, sections, comments and merge requests"
          placeholder="Jump to a document or section…"
          value={query}
          maxLength={200}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <div id={listId} role="listbox" className="quick-open-list" aria-label="Results">
          {hits.map((hit, i) => (
            // biome-ignore lint/a11y/useKeyWithClickEvents: the combobox input handles the keyboard (arrows, Enter)
            <div
              key={`${hit.kind}:${hit.documentId}:${hit.sectionId}:${hit.commentId}:${hit.mergeRequestId}`}
              id={optionId(i)}
              role="option"
              tabIndex={-1}
              aria-selected={i === active}
              className="quick-open-option"
              onMouseMove={() => setActive(i)}
              onClick={() => go(hitHref(hit))}
            >
              <span className="quick-open-title">
                <span className="quick-open-kind">{KIND_LABELS[hit.kind]}</span>
                {hitTitle(hit)}
              </span>
              <span className="quick-open-where">
                {hit.kind === "document" ? hit.path : `${hit.documentName} · ${hit.path}`}
                {hit.branchName ? ` · ${hit.branchName}` : ""}
              </span>
              <span className="quick-open-snippet">
                <Snippet parts={hit.snippet} />
              </span>
            </div>
          ))}
        </div>
        <div className="quick-open-footer" role="status">
          {answer === null ? (
            <span>Type to search. ↑↓ to move, Enter to open, Esc to close.</span>
          ) : !answer.ok ? (
            <span className="quick-open-error">{answer.message}</span>
          ) : answer.result.total === 0 ? (
            <span>Nothing found for “{answer.query}”.</span>
          ) : (
            <span>
              {resultCount(answer.result)}
              {answer.result.correctedTo ? ` for “${answer.result.correctedTo.join(" ")}”` : ""}.{" "}
              <a
                href={allResults}
                onClick={(e) => {
                  e.preventDefault();
                  go(allResults);
                }}
              >
                See all on the search page
              </a>
            </span>
          )}
        </div>
      </div>
    </div>
  );
}
