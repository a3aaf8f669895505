"use client";

import { useState } from "react";
import { FormError, useActionForm, OptionalExpiryField } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import { createApiToken, revokeApiToken } from "../actions";

export function CreateTokenForm() {
  const [created, setCreated] = useState<{ token: string; label: string | null } | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) => createApiToken({ label: data.get("label"), expiresInDays: data.get("expiresInDays") }),
    setCreated,
  );

  return (
    <>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Create an API token">
        <label className="field field-grow">
          <span>Label</span>
          <input name="label" type="text" required maxLength={100} placeholder="What is it for? e.g. Claude on my laptop" />
        </label>
        <OptionalExpiryField />
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create token"}
        </button>
      </form>
      <FormError error={error} />
      {created ? (
        <OneTimeSecret
          title={`New token${created.label ? ` “${created.label}”` : ""}`}
          value={created.token}
          testId="new-token"
          hint="Copy it now: Quire stores only a hash of the token and cannot show it again. Keep it secret, like a password."
        />
      ) : null}
    </>
  );
}

export function RevokeTokenButton({ tokenId, label }: { tokenId: string; label: string }) {
  return (
    <ActionConfirmButton
      label="Revoke"
      question={`Revoke “${label}”?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => revokeApiToken(tokenId)}
    />
  );
}
