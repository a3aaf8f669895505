"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { AutoSaveSelect, FormError, field, OptionalExpiryField, optionalNumber, useActionForm } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import { useDocumentsTool } from "@/app/_lib/tool-call";
import type { DocumentsResults } from "@/server/actions/documents";
import type { MemberList } from "@/server/actions/members";
import { LEVEL_LABELS, type Level } from "./labels";

// Every call goes to the documents tool, which checks again that the user may manage the document (its creator,
// workspace owners and admins): the page hiding its controls from others is a courtesy, not the check.

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
  const documents = useDocumentsTool();
  const [team, setTeam] = useState<Level>(defaultPermission);
  const [ai, setAi] = useState<Level>(aiAccess);
  const [state, setState] = useState<{ kind: "idle" | "pending" | "saved" } | { kind: "error"; message: string }>({ kind: "idle" });
  const dirty = team !== defaultPermission || ai !== aiAccess;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setState({ kind: "pending" });
    const result = await documents({ action: "set_permissions", documentId, defaultPermission: team, aiAccess: ai });
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
  const documents = useDocumentsTool();
  return (
    <AutoSaveSelect
      label={`Access of ${name}`}
      initial={permission}
      save={(next) => documents({ action: "set_permissions", documentId, grants: [{ userId, permission: next }] })}
    >
      <LevelOptions />
    </AutoSaveSelect>
  );
}

export function RemoveGrantButton({ documentId, userId, name }: { documentId: string; userId: string; name: string }) {
  const documents = useDocumentsTool();
  return (
    <ActionConfirmButton
      label="Remove"
      question={`Remove ${name}'s own access?`}
      confirmLabel="Remove"
      pendingLabel="Removing…"
      action={() => documents({ action: "set_permissions", documentId, grants: [{ userId, permission: null }] })}
    />
  );
}

export type PickableMember = MemberList["members"][number];

export function AddGrantForm({ documentId, members }: { documentId: string; members: PickableMember[] }) {
  const documents = useDocumentsTool();
  const { pending, error, onSubmit } = useActionForm((data) =>
    documents({
      action: "set_permissions",
      documentId,
      // The select offers only the levels; the tool's schema judges what arrives.
      grants: [{ userId: field(data, "userId"), permission: field(data, "permission") as Level }],
    }),
  );

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

/** What creating a link answers (its path: the token is in it, shown once). */
type CreatedShareLink = DocumentsResults["create_share_link"];

/** `publicUrl`: the base of links handed out, the server's decision (QUIRE_PUBLIC_URL, else the origin this page was asked for). */
export function ShareLinkForm({ documentId, publicUrl }: { documentId: string; publicUrl: string }) {
  const documents = useDocumentsTool();
  const [created, setCreated] = useState<CreatedShareLink | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) =>
      documents({
        action: "create_share_link",
        documentId,
        // The select offers only read and edit; the tool's schema judges what arrives.
        permission: field(data, "permission") as CreatedShareLink["permission"],
        expiresInDays: optionalNumber(data, "expiresInDays"),
      }),
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
          value={`${publicUrl}${created.path}`}
          testId="share-link"
          hint={`${who} Copy it now: Quire keeps only a fingerprint of the link and cannot show it again.`}
        />
      ) : null}
    </>
  );
}

export function RevokeShareLinkButton({ documentId, shareLinkId }: { documentId: string; shareLinkId: string }) {
  const documents = useDocumentsTool();
  return (
    <ActionConfirmButton
      label="Revoke"
      question="Stop this link from working?"
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => documents({ action: "revoke_share_link", documentId, shareLinkId })}
    />
  );
}
