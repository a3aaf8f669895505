"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { Role } from "@/db/schema";
import { changeMemberRole, createInvite, removeMember, revokeInvite } from "../actions";
import { ConfirmButton, OneTimeSecret } from "../settings-client";

export function RoleSelect({ userId, name, role, roles }: { userId: string; name: string; role: Role; roles: Role[] }) {
  const router = useRouter();
  const [value, setValue] = useState<Role>(role);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const options = roles.includes(role) ? roles : [role, ...roles];

  return (
    <div className="role-select">
      <select
        aria-label={`Role of ${name}`}
        value={value}
        disabled={pending}
        onChange={async (event) => {
          const next = event.currentTarget.value as Role;
          setValue(next);
          setPending(true);
          setError(null);
          const result = await changeMemberRole(userId, next);
          setPending(false);
          if (!result.ok) {
            setValue(role);
            setError(result.message);
            return;
          }
          router.refresh();
        }}
      >
        {options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      {pending ? <span className="muted small">Saving…</span> : null}
      {error ? <p className="inline-error" role="alert">{error}</p> : null}
    </div>
  );
}

export function RemoveMemberButton({ userId, name, isMe }: { userId: string; name: string; isMe: boolean }) {
  const router = useRouter();
  return (
    <ConfirmButton
      label={isMe ? "Leave" : "Remove"}
      question={isMe ? "Leave the workspace?" : `Remove ${name}?`}
      confirmLabel={isMe ? "Leave" : "Remove"}
      pendingLabel="Removing…"
      onConfirm={async () => {
        const result = await removeMember(userId);
        if (!result.ok) return result.message;
        if (isMe) window.location.assign("/");
        else router.refresh();
        return null;
      }}
    />
  );
}

export function RevokeInviteButton({ inviteId, label }: { inviteId: string; label: string }) {
  const router = useRouter();
  return (
    <ConfirmButton
      label="Revoke"
      question={`Revoke the invite for ${label}?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      onConfirm={async () => {
        const result = await revokeInvite(inviteId);
        if (!result.ok) return result.message;
        router.refresh();
        return null;
      }}
    />
  );
}

type Created = { url: string; role: string; email: string | null };

export function InviteForm({ roles }: { roles: Role[] }) {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<Created | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setPending(true);
    setError(null);
    const result = await createInvite({ role: data.get("role"), email: data.get("email"), expiresInDays: data.get("expiresInDays") });
    setPending(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    setCreated(result.value);
    form.reset();
    router.refresh();
  }

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
      {error ? <p className="form-error form-error-spaced" role="alert">{error}</p> : null}
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
