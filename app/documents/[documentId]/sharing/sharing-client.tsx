"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { AutoSaveSelect, FormError, useActionForm, OptionalExpiryField } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import {
  createDocumentShareLink,
  revokeDocumentShareLink,
  saveDocumentPermissions,
  setUserPermission,
  type CreatedShareLink,
} from "./actions";

import { LEVEL_LABELS, type Level } from "./labels";

function LevelOptions({ levels = ["edit", "read", "none"] }: { levels?: Level[] }) {
  return (
    <>
      {levels.map((l) => (
        <option key={l} value={l}>
          {LEVEL_LABELS[l]}
        </option>
      ))}
    </>
  );
}

/** Team default and AI limit, saved together. */
export function DocumentPermissionsForm({
  documentId,
  defaultPermission,
  aiAccess,
}: {
  documentId: string;
  defaultPermission: Level;
  aiAccess: Level;
}) {
  const router = useRouter();
  const [team, setTeam] = useState<Level>(defaultPermission);
  const [ai, setAi] = useState<Level>(aiAccess);
  const [state, setState] = useState<{ kind: "idle" | "pending" | "saved" } | { kind: "error"; message: string }>({ kind: "idle" });
  const dirty = team !== defaultPermission || ai !== aiAccess;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setState({ kind: "pending" });
    const result = await saveDocumentPermissions(documentId, { defaultPermission: team, aiAccess: ai });
    if (!result.ok) {
      setState({ kind: "error", message: result.message });
      return;
    }
    setState({ kind: "saved" });
    router.refresh();
  }

  return (
    <form className="sharing-form" onSubmit={onSubmit} aria-label="Document permissions">
      <div className="permission-grid">
        <label className="field permission-field">
          <span>Workspace members</span>
          <select
            name="defaultPermission"
            value={team}
            onChange={(e) => {
              setTeam(e.currentTarget.value as Level);
              setState({ kind: "idle" });
            }}
          >
            <LevelOptions />
          </select>
          <small className="muted">
            What members get unless they have their own access below. Guests only see documents shared with them.
          </small>
        </label>
        <label className="field permission-field">
          <span>AI assistants</span>
          <select
            name="aiAccess"
            value={ai}
            onChange={(e) => {
              setAi(e.currentTarget.value as Level);
              setState({ kind: "idle" });
            }}
          >
            <LevelOptions />
          </select>
          <small className="muted">The most any AI tool working through an API token may do here, whoever&apos;s token it is.</small>
        </label>
      </div>
      <div className="sharing-form-footer">
        <button type="submit" className="button button-primary" disabled={state.kind === "pending" || !dirty}>
          {state.kind === "pending" ? "Saving…" : "Save changes"}
        </button>
        {state.kind === "saved" && !dirty ? (
          <span className="save-note" role="status">
            Saved
          </span>
        ) : null}
        {dirty && state.kind !== "pending" ? <span className="muted small">Unsaved changes</span> : null}
      </div>
      {state.kind === "error" ? (
        <p className="form-error form-error-spaced" role="alert">
          {state.message}
        </p>
      ) : null}
    </form>
  );
}

/** One person's access, saved as soon as it changes. */
export function GrantSelect({
  documentId,
  userId,
  name,
  permission,
}: {
  documentId: string;
  userId: string;
  name: string;
  permission: Level;
}) {
  return (
    <AutoSaveSelect label={`Access of ${name}`} initial={permission} save={(next) => setUserPermission(documentId, userId, next)}>
      <LevelOptions />
    </AutoSaveSelect>
  );
}

export function RemoveGrantButton({ documentId, userId, name }: { documentId: string; userId: string; name: string }) {
  return (
    <ActionConfirmButton
      label="Remove"
      question={`Remove ${name}'s own access?`}
      confirmLabel="Remove"
      pendingLabel="Removing…"
      action={() => setUserPermission(documentId, userId, null)}
    />
  );
}

export interface PickableMember {
  userId: string;
  name: string;
  email: string;
  role: string;
}

export function AddGrantForm({ documentId, members }: { documentId: string; members: PickableMember[] }) {
  const { pending, error, onSubmit } = useActionForm((data) => setUserPermission(documentId, data.get("userId"), data.get("permission")));

  if (members.length === 0) {
    return (
      <p className="muted small add-grant-empty">Everyone in the workspace already has their own access here, or always has full access.</p>
    );
  }

  return (
    <>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Give a person access">
        <label className="field field-grow">
          <span>Person</span>
          <select name="userId" required defaultValue="">
            <option value="" disabled>
              Choose a member…
            </option>
            {members.map((m) => (
              <option key={m.userId} value={m.userId}>
                {m.name} — {m.email}
                {m.role === "guest" ? " (guest)" : ""}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Access</span>
          <select name="permission" defaultValue="edit">
            <LevelOptions />
          </select>
        </label>
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Adding…" : "Add person"}
        </button>
      </form>
      <FormError error={error} />
    </>
  );
}

export function ShareLinkForm({ documentId }: { documentId: string }) {
  const [created, setCreated] = useState<CreatedShareLink | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) => createDocumentShareLink(documentId, { permission: data.get("permission"), expiresInDays: data.get("expiresInDays") }),
    setCreated,
  );

  const who =
    created?.permission === "edit"
      ? "Workspace members who open it while signed in get edit access; it does nothing for people without an account."
      : "Anyone with it can read this document, without an account. Signed-in members who open it get read access.";

  return (
    <>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Create a share link">
        <label className="field">
          <span>Link allows</span>
          <select name="permission" defaultValue="read">
            <option value="read">Reading (anyone with the link)</option>
            <option value="edit">Editing (workspace members)</option>
          </select>
        </label>
        <OptionalExpiryField />
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create link"}
        </button>
      </form>
      <FormError error={error} />
      {created ? (
        <OneTimeSecret
          title={created.permission === "edit" ? "New edit link" : "New read-only link"}
          value={created.url}
          testId="share-link"
          hint={`${who} Copy it now: Quire keeps only a fingerprint of the link and cannot show it again.`}
        />
      ) : null}
    </>
  );
}

export function RevokeShareLinkButton({ documentId, shareLinkId }: { documentId: string; shareLinkId: string }) {
  return (
    <ActionConfirmButton
      label="Revoke"
      question="Stop this link from working?"
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => revokeDocumentShareLink(documentId, shareLinkId)}
    />
  );
}
