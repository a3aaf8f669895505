import type { Metadata } from "next";
import Link from "next/link";
import { AppShell, SignedOutHeader } from "@/app/_components/app-shell";
import { getSessionUser } from "@/app/_lib/session";

export const metadata: Metadata = { title: "Not found" };

/** A missing page, or one the visitor may not see, inside the app's usual header (the signed-out one for visitors). */
export default async function NotFound() {
  const user = await getSessionUser();
  const card = (
    <div className="centered-card" data-testid="not-found">
      <p className="eyebrow">404</p>
      <h1>Not found</h1>
      <p className="muted">This page does not exist, or you do not have access to it.</p>
      <p>
        {user ? (
          <Link href="/" className="button">
            Back to documents
          </Link>
        ) : (
          <Link href="/" className="button">
            Go to Quire
          </Link>
        )}
      </p>
    </div>
  );
  if (user) return <AppShell user={user}>{card}</AppShell>;
  return (
    <>
      <SignedOutHeader />
      <main className="page page-narrow">{card}</main>
    </>
  );
}
