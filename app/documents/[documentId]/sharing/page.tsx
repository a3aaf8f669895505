import type { DocumentsResults } from "@/server/actions/documents";
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel, failedPage } from "@/app/_components/error-panel";
import { DataTable, PageHeading, Person, SettingsSection } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { absoluteTime, toDate } from "@/app/_lib/format";
import { attempt, UUID_PATTERN } from "@/app/_lib/quire";
import { getSessionUser, requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import {
  AddGrantForm,
  DocumentPermissionsForm,
  GrantSelect,
  RemoveGrantButton,
  RevokeShareLinkButton,
  ShareLinkForm,
  type PickableMember,
} from "./sharing-client";
import "@/app/settings/settings.css";
import "./sharing.css";

type Props = { params: Promise<{ documentId: string }> };

type DocumentInfo = DocumentsResults["get"];
type ShareLinkInfo = DocumentsResults["list_share_links"]["shareLinks"][number];

const getOnce = cache((userId: string, documentId: string) =>
  attempt(async (): Promise<DocumentInfo> => getBridge().callTool("documents", userId, { action: "get", documentId })),
);

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { documentId } = await params;
  const user = await getSessionUser();
  if (!user || !UUID_PATTERN.test(documentId)) return { title: "Share & permissions" };
  const doc = await getOnce(user.id, documentId);
  return { title: doc.ok ? `Share · ${doc.value.name}` : "Share & permissions" };
}

/** Every member, a page at a time (the picker needs them all; workspaces are small). */
async function allMembers(userId: string): Promise<PickableMember[]> {
  const members: PickableMember[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 25; page += 1) {
    const result = await getBridge().callTool("members", userId, {
      action: "list",
      limit: 200,
      ...(cursor ? { cursor } : {}),
    });
    members.push(...result.members);
    if (!result.nextCursor) break;
    cursor = result.nextCursor;
  }
  return members;
}

