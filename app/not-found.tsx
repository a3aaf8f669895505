import Link from "next/link";

export default function NotFound() {
  return (
    <main className="page page-narrow">
      <div className="centered-card">
        <p className="eyebrow">404</p>
        <h1>Not found</h1>
        <p className="muted">
          This page does not exist, or you do not have access to it.
        </p>
        <p>
          <Link href="/" className="button">Back to documents</Link>
        </p>
      </div>
    </main>
  );
}
