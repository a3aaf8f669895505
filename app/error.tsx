"use client";

import Link from "next/link";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main className="page page-narrow">
      <div className="centered-card" role="alert">
        <p className="eyebrow">Error</p>
        <h1>Something went wrong</h1>
        <p className="muted">Quire could not show this page.{error.digest ? ` Reference: ${error.digest}.` : ""}</p>
        <p className="button-row">
          <button type="button" className="button" onClick={() => reset()}>
            Try again
          </button>
          <Link href="/" className="button button-quiet">
            Back to documents
          </Link>
        </p>
      </div>
    </main>
  );
}
