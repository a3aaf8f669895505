import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { DataTable, Person, SettingsSection } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { article } from "@/app/_lib/format";
import { attempt } from "@/app/_lib/quire";
import { firstParam, withQuery, type SearchParams } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { assignableRoles, canManageRole } from "@/server/policies/workspace";
import { SettingsHeader } from "../settings-tabs";
import { InviteForm, RemoveMemberButton, RevokeInviteButton, RoleSelect } from "./members-client";
import "../settings.css";

export const metadata: Metadata = { title: "Members" };

const ROLE_NOTES: Record<string, string> = {
  owner: "Everything, including managing owners and admins.",
  admin: "Manages members, guests and invites; edits every document.",
  member: "Reads and edits documents by each document's team setting.",
  guest: "Sees only the documents shared with them.",
};

export default async function MembersPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const cursor = firstParam(params.cursor);
  const user = await requireUser(withQuery("/settings/members", { cursor }));
  const bridge = getBridge();
  const listed = await attempt(() => bridge.workspace(user.id, { action: "list_members", limit: 200, ...(cursor ? { cursor } : {}) }));
  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list members" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }
  const { members, viewer, nextCursor } = listed.value;
  const invites = viewer.canManage ? await attempt(() => bridge.workspace(user.id, { action: "list_invites" })) : null;
  const inviteRoles = assignableRoles(viewer.role).filter((r) => r !== "owner");
  // With everyone on one page we know the only owner; the server refuses to leave the workspace ownerless either way.
  const onlyOwnerId =
    !cursor && !nextCursor && members.filter((m) => m.role === "owner").length === 1
      ? members.find((m) => m.role === "owner")?.userId
      : undefined;

  return (
    <AppShell user={user}>
      <SettingsHeader
        active="members"
        description={
          viewer.canManage
            ? "Who is in the workspace, their roles, and invitations."
            : "Who is in the workspace. Owners and admins manage members."
        }
      />

      <SettingsSection
        id="members-heading"
        title="Members"
        description={
          <>
            {members.length} {members.length === 1 ? "person" : "people"}
            {cursor || nextCursor ? " on this page" : ""}. You are {article(viewer.role)} <strong>{viewer.role}</strong>.
          </>
        }
      >
        <div className="table-card">
          <DataTable testId="member-list" columns={["Name", "Role", "Joined"]} actions={viewer.canManage}>
            {members.map((member) => {
              const isMe = member.userId === viewer.userId;
              const soleOwner = member.userId === onlyOwnerId;
              const manageable = viewer.canManage && canManageRole(viewer.role, member.role) && !soleOwner;
              return (
                <tr key={member.userId} data-testid="member-row" data-email={member.email}>
                  <td>
                    <Person name={member.name} email={member.email} isYou={isMe} />
                  </td>
                  <td data-label="Role">
                    {manageable ? (
                      <RoleSelect userId={member.userId} name={member.name} role={member.role} roles={assignableRoles(viewer.role)} />
                    ) : (
                      <span
                        className={`role role-${member.role}`}
                        title={
                          soleOwner ? "The only owner: make someone else an owner before changing this role." : ROLE_NOTES[member.role]
                        }
                      >
                        {member.role}
                      </span>
                    )}
                  </td>
                  <td className="muted small" data-label="Joined">
                    <TimeAgo value={member.joinedAt} />
                  </td>
                  {viewer.canManage ? (
                    <td className="cell-actions">
                      {manageable ? <RemoveMemberButton userId={member.userId} name={member.name} isMe={isMe} /> : null}
                    </td>
                  ) : null}
                </tr>
              );
            })}
          </DataTable>
        </div>
        {cursor || nextCursor ? (
          <nav className="pager pager-small" aria-label="Pages">
            {cursor ? <Link href="/settings/members">← First page</Link> : <span />}
            {nextCursor ? (
              <Link href={withQuery("/settings/members", { cursor: nextCursor })} rel="next">
                Next page →
              </Link>
            ) : null}
          </nav>
        ) : null}
        <dl className="role-notes">
          {(["owner", "admin", "member", "guest"] as const).map((role) => (
            <div key={role}>
              <dt>
                <span className={`role role-${role}`}>{role}</span>
              </dt>
              <dd className="muted small">{ROLE_NOTES[role]}</dd>
            </div>
          ))}
        </dl>
      </SettingsSection>

      {viewer.canManage ? (
        <SettingsSection
          id="invite-heading"
          title="Invite people"
          description="Create a link and send it to the person you invite. Anyone with the link can join until it expires, unless you name an email address."
        >
          <div className="panel settings-panel">
            <InviteForm roles={inviteRoles} />
          </div>
        </SettingsSection>
      ) : null}

      {invites ? (
        <SettingsSection
          id="invites-heading"
          title="Pending invites"
          description="Links nobody has used yet. Revoking one stops it from working."
        >
          {!invites.ok ? (
            <p className="form-error" role="alert">
              {invites.message}
            </p>
          ) : invites.value.invites.length === 0 ? (
            <div className="table-card table-empty" data-testid="invite-list">
              <p className="muted small">No pending invites.</p>
            </div>
          ) : (
            <div className="table-card">
              <DataTable testId="invite-list" columns={["For", "Role", "Created", "Expires"]}>
                {invites.value.invites.map((invite) => (
                  <tr key={invite.inviteId} data-testid="invite-row">
                    <td>{invite.email ?? <span className="muted">Anyone with the link</span>}</td>
                    <td data-label="Role">
                      <span className={`role role-${invite.role}`}>{invite.role}</span>
                    </td>
                    <td className="muted small" data-label="Created">
                      <TimeAgo value={invite.createdAt} />
                      {invite.createdByName ? ` by ${invite.createdByName}` : ""}
                    </td>
                    <td className="muted small" data-label="Expires">
                      {invite.expiresAt ? <TimeAgo value={invite.expiresAt} /> : "never"}
                    </td>
                    <td className="cell-actions">
                      <RevokeInviteButton inviteId={invite.inviteId} label={invite.email ?? "this invite"} />
                    </td>
                  </tr>
                ))}
              </DataTable>
            </div>
          )}
        </SettingsSection>
      ) : null}
    </AppShell>
  );
}
