"use client";

/**
 * The branch's draft as the page sees it, followed live (the `draftStatus`
 * subscription: the server sends it again when the draft changes, the head
 * moves or someone connects), and the commit bar built on it: which sections
 * changed, who edited, Commit with a suggested message, Discard with a
 * confirmation. A commit or discard by anyone clears the bar on every page.
 */
import { InlineError } from "@/app/_components/action-form";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ConfirmButton } from "@/app/_components/confirm-button";
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

export function CommitBar({ documentId, branchName, status }: { documentId: string; branchName: string; status: DraftView | null }) {
  const router = useRouter();
  const documents = useDocumentsTool();
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
