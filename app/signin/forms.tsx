"use client";

import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { signInErrorMessage } from "@/server/auth/sign-in-errors";
import { NameField, NewPasswordField, passwordTooShort } from "@/app/_components/account-fields";
import { createOwnerAccount } from "./actions";

type Status = { kind: "idle" } | { kind: "pending" } | { kind: "error"; message: string; alreadyInitialized?: boolean };

async function signInWithPassword(email: string, password: string): Promise<string | null> {
  const result = await signIn("credentials", { redirect: false, email, password });
  if (!result) return "Sign-in failed: no answer from the server. Please try again.";
  if (result.error) return signInErrorMessage(result.error);
  return null;
}

function fieldsOf(event: FormEvent<HTMLFormElement>): Record<string, string> {
  const data = new FormData(event.currentTarget);
  const out: Record<string, string> = {};
  for (const [key, value] of data.entries()) if (typeof value === "string") out[key] = value;
  return out;
}

export function SignInForm({ callbackUrl, initialError }: { callbackUrl: string; initialError?: string }) {
  const [status, setStatus] = useState<Status>(initialError ? { kind: "error", message: initialError } : { kind: "idle" });

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const { email = "", password = "" } = fieldsOf(event);
    setStatus({ kind: "pending" });
    const error = await signInWithPassword(email.trim(), password);
    if (error) {
      setStatus({ kind: "error", message: error });
      return;
    }
    // A full navigation, so every server component renders with the new session cookie.
    window.location.assign(callbackUrl);
  }

  const pending = status.kind === "pending";
  return (
    <form className="form" onSubmit={onSubmit} aria-label="Sign in">
      {status.kind === "error" ? (
        <p className="form-error" role="alert">
          {status.message}
        </p>
      ) : null}
      <label className="field">
        <span>Email</span>
        {/* biome-ignore lint/a11y/noAutofocus: the form is the whole page; its first field is where everyone starts */}
        <input name="email" type="email" autoComplete="username" required autoFocus />
      </label>
      <label className="field">
        <span>Password</span>
        <input name="password" type="password" autoComplete="current-password" required />
      </label>
      <button type="submit" className="button button-primary button-block" disabled={pending}>
        {pending ? "Signing in…" : "Sign in"}
      </button>
    </form>
  );
}

export function OwnerSetupForm({ callbackUrl }: { callbackUrl: string }) {
  const [status, setStatus] = useState<Status>({ kind: "idle" });

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const { name = "", email = "", password = "" } = fieldsOf(event);
    const tooShort = passwordTooShort(password);
    if (tooShort) {
      setStatus({ kind: "error", message: tooShort });
      return;
    }
    setStatus({ kind: "pending" });
    const created = await createOwnerAccount({ name, email, password });
    if (!created.ok) {
      setStatus({ kind: "error", message: created.message, alreadyInitialized: created.code === "ALREADY_INITIALIZED" });
      return;
    }
    const error = await signInWithPassword(created.value.email, password);
    if (error) {
      setStatus({ kind: "error", message: `The account was created, but signing in failed: ${error}` });
      return;
    }
    window.location.assign(callbackUrl);
  }

  const pending = status.kind === "pending";
  return (
    <form className="form" onSubmit={onSubmit} aria-label="Create the owner account">
      {status.kind === "error" ? (
        <div className="form-error" role="alert">
          <p>{status.message}</p>
          {status.alreadyInitialized ? (
            <p>
              <a href={callbackUrl === "/" ? "/signin" : `/signin?callbackUrl=${encodeURIComponent(callbackUrl)}`}>Sign in instead</a>
            </p>
          ) : null}
        </div>
      ) : null}
      <NameField />
      <label className="field">
        <span>Email</span>
        <input name="email" type="email" autoComplete="username" required />
      </label>
      <NewPasswordField />
      <button type="submit" className="button button-primary button-block" disabled={pending}>
        {pending ? "Creating account…" : "Create the owner account"}
      </button>
    </form>
  );
}
