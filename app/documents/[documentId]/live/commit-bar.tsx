"use client";

/**
 * The branch's draft as the page sees it, polled every few seconds (a cheap
 * `list_branches`, plus two reads when something is uncommitted), and the
 * commit bar built on it: which sections changed, who edited, Commit with a
 * suggested message, Discard with a confirmation. A commit or discard by
 * anyone clears the bar on every page at the next poll.
 */
import { InlineError } from "@/app/_components/action-form";
import { useRouter } from "next/navigation";
import { type FormEvent, useCallback, useEffect, useState } from "react";
import { ConfirmButton } from "@/app/_components/confirm-button";
import { commitDraft, type DraftView, discardDraft, readDraftStatus } from "./actions";

const POLL_MS = 3_000;

/** The draft status, refreshed every few seconds while the page is open; `refresh` asks at once. */
export function useDraftStatus(documentId: string, branchName: string, enabled: boolean) {
  const [status, setStatus] = useState<DraftView | null>(null);
  const refresh = useCallback(async () => {
    const result = await readDraftStatus({ documentId, branchName });
    if (result.ok) setStatus(result.value);
  }, [documentId, branchName]);
  useEffect(() => {
    if (!enabled) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      await refresh();
      if (!stopped) timer = setTimeout(tick, POLL_MS);
    };
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [enabled, refresh]);
  return { status, refresh };
}

function suggestedMessage(sections: DraftView["changedSections"]): string {
  if (sections.length === 0) return "Update the document";
  if (sections.length === 1) return `Update section "${sections[0]!.name}"`;
  if (sections.length <= 3) return `Update sections ${sections.map((s) => `"${s.name}"`).join(", ")}`;
  return `Update ${sections.length} sections`;
}

export function CommitBar({
  documentId,
  branchName,
  status,
  refresh,
}: {
  documentId: string;
  branchName: string;
  status: DraftView | null;
  refresh: () => Promise<void>;
}) {
  const router = useRouter();
  const [message, setMessage] = useState("");
  const [touched, setTouched] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const suggestion = suggestedMessage(status?.changedSections ?? []);
  // The field follows the suggestion until the person writes their own.
  const shown = touched ? message : suggestion;

  if (!status?.uncommittedChanges) {
    return <div className="commit-bar-slot" aria-live="polite" />;
  }

  const commit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setPending(true);
    const result = await commitDraft({ documentId, branchName, message: shown });
    setPending(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    setError(null);
    setTouched(false);
    setMessage("");
    await refresh();
    router.refresh();
  };

  return (
    <div className="commit-bar-slot" aria-live="polite">
      <form className="commit-bar" onSubmit={commit} data-testid="commit-bar" aria-label="Uncommitted changes">
        <div className="commit-bar-summary">
          <strong>Uncommitted changes</strong>
          {status.changedSections.length > 0 ? (
            <span>
              {" in "}
              {status.changedSections.map((s, i) => (
                <span key={s.sectionId}>
                  {i > 0 ? ", " : ""}
                  <a href={`#section-${s.sectionId}`}>{s.name || "Untitled section"}</a>
                </span>
              ))}
            </span>
          ) : null}
          {status.editors.length > 0 ? (
            <span className="muted" data-testid="commit-bar-editors">
              {" · edited by "}
              {status.editors.map((e) => e.name).join(", ")}
            </span>
          ) : null}
        </div>
        <div className="commit-bar-actions">
          <label className="commit-message">
            <span className="visually-hidden">Commit message</span>
            <input
              name="message"
              value={shown}
              maxLength={1000}
              onChange={(event) => {
                setTouched(true);
                setMessage(event.target.value);
              }}
            />
          </label>
          <button type="submit" className="button button-small button-primary" disabled={pending}>
            {pending ? "Committing…" : "Commit"}
          </button>
          <ConfirmButton
            label="Discard"
            question={`Throw away every uncommitted edit on ${branchName}, for everyone?`}
            confirmLabel="Discard changes"
            pendingLabel="Discarding…"
            onConfirm={async () => {
              const result = await discardDraft({ documentId, branchName });
              if (!result.ok) return result.message;
              await refresh();
              return null;
            }}
          />
        </div>
        <InlineError error={error} />
      </form>
    </div>
  );
}
