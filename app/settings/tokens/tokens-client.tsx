"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import { createApiToken, revokeApiToken } from "../actions";
import { ConfirmButton, OneTimeSecret } from "../settings-client";

export function CreateTokenForm() {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ token: string; label: string | null } | null>(null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setPending(true);
    setError(null);
    const result = await createApiToken({ label: data.get("label"), expiresInDays: data.get("expiresInDays") });
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
      <form className="inline-form" onSubmit={onSubmit} aria-label="Create an API token">
        <label className="field field-grow">
          <span>Label</span>
          <input name="label" type="text" required maxLength={100} placeholder="What is it for? e.g. Claude on my laptop" />
        </label>
        <label className="field field-narrow">
          <span>
            Expires in days <span className="muted">(optional)</span>
          </span>
          <input name="expiresInDays" type="number" min={1} max={3650} placeholder="never" />
        </label>
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create token"}
        </button>
      </form>
      {error ? <p className="form-error form-error-spaced" role="alert">{error}</p> : null}
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
  const router = useRouter();
  return (
    <ConfirmButton
      label="Revoke"
      question={`Revoke “${label}”?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      onConfirm={async () => {
        const result = await revokeApiToken(tokenId);
        if (!result.ok) return result.message;
        router.refresh();
        return null;
      }}
    />
  );
}
