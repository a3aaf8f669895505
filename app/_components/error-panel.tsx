import Link from "next/link";
import { notFound } from "next/navigation";
import { AppShell } from "@/app/_components/app-shell";
import type { SessionUser } from "@/app/_lib/session";

/** A DomainError (or other failure) shown as a readable message instead of a crash page. */
export function ErrorPanel({ title, code, message }: { title: string; code?: string; message: string }) {
  return (
    <div className="error-panel" role="alert">
      <h1>{title}</h1>
      <p>{message}</p>
      {code ? (
        <p className="muted small">
          Error code: <code>{code}</code>
        </p>
      ) : null}
      <p>
        <Link href="/">Back to documents</Link>
      </p>
    </div>
  );
}

/**
 * A page whose main load failed: Next's 404 for NOT_FOUND (what the viewer may
 * not see reads as missing), else the error in the app's frame.
 */
export function failedPage(user: SessionUser, title: string, failure: { code: string; message: string }) {
  if (failure.code === "NOT_FOUND") notFound();
  return (
    <AppShell user={user}>
      <ErrorPanel title={title} code={failure.code} message={failure.message} />
    </AppShell>
  );
}
