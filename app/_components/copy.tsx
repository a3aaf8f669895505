"use client";

import { useRef, useState, type RefObject } from "react";

type CopyState = "idle" | "copied" | "select";

/**
 * Copies `value` to the clipboard. Clipboard access can be refused (plain
 * http, permissions): then the element in `selectRef` is selected so the
 * visitor can press Ctrl+C instead, and `state` says so.
 */
export function useCopy<E extends HTMLElement>(value: string): { ref: RefObject<E | null>; state: CopyState; copy: () => Promise<void> } {
  const ref = useRef<E>(null);
  const [state, setState] = useState<CopyState>("idle");
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      const element = ref.current;
      if (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement) element.select();
      else if (element) window.getSelection()?.selectAllChildren(element);
      setState("select");
    }
  }
  return { ref, state, copy };
}

export const COPY_HINT = "Press Ctrl+C (⌘C) to copy the selected text.";

/** A block of text to paste elsewhere (a configuration file, a command), with a copy button. */
export function CopySnippet({ label, code, testId }: { label: string; code: string; testId: string }) {
  const { ref, state, copy } = useCopy<HTMLPreElement>(code);
  return (
    <div className="snippet">
      <div className="snippet-bar">
        <span className="snippet-label">{label}</span>
        <button type="button" className="button button-small" onClick={copy} aria-label={`Copy: ${label}`}>
          {state === "copied" ? "Copied" : "Copy"}
        </button>
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: the snippet scrolls sideways; keyboard users must be able to focus it to scroll */}
      <pre ref={ref} className="snippet-code" data-testid={testId} tabIndex={0}>
        <code>{code}</code>
      </pre>
      {state === "select" ? <p className="snippet-hint">{COPY_HINT}</p> : null}
    </div>
  );
}
