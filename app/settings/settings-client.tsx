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

/** A destructive button that asks once more, inline, before it acts. */
export function ConfirmButton({
  label,
  confirmLabel,
  question,
  pendingLabel,
  onConfirm,
}: {
  label: string;
  confirmLabel: string;
  question: string;
  pendingLabel: string;
  onConfirm: () => Promise<string | null>;
}) {
  const [state, setState] = useState<{ kind: "idle" } | { kind: "asking" } | { kind: "pending" } | { kind: "error"; message: string }>({
    kind: "idle",
  });

  if (state.kind === "idle" || state.kind === "error") {
    return (
      <div className="confirm">
        <button type="button" className="button button-small button-danger-quiet" onClick={() => setState({ kind: "asking" })}>
          {label}
        </button>
        {state.kind === "error" ? <p className="inline-error" role="alert">{state.message}</p> : null}
      </div>
    );
  }
  return (
    <div className="confirm confirm-asking">
      <span className="confirm-question">{question}</span>
      <button
        type="button"
        className="button button-small button-danger"
        disabled={state.kind === "pending"}
        onClick={async () => {
          setState({ kind: "pending" });
          const error = await onConfirm();
          setState(error ? { kind: "error", message: error } : { kind: "idle" });
        }}
      >
        {state.kind === "pending" ? pendingLabel : confirmLabel}
      </button>
      <button type="button" className="button button-small button-quiet" disabled={state.kind === "pending"} onClick={() => setState({ kind: "idle" })}>
        Cancel
      </button>
    </div>
  );
}
