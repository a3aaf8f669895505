"use client";

/**
 * The branch's draft as the page sees it, followed live (the `draftStatus`
 * subscription: the server sends it again when the draft changes, the head
 * moves or someone connects), and the commit bar built on it: which sections
 * changed, who edited, Commit with a suggested message, Discard with a
 * confirmation, pinned to the foot of the screen while there is anything to
 * commit; Ctrl/⌘+S opens it. A commit or discard by anyone clears the bar on
 * every page.
 */
import { InlineError } from "@/app/_components/action-form";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { ConfirmButton } from "@/app/_components/confirm-button";
import { useToast } from "@/app/_components/toast";
import { useFootInset } from "@/app/_lib/foot-inset";
import { useTRPC } from "@/app/_lib/trpc";
import type { DocumentsResults } from "@/server/actions/documents";
import { useDocumentsTool } from "./tools";

type DraftView = DocumentsResults["draft_status"];

/** The branch's draft status as the server last sent it (null until it has, or while `enabled` is false). */
export function useDraftStatus(documentId: string, branchName: string, enabled: boolean): DraftView | null {
  const trpc = useTRPC();
  const { data } = useSubscription(trpc.draftStatus.subscriptionOptions({ documentId, branchName }, { enabled }));
  return data ?? null;
}

function suggestedMessage(sections: DraftView["changedSections"]): string {
  if (sections.length === 0) return "Update the document";
  if (sections.length === 1) return `Update section "${sections[0]!.name}"`;
  if (sections.length <= 3) return `Update sections ${sections.map((s) => `"${s.name}"`).join(", ")}`;
  return `Update ${sections.length} sections`;
}

/** What Commit says when the draft holds nothing: it never does nothing visible. */
const NOTHING_TO_COMMIT = "Nothing to commit: the text is as it was at the last commit.";

/** Ctrl+S on Windows and Linux, ⌘+S on a Mac: the browser's "save page", taken over to mean "commit". */
const isSaveKey = (event: KeyboardEvent) =>
  (event.ctrlKey || event.metaKey) && !event.altKey && !event.shiftKey && event.key.toLowerCase() === "s";

export function CommitBar({ documentId, branchName, status }: { documentId: string; branchName: string; status: DraftView | null }) {
  const router = useRouter();
  const documents = useDocumentsTool();
  const toast = useToast();
  const [message, setMessage] = useState("");
  const [touched, setTouched] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const messageField = useRef<HTMLInputElement>(null);
  const slot = useFootInset();
  const suggestion = suggestedMessage(status?.changedSections ?? []);
  // The field follows the suggestion until the person writes their own.
  const shown = touched ? message : suggestion;
  const uncommitted = status?.uncommittedChanges ?? false;

  // Ctrl/⌘+S anywhere on the page opens the commit box: the message, selected, ready to be confirmed with Enter or rewritten.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isSaveKey(event)) return;
      event.preventDefault();
      if (!uncommitted) {
        toast({ message: NOTHING_TO_COMMIT });
        return;
      }
      messageField.current?.focus();
      messageField.current?.select();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [uncommitted, toast]);

  if (!status || !uncommitted) {
    return <div ref={slot} className="commit-bar-slot" aria-live="polite" />;
  }

  const commit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setPending(true);
    const message = shown.trim();
    const result = await documents({ action: "commit", documentId, branchName, ...(message ? { commitMessage: message } : {}) });
    setPending(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    setError(null);
    setTouched(false);
    setMessage("");
    toast({ message: result.value.changed ? `Committed: ${result.value.message.split("\n")[0]}` : NOTHING_TO_COMMIT });
    router.refresh();
  };

  return (
    <div ref={slot} className="commit-bar-slot" aria-live="polite">
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
              ref={messageField}
              name="message"
              aria-keyshortcuts="Control+S Meta+S"
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
              const result = await documents({ action: "discard", documentId, branchName });
              return result.ok ? null : result.message;
            }}
          />
        </div>
        <InlineError error={error} />
      </form>
    </div>
  );
}
