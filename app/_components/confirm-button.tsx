"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import type { ActionResult } from "@/app/_lib/action-result";

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
        {state.kind === "error" ? (
          <p className="inline-error" role="alert">
            {state.message}
          </p>
        ) : null}
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
      <button
        type="button"
        className="button button-small button-quiet"
        disabled={state.kind === "pending"}
        onClick={() => setState({ kind: "idle" })}
      >
        Cancel
      </button>
    </div>
  );
}

/**
 * A ConfirmButton that calls the server: its error message is shown
 * inline; on success the page refreshes (or `onDone` runs instead).
 */
export function ActionConfirmButton({
  action,
  onDone,
  ...labels
}: {
  label: string;
  confirmLabel: string;
  question: string;
  pendingLabel: string;
  action: () => Promise<ActionResult<unknown>>;
  onDone?: () => void;
}) {
  const router = useRouter();
  return (
    <ConfirmButton
      {...labels}
      onConfirm={async () => {
        const result = await action();
        if (!result.ok) return result.message;
        if (onDone) onDone();
        else router.refresh();
        return null;
      }}
    />
  );
}
