"use client";

import { useState } from "react";
import type { Role } from "@/db/schema";
import { AutoSaveSelect, FormError, useActionForm } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import { changeMemberRole, createInvite, removeMember, revokeInvite } from "../actions";

export function RoleSelect({ userId, name, role, roles }: { userId: string; name: string; role: Role; roles: Role[] }) {
  const options = roles.includes(role) ? roles : [role, ...roles];

  return (
    <AutoSaveSelect label={`Role of ${name}`} initial={role} save={(next) => changeMemberRole(userId, next)}>
      {options.map((option) => (
        <option key={option} value={option}>
          {option}
        </option>
      ))}
    </AutoSaveSelect>
  );
}

export function RemoveMemberButton({ userId, name, isMe }: { userId: string; name: string; isMe: boolean }) {
  return (
    <ActionConfirmButton
      label={isMe ? "Leave" : "Remove"}
      question={isMe ? "Leave the workspace?" : `Remove ${name}?`}
      confirmLabel={isMe ? "Leave" : "Remove"}
      pendingLabel="Removing…"
      action={() => removeMember(userId)}
      onDone={isMe ? () => window.location.assign("/") : undefined}
    />
  );
}

export function RevokeInviteButton({ inviteId, label }: { inviteId: string; label: string }) {
  return (
    <ActionConfirmButton
      label="Revoke"
      question={`Revoke the invite for ${label}?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => revokeInvite(inviteId)}
    />
  );
}

type Created = { url: string; role: string; email: string | null };

export function InviteForm({ roles }: { roles: Role[] }) {
  const [created, setCreated] = useState<Created | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) => createInvite({ role: data.get("role"), email: data.get("email"), expiresInDays: data.get("expiresInDays") }),
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
          title={`Invite link for ${created.email ?? "anyone with the link"} (${created.role})`}
          value={created.url}
          testId="invite-link"
          hint="Copy it now and send it to the person you invite: Quire keeps only a fingerprint of the link and cannot show it again."
        />
      ) : null}
    </>
  );
}
