"use client";

import { useState } from "react";
import type { Role } from "@/db/schema";
import { AutoSaveSelect, FormError, field, optionalField, optionalNumber, useActionForm } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import { useWorkspaceTool } from "@/app/_lib/tool-call";
import type { WorkspaceInput, WorkspaceResults } from "@/server/actions/workspace";

export function RoleSelect({ userId, name, role, roles }: { userId: string; name: string; role: Role; roles: Role[] }) {
  const workspace = useWorkspaceTool();
  const options = roles.includes(role) ? roles : [role, ...roles];

  return (
    <AutoSaveSelect label={`Role of ${name}`} initial={role} save={(next) => workspace({ action: "change_role", userId, role: next })}>
      {options.map((option) => (
        <option key={option} value={option}>
          {option}
        </option>
      ))}
    </AutoSaveSelect>
  );
}

export function RemoveMemberButton({ userId, name, isMe }: { userId: string; name: string; isMe: boolean }) {
  const workspace = useWorkspaceTool();
  return (
    <ActionConfirmButton
      label={isMe ? "Leave" : "Remove"}
      question={isMe ? "Leave the workspace?" : `Remove ${name}?`}
      confirmLabel={isMe ? "Leave" : "Remove"}
      pendingLabel="Removing…"
      action={() => workspace({ action: "remove_member", userId })}
      onDone={isMe ? () => window.location.assign("/") : undefined}
    />
  );
}

export function RevokeInviteButton({ inviteId, label }: { inviteId: string; label: string }) {
  const workspace = useWorkspaceTool();
  return (
    <ActionConfirmButton
      label="Revoke"
      question={`Revoke the invite for ${label}?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => workspace({ action: "revoke_invite", inviteId })}
    />
  );
}

/** What creating an invite answers: the link (shown once) and the invite. */
type Created = WorkspaceResults["create_invite"];
type InviteRole = Extract<WorkspaceInput, { action: "create_invite" }>["role"];

export function InviteForm({ roles }: { roles: Role[] }) {
  const workspace = useWorkspaceTool();
  const [created, setCreated] = useState<Created | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) =>
      workspace({
        action: "create_invite",
        // The select offers only the roles this user may invite with; the tool checks again.
        role: field(data, "role") as InviteRole,
        email: optionalField(data, "email"),
        expiresInDays: optionalNumber(data, "expiresInDays"),
      }),
    setCreated,
  );

  return (
    <>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Create an invite link">
        <label className="field">
          <span>Role</span>
          <select name="role" defaultValue="member">
            {roles.map((role) => (
              <option key={role} value={role}>
                {role}
              </option>
            ))}
          </select>
        </label>
        <label className="field field-grow">
          <span>
            Email <span className="muted">(optional)</span>
          </span>
          <input name="email" type="email" placeholder="Only this person can use the link" maxLength={320} />
        </label>
        <label className="field field-narrow">
          <span>Expires in days</span>
          <input name="expiresInDays" type="number" min={1} max={365} defaultValue={7} required />
        </label>
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create invite link"}
        </button>
      </form>
      <FormError error={error} />
      {created ? (
        <OneTimeSecret
          title={`Invite link for ${created.invite.email ?? "anyone with the link"} (${created.invite.role})`}
          value={created.url}
          testId="invite-link"
          hint="Copy it now and send it to the person you invite: Quire keeps only a fingerprint of the link and cannot show it again."
        />
      ) : null}
    </>
  );
}