export default async function SharingPage({ params }: Props) {
  const { documentId } = await params;
  const documentPath = `/documents/${encodeURIComponent(documentId)}`;
  const user = await requireUser(`${documentPath}/sharing`);
  if (!UUID_PATTERN.test(documentId)) notFound();

  const doc = await getOnce(user.id, documentId);
  if (!doc.ok) return failedPage(user, "Could not open this document", doc);
  const document = doc.value;

  if (!document.canManage) {
    return (
      <AppShell user={user}>
        <div className="centered-card" role="alert" data-testid="sharing-denied">
          <p className="eyebrow">No permission</p>
          <h1>Only managers can change sharing</h1>
          <p className="muted">
            The document&apos;s creator and the workspace&apos;s owners and admins decide who can open <strong>{document.name}</strong>. You{" "}
            {document.yourPermission === "edit" ? "can edit it" : "can read it"}; ask one of them if you need more.
          </p>
          <p>
            <Link href={documentPath} className="button">
              Back to the document
            </Link>
          </p>
        </div>
      </AppShell>
    );
  }

  const bridge = getBridge();
  const [permissions, links, members, workspace] = await Promise.all([
    attempt(() => bridge.callTool("documents", user.id, { action: "get_permissions", documentId })),
    attempt(
      async (): Promise<{ shareLinks: ShareLinkInfo[] }> =>
        bridge.callTool("documents", user.id, { action: "list_share_links", documentId }),
    ),
    attempt(() => allMembers(user.id)),
    // The base of share links is the server's to decide (QUIRE_PUBLIC_URL, else the origin this page was asked for).
    bridge.workspace(user.id, { action: "get" }),
  ]);
  if (!permissions.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not load this document's permissions" code={permissions.code} message={permissions.message} />
      </AppShell>
    );
  }
  const { defaultPermission, aiAccess, grants } = permissions.value;
  const memberById = new Map((members.ok ? members.value : []).map((m) => [m.userId, m]));
  const granted = new Set(grants.map((g) => g.userId));
  const pickable = (members.ok ? members.value : []).filter(
    (m) => !granted.has(m.userId) && m.userId !== user.id && m.role !== "owner" && m.role !== "admin",
  );
  const now = new Date();

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
          <li aria-current="page">Share &amp; permissions</li>
        </ol>
      </nav>
      <PageHeading
        title="Share & permissions"
        description={
          <>
            Who can open <strong className="sharing-doc-name">{document.name}</strong>{" "}
            <code className="sharing-doc-path">{document.path}</code>
          </>
        }
        action={
          <Link href={documentPath} className="button">
            Back to document
          </Link>
        }
      />

      <SettingsSection
        id="general-heading"
        title="General access"
        description="Workspace owners and admins and the document's creator always have full access. A section can set its own team and AI access for its content."
      >
        <div className="panel settings-panel">
          <DocumentPermissionsForm documentId={documentId} defaultPermission={defaultPermission} aiAccess={aiAccess} />
        </div>
      </SettingsSection>

      <SettingsSection
        id="people-heading"
        title="People"
        description="Access for one person, instead of the workspace default. Guests see only what they are given here."
      >
        <div className="table-card">
          {grants.length === 0 ? (
            <div className="table-empty" data-testid="grant-list">
              <p className="muted small">No one has their own access yet: everyone gets the general access above.</p>
            </div>
          ) : (
            <DataTable testId="grant-list" columns={["Person", "Access"]}>
              {grants.map((grant) => {
                const member = memberById.get(grant.userId);
                const name = grant.name ?? member?.name ?? "Former member";
                return (
                  <tr key={grant.userId} data-testid="grant-row" data-user-id={grant.userId}>
                    <td>
                      <Person name={name} email={member ? member.email : "No longer in the workspace"} isYou={grant.userId === user.id}>
                        {member?.role === "guest" ? <span className="role role-guest">guest</span> : null}
                      </Person>
                    </td>
                    <td data-label="Access">
                      <GrantSelect documentId={documentId} userId={grant.userId} name={name} permission={grant.permission} />
                    </td>
                    <td className="cell-actions">
                      <RemoveGrantButton documentId={documentId} userId={grant.userId} name={name} />
                    </td>
                  </tr>
                );
              })}
            </DataTable>
          )}
          <div className="table-footer">
            {members.ok ? (
              <AddGrantForm documentId={documentId} members={pickable} />
            ) : (
              <p className="form-error" role="alert">
                The member list could not be loaded: {members.message}
              </p>
            )}
          </div>
        </div>
      </SettingsSection>

      <SettingsSection
        id="links-heading"
        title="Share links"
        description="A read link lets anyone who has it read the document without an account. An edit link gives workspace members who open it edit access. Revoke a link to stop it working."
      >
        <div className="panel settings-panel">
          <ShareLinkForm documentId={documentId} publicUrl={workspace.publicUrl} />
        </div>
        {!links.ok ? (
          <p className="form-error form-error-spaced" role="alert">
            The share links could not be listed: {links.message}
          </p>
        ) : links.value.shareLinks.length === 0 ? (
          <div className="table-card table-empty table-spaced" data-testid="share-link-list">
            <p className="muted small">No share links yet.</p>
          </div>
        ) : (
          <div className="table-card table-spaced">
            <DataTable testId="share-link-list" columns={["Allows", "Created", "Expires", "Status"]}>
              {links.value.shareLinks.map((link) => {
                const state = linkState(link, now);
                return (
                  <tr
                    key={link.shareLinkId}
                    data-testid="share-link-row"
                    data-state={state}
                    className={state === "active" ? undefined : "row-inactive"}
                  >
                    <td>
                      <span className={`access access-${link.permission}`}>{link.permission === "edit" ? "Edit" : "Read"}</span>
                      <span className="link-id" title={link.shareLinkId}>
                        {link.shareLinkId.slice(0, 8)}
                      </span>
                    </td>
                    <td className="muted small" data-label="Created">
                      <TimeAgo value={link.createdAt} />
                    </td>
                    <td className="muted small" data-label="Expires">
                      {link.expiresAt ? <span title={absoluteTime(link.expiresAt)}>{expiryText(link.expiresAt, now)}</span> : "Never"}
                    </td>
                    <td data-label="Status">
                      <span className={`status status-${state}`}>
                        {state === "revoked" && link.revokedAt ? (
                          <span title={absoluteTime(link.revokedAt)}>Revoked</span>
                        ) : state === "expired" ? (
                          "Expired"
                        ) : (
                          "Active"
                        )}
                      </span>
                    </td>
                    <td className="cell-actions">
                      {state === "active" ? <RevokeShareLinkButton documentId={documentId} shareLinkId={link.shareLinkId} /> : null}
                    </td>
                  </tr>
                );
              })}
            </DataTable>
          </div>
        )}
      </SettingsSection>
    </AppShell>
  );
}

function linkState(link: ShareLinkInfo, now: Date): "active" | "expired" | "revoked" {
  if (link.revokedAt) return "revoked";
  const expires = link.expiresAt ? toDate(link.expiresAt) : null;
  if (expires && expires.getTime() <= now.getTime()) return "expired";
  return "active";
}

function expiryText(value: string, now: Date): string {
  const date = toDate(value);
  if (!date) return value;
  const days = Math.ceil((date.getTime() - now.getTime()) / 86_400_000);
  if (days <= 0) return absoluteTime(value);
  return days === 1 ? "in 1 day" : `in ${days} days`;
}
