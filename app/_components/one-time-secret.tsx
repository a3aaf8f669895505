"use client";

import { COPY_HINT, useCopy } from "./copy";

/** A secret shown once (an invite link, an API token), with a copy button. */
export function OneTimeSecret({ title, value, hint, testId }: { title: string; value: string; hint: string; testId: string }) {
  const { ref, state, copy } = useCopy<HTMLInputElement>(value);

  return (
    <div className="secret" role="status">
      <p className="secret-title">{title}</p>
      <div className="secret-row">
        <input
          ref={ref}
          type="text"
          readOnly
          value={value}
          aria-label={title}
          data-testid={testId}
          onFocus={(event) => event.currentTarget.select()}
          spellCheck={false}
        />
        <button type="button" className="button" onClick={copy}>
          {state === "copied" ? "Copied" : "Copy"}
        </button>
      </div>
      <p className="secret-hint">
        {state === "select" ? `${COPY_HINT} ` : ""}
        {hint}
      </p>
    </div>
  );
}
