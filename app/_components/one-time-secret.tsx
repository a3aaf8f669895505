"use client";

import { useRef, useState } from "react";

/** A secret shown once (an invite link, an API token), with a copy button. */
export function OneTimeSecret({ title, value, hint, testId }: { title: string; value: string; hint: string; testId: string }) {
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<"idle" | "copied" | "select">("idle");

  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("copied");
    } catch {
      // Clipboard access can be refused (plain http, permissions): select the text for Ctrl+C instead.
      input.current?.select();
      setCopied("select");
    }
  }

  return (
    <div className="secret" role="status">
      <p className="secret-title">{title}</p>
      <div className="secret-row">
        <input
          ref={input}
          type="text"
          readOnly
          value={value}
          aria-label={title}
          data-testid={testId}
          onFocus={(event) => event.currentTarget.select()}
          spellCheck={false}
        />
        <button type="button" className="button" onClick={copy}>
          {copied === "copied" ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="secret-hint">
        {copied === "select" ? "Press Ctrl+C (⌘C) to copy the selected text. " : ""}
        {hint}
      </p>
    </div>
  );
}
