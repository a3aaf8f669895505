/**
 * A document's settings: its name and path, deleting it, its merge rule
 * (required approvals, and the default branch's protection as the server has
 * it), and its branches. Read through the bridge; every change goes through
 * the tools over tRPC (settings-client.tsx).
 */
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { AppShell } from "@/app/_components/app-shell";
import { failedPage } from "@/app/_components/error-panel";
import { DataTable, PageHeading, SettingsSection } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt, type BranchSummary, listBranches, type MergeRequestView, UUID_PATTERN } from "@/app/_lib/quire";
import { requireUser } from "@/app/_lib/session";
import type { DocumentsResults } from "@/server/actions/documents";
import { getBridge } from "@/server/bridge";
import { CodedError, DeleteBranchButton, DeleteDocumentButton, NameAndPathForm, RequiredApprovalsForm } from "./settings-client";
import "@/app/settings/settings.css";
import "./settings.css";

type Props = { params: Promise<{ documentId: string }> };

const getOnce = cache((userId: string, documentId: string) =>
  attempt(async (): Promise<DocumentsResults["get"]> => getBridge().callTool("documents", userId, { action: "get", documentId })),
);

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { documentId } = await params;
  const user = await requireUser(`/documents/${encodeURIComponent(documentId)}/settings`);
  if (!UUID_PATTERN.test(documentId)) return { title: "Document settings" };
  const doc = await getOnce(user.id, documentId);
  return { title: doc.ok ? `Settings · ${doc.value.name}` : "Document settings" };
}

/** Open merge requests of the document by the branches they name (as source or target): those branches cannot be deleted. */
async function openRequestsByBranch(userId: string, documentId: string): Promise<Map<string, MergeRequestView[]>> {
  const byBranch = new Map<string, MergeRequestView[]>();
  let cursor: string | undefined;
  for (let page = 0; page < 10; page += 1) {
    const listed = await getBridge().callTool("merge_requests", userId, {
      action: "list",
      documentId,
      status: "open",
      limit: 100,
      ...(cursor ? { cursor } : {}),
    });
    for (const request of listed.mergeRequests) {
      for (const branch of new Set([request.sourceBranch, request.targetBranch])) {
        byBranch.set(branch, [...(byBranch.get(branch) ?? []), request]);
      }
    }
    if (!listed.nextCursor) break;
    cursor = listed.nextCursor;
  }
  return byBranch;
}

