/**
 * The documents home page's "Deleted" view: documents deleted on their
 * default branch that the person could see, newest deletion first, with who
 * deleted them (for a merged deletion, who merged it) and Restore.
 */
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { DataTable } from "@/app/_components/page-parts";
import { RestoreDocumentButton } from "@/app/_components/restore-document-button";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt } from "@/app/_lib/quire";
import { withQuery } from "@/app/_lib/search-params";
import type { SessionUser } from "@/app/_lib/session";
import type { DocumentsResults } from "@/server/actions/documents";
import { getBridge } from "@/server/bridge";
import "@/app/settings/settings.css";
import "@/app/documents/[documentId]/settings/settings.css";

export type DeletedDocumentList = DocumentsResults["list_deleted"];

/** The whole view (`/?view=deleted`), a page of 50 at a time. */
export async function DeletedDocumentsView({ user, cursor }: { user: SessionUser; cursor: string | undefined }) {
  const listed = await attempt(
    (): Promise<DeletedDocumentList> =>
      getBridge().callTool("documents", user.id, { action: "list_deleted", limit: 50, ...(cursor ? { cursor } : {}) }),
  );
  return (
    <AppShell user={user}>
      <div className="page-heading">
        <div>
          <h1>Deleted documents</h1>
          <p className="muted">Deleted on their default branch, most recent first. Restoring brings a document back as it was.</p>
        </div>
      </div>
      <div className="doc-toolbar">
        <nav className="doc-order" aria-label="View">
          <Link href="/">By path</Link>
          <Link href={withQuery("/", { order: "updated" })}>Recently edited</Link>
          <Link href={withQuery("/", { view: "deleted" })} aria-current="page">
            Deleted
          </Link>
        </nav>
      </div>
      {listed.ok ? (
        <DeletedDocuments listed={listed.value} userId={user.id} />
      ) : (
        <ErrorPanel title="Could not list deleted documents" code={listed.code} message={listed.message} />
      )}
      {listed.ok && (cursor || listed.value.nextCursor) ? (
        <nav className="pager" aria-label="Pages">
          {cursor ? <Link href={withQuery("/", { view: "deleted" })}>← First page</Link> : <span />}
          {listed.value.nextCursor ? (
            <Link href={withQuery("/", { view: "deleted", cursor: listed.value.nextCursor })} rel="next">
              Next page →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </AppShell>
  );
}

export function DeletedDocuments({ listed, userId }: { listed: DeletedDocumentList; userId: string }) {
  if (listed.deletedDocuments.length === 0) {
    return (
      <div className="empty-state" data-testid="deleted-list">
        <h2>No deleted documents</h2>
        <p className="muted">Documents deleted through a merge request are listed here, and can be restored.</p>
      </div>
    );
  }
  return (
    <div className="table-card">
      <DataTable testId="deleted-list" columns={["Document", "Deleted by", "When"]}>
        {listed.deletedDocuments.map((doc) => (
          <tr key={doc.documentId} data-testid="deleted-row" data-document-id={doc.documentId}>
            <td>
              <Link href={`/documents/${doc.documentId}/history`}>{doc.name}</Link>
              <div className="muted small deleted-path">
                <code>{doc.path}</code>
              </div>
            </td>
            <td data-label="Deleted by">{doc.deletedBy.userId === userId ? "You" : (doc.deletedBy.name ?? "Former member")}</td>
            <td className="muted small" data-label="When">
              <TimeAgo value={doc.deletedAt} />
            </td>
            <td className="cell-actions">
              <RestoreDocumentButton
                documentId={doc.documentId}
                defaultBranch={doc.defaultBranch}
                path={doc.path}
                requiredApprovals={doc.requiredApprovals}
              />
            </td>
          </tr>
        ))}
      </DataTable>
    </div>
  );
}
