/**
 * The signed-in user's standing on a document, for the document page: a
 * "Settings" button, a "Share & permissions" button for those who manage it,
 * and a quiet note when they may only read it.
 */
import type { DocumentsResults } from "@/server/actions/documents";
import Link from "next/link";
import { attempt, type Outcome } from "@/app/_lib/quire";
import { getBridge } from "@/server/bridge";
import "./sharing/sharing.css";

export type DocumentAccess = Pick<DocumentsResults["get"], "yourPermission" | "canManage">;

export function loadDocumentAccess(userId: string, documentId: string): Promise<Outcome<DocumentAccess>> {
  return attempt(async () => {
    const { yourPermission, canManage }: DocumentAccess = await getBridge().callTool("documents", userId, { action: "get", documentId });
    return { yourPermission, canManage };
  });
}

/** The document's header buttons: its settings (name, path, deletion, merge rule, branches) for everyone who can open it. */
export function DocumentActions({ documentId, access }: { documentId: string; access: Outcome<DocumentAccess> }) {
  if (!access.ok) return null;
  return (
    <div className="doc-actions">
      <Link href={`/documents/${encodeURIComponent(documentId)}/settings`} className="button" data-testid="settings-button">
        Settings
      </Link>
      {access.value.canManage ? (
        <Link href={`/documents/${encodeURIComponent(documentId)}/sharing`} className="button" data-testid="share-button">
          <ShareIcon /> Share &amp; permissions
        </Link>
      ) : null}
    </div>
  );
}

/** "Read only" in the document's meta line when the user cannot edit. */
export function AccessNote({ access }: { access: Outcome<DocumentAccess> }) {
  if (!access.ok || access.value.yourPermission !== "read") return null;
  return (
    <span
      className="access-pill"
      data-testid="access-note"
      title="You can read this document but not change it. Ask its owner for edit access."
    >
      <LockIcon /> Read only
    </span>
  );
}

function ShareIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" className="icon">
      <circle cx="6" cy="5.5" r="2.25" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <path
        d="M1.75 13.5c.4-2.4 2.1-3.75 4.25-3.75s3.85 1.35 4.25 3.75"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.3"
        strokeLinecap="round"
      />
      <path d="M12.5 5v4M10.5 7h4" fill="none" stroke="currentColor" strokeWidth="1.3" strokeLinecap="round" />
    </svg>
  );
}

function LockIcon() {
  return (
    <svg viewBox="0 0 16 16" width="11" height="11" aria-hidden="true">
      <rect x="3" y="7" width="10" height="7" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <path d="M5.25 7V5a2.75 2.75 0 0 1 5.5 0v2" fill="none" stroke="currentColor" strokeWidth="1.4" />
    </svg>
  );
}