export default async function DocumentSettingsPage({ params }: Props) {
  const { documentId } = await params;
  const documentPath = `/documents/${encodeURIComponent(documentId)}`;
  const user = await requireUser(`${documentPath}/settings`);
  if (!UUID_PATTERN.test(documentId)) notFound();
  const doc = await getOnce(user.id, documentId);
  if (!doc.ok) return failedPage(user, "Could not open this document", doc);
  const document = doc.value;
  const [branches, requests] = await Promise.all([
    attempt((): Promise<BranchSummary[]> => listBranches(user.id, documentId)),
    attempt(() => openRequestsByBranch(user.id, documentId)),
  ]);
  const canEdit = document.yourPermission === "edit";
  const isProtected = document.requiredApprovals > 0;
  const main = document.defaultBranch;

  return (
    <AppShell user={user}>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <ol>
          <li>
            <Link href="/">Documents</Link>
          </li>
          <li>
            <Link href={documentPath}>{document.name}</Link>
          </li>
          <li aria-current="page">Settings</li>
        </ol>
      </nav>
      <PageHeading
        title="Document settings"
        description={
          <>
            <strong className="manage-doc-name">{document.name}</strong> <code className="manage-doc-path">{document.path}</code>
          </>
        }
        action={
          <Link href={documentPath} className="button">
            Back to document
          </Link>
        }
      />
      {document.deleted ? (
        <div className="banner banner-warning" role="status" data-testid="deleted-banner">
          This document is deleted on {main}. <Link href="/?view=deleted">Restore it from Deleted documents</Link>.
        </div>
      ) : null}

      <SettingsSection
        id="name-heading"
        title="Name and path"
        description={
          isProtected
            ? `${main} is protected, so a rename or move is proposed in a merge request that needs ${document.requiredApprovals} approval(s).`
            : `Saved as a commit on ${main}.`
        }
      >
        <div className="panel settings-panel">
          {canEdit && !document.deleted ? (
            <NameAndPathForm
              documentId={documentId}
              defaultBranch={main}
              name={document.name}
              path={document.path}
              isProtected={isProtected}
            />
          ) : (
            <p className="muted" data-testid="name-read-only">
              {document.deleted
                ? "A deleted document keeps its name and path until it is restored."
                : "You can read this document but not change it. Ask its owner or a workspace admin for edit access."}
            </p>
          )}
        </div>
      </SettingsSection>

      <SettingsSection
        id="merge-heading"
        title="Merge rule and protection"
        description="Approvals from people (not agents, not the request's author) that every changed section needs before a merge request into the default branch may be merged."
      >
        <div className="panel settings-panel">
          <p className="protection" data-testid="protection" data-protected={isProtected ? "true" : "false"}>
            <span className={`status ${isProtected ? "status-active" : "status-expired"}`}>
              {isProtected ? "Protected" : "Not protected"}
            </span>{" "}
            {isProtected ? (
              <>
                <code>{main}</code> takes no direct writes — not edits, commits of live drafts, renames or reverts, from anyone. Every
                change reaches it through a merge request with {document.requiredApprovals} approval
                {document.requiredApprovals === 1 ? "" : "s"}.
              </>
            ) : (
              <>
                People with edit access write to <code>{main}</code> directly, and merge requests need no approvals. Set required approvals
                above 0 to protect it.
              </>
            )}
          </p>
          {document.canManage ? (
            <RequiredApprovalsForm documentId={documentId} requiredApprovals={document.requiredApprovals} />
          ) : (
            <p className="muted small" data-testid="approvals-read-only">
              Required approvals: <strong>{document.requiredApprovals}</strong>. Only the document&apos;s creator and workspace owners and
              admins, signed in, change this rule; ask one of them.
            </p>
          )}
        </div>
      </SettingsSection>

      <SettingsSection
        id="branches-heading"
        title="Branches"
        description="Deleting a branch removes it and its live draft; its commits stay in the history. The default branch, and branches of open merge requests, cannot be deleted."
      >
        {!branches.ok ? (
          <CodedError refusal={branches} />
        ) : (
          <div className="table-card">
            <DataTable testId="branch-list" columns={["Branch", "Updated", "Live draft"]}>
              {branches.value.map((branch) => {
                const open = requests.ok ? (requests.value.get(branch.name) ?? []) : [];
                const reason =
                  branch.name === main
                    ? "The default branch cannot be deleted."
                    : open.length > 0
                      ? `Open merge request: ${open.map((r) => r.title).join(", ")}. Merge or close it first.`
                      : !canEdit
                        ? "Deleting a branch needs edit access."
                        : null;
                return (
                  <tr key={branch.name} data-testid="branch-row" data-branch={branch.name}>
                    <td>
                      <Link href={`${documentPath}?branch=${encodeURIComponent(branch.name)}`}>
                        <code>{branch.name}</code>
                      </Link>{" "}
                      {branch.isDefault ? <span className="role">default</span> : null}
                      {open.map((r) => (
                        <Link key={r.mergeRequestId} href={`/merge-requests/${r.mergeRequestId}`} className="manage-request-link">
                          {r.title}
                        </Link>
                      ))}
                    </td>
                    <td className="muted small" data-label="Updated">
                      <TimeAgo value={branch.updatedAt} />
                    </td>
                    <td className="muted small" data-label="Live draft">
                      {branch.draft.uncommittedChanges ? "Uncommitted edits" : "—"}
                    </td>
                    <td className="cell-actions">
                      {reason ? (
                        <span className="manage-disabled">
                          <button type="button" className="button button-small" disabled aria-describedby={`why-${branch.name}`}>
                            Delete
                          </button>
                          <span className="muted small" id={`why-${branch.name}`}>
                            {reason}
                          </span>
                        </span>
                      ) : (
                        <DeleteBranchButton
                          documentId={documentId}
                          branchName={branch.name}
                          uncommittedChanges={branch.draft.uncommittedChanges}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </DataTable>
          </div>
        )}
      </SettingsSection>

      {canEdit && !document.deleted ? (
        <SettingsSection
          id="delete-heading"
          title="Delete document"
          description={`A deletion reaches ${main} only through a merge request, so it is reviewed like any change. Deleted documents can be restored.`}
        >
          <div className="panel settings-panel">
            <DeleteDocumentButton documentId={documentId} defaultBranch={main} path={document.path} />
          </div>
        </SettingsSection>
      ) : null}
    </AppShell>
  );
}
