import Link from "next/link";

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
