"use client";

import { signIn, signOut } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { NameField, NewPasswordField, passwordTooShort } from "@/app/_components/account-fields";
import { joinWithInvite, signUpWithInvite } from "./actions";

type Status = { kind: "idle" } | { kind: "pending" } | { kind: "error"; message: string; code?: string };

function ErrorBox({ status, signInHref }: { status: Status; signInHref: string }) {
  if (status.kind !== "error") return null;
  return (
    <div className="form-error" role="alert">
      <p>{status.message}</p>
      {status.code === "EMAIL_TAKEN" ? (
        <p>
          <a href={signInHref}>Sign in instead</a>
        </p>
      ) : null}
    </div>
  );
}

export function JoinButton({ token, workspaceName }: { token: string; workspaceName: string }) {
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  return (
    <div className="form">
      <ErrorBox status={status} signInHref="/signin" />
      <button
        type="button"
        className="button button-primary button-block"
        disabled={status.kind === "pending"}
        onClick={async () => {
          setStatus({ kind: "pending" });
          const result = await joinWithInvite(token);
          if (!result.ok) {
            setStatus({ kind: "error", message: result.message, code: result.code });
            return;
          }
          window.location.assign("/");
        }}
      >
        {status.kind === "pending" ? "Joining…" : `Join ${workspaceName}`}
      </button>
    </div>
  );
}

export function SignUpForm({ token, email }: { token: string; email: string | null }) {
  const [status, setStatus] = useState<Status>({ kind: "idle" });
  const signInHref = `/signin?callbackUrl=${encodeURIComponent(`/invite/${token}`)}`;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const fields = {
      name: String(data.get("name") ?? "").trim(),
      email: String(data.get("email") ?? "").trim(),
      password: String(data.get("password") ?? ""),
    };
    const tooShort = passwordTooShort(fields.password);
    if (tooShort) {
      setStatus({ kind: "error", message: tooShort });
      return;
    }
    setStatus({ kind: "pending" });
    const created = await signUpWithInvite(token, fields);
    if (!created.ok) {
      setStatus({ kind: "error", message: created.message, code: created.code });
      return;
    }
    const signedIn = await signIn("credentials", { redirect: false, email: created.value.email, password: fields.password });
    if (!signedIn || signedIn.error) {
      setStatus({ kind: "error", message: "Your account was created, but signing in failed. Sign in with your new password." });
      return;
    }
    window.location.assign("/");
  }

  const pending = status.kind === "pending";
  return (
    <form className="form" onSubmit={onSubmit} aria-label="Create your account">
      <ErrorBox status={status} signInHref={signInHref} />
      <NameField />
      <label className="field">
        <span>Email</span>
        <input
          name="email"
          type="email"
          autoComplete="username"
          required
          maxLength={320}
          {...(email ? { defaultValue: email, readOnly: true } : {})}
        />
        {email ? <small className="muted">This invite is for this address.</small> : null}
      </label>
      <NewPasswordField />
      <button type="submit" className="button button-primary button-block" disabled={pending}>
        {pending ? "Creating account…" : "Create account and join"}
      </button>
      <p className="muted small auth-alt">
        Already have an account? <a href={signInHref}>Sign in</a> to join with it.
      </p>
    </form>
  );
}

export function SwitchAccountButton({ token }: { token: string }) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className="button button-block"
      disabled={pending}
      onClick={async () => {
        setPending(true);
        await signOut({ redirect: false });
        window.location.assign(`/invite/${token}`);
      }}
    >
      {pending ? "Signing out…" : "Sign out and use another account"}
    </button>
  );
}
