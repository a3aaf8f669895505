import type { Metadata } from "next";
import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import type { ReactNode } from "react";
import { cache } from "react";
import { AppShell, SignedOutHeader } from "@/app/_components/app-shell";
import { AuthCard } from "@/app/_components/auth-card";
import { ErrorPanel } from "@/app/_components/error-panel";
import { attempt, type DocumentRead } from "@/app/_lib/quire";
import { getSessionUser, signInPath, type SessionUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { KeyIcon, SharedDocument } from "./shared-document";
import "@/app/documents/[documentId]/sharing/sharing.css";
import "../share.css";

// The token is a secret: never send it onward in a Referer header, never index the page.
const PRIVATE: Metadata = { referrer: "no-referrer", robots: { index: false, follow: false } };

type Props = { params: Promise<{ token: string }> };

/** One read per request: generateMetadata and the page share it. */
const readOnce = cache((token: string) => attempt(async (): Promise<DocumentRead> => getBridge().readShared(token, {})));

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { token } = await params;
  // A signed-in member is sent on to the document; only visitors see a title here.
  if (await getSessionUser()) return { ...PRIVATE, title: "Shared document" };
  const read = await readOnce(token);
  return { ...PRIVATE, title: read.ok ? read.value.name : "Shared document" };
}

/**
 * A share link. Signed in: the link's access is added to the user's own and
 * they go to the document. Signed out: a read link shows the document read
 * only; an edit link asks them to sign in (the server's one share-link rule,
 * server/access/authorize.ts: it refuses an edit link's visitor, here as in
 * the live rooms). This page never calls requireUser(): it must work without
 * a session.
 */
export default async function SharePage({ params }: Props) {
  const { token } = await params;
  const sharePath = `/share/${encodeURIComponent(token)}`;
  const signInHref = signInPath(sharePath);
  const user = await getSessionUser();

  let notice: ReactNode = null;
  if (user) {
    // The server grants the link's access only where it raises what the member can already do.
    const accepted = await attempt(() => getBridge().acceptShare(token, user.id));
    if (accepted.ok) redirect(`/documents/${encodeURIComponent(accepted.value.documentId)}`);
    // A link that does not work is an invalid credential (UNAUTHENTICATED): the dead-link page.
    if (accepted.code === "UNAUTHENTICATED" || accepted.code === "NOT_FOUND") notFound();
    if (accepted.code !== "PERMISSION_DENIED") {
      return (
        <AppShell user={user}>
          <ErrorPanel title="Could not open this share link" code={accepted.code} message={accepted.message} />
        </AppShell>
      );
    }
    // The link is from a workspace this account is not in: a read link still reads, as for any visitor.
    notice = accepted.message;
  }

  const read = await readOnce(token);
  if (!read.ok) {
    if (read.code === "UNAUTHENTICATED" || read.code === "NOT_FOUND" || read.code === "VALIDATION_FAILED") notFound();
    // A live edit link gives a visitor without an account nothing: signing in opens it.
    if (read.code === "PERMISSION_DENIED") return <EditLinkCard user={user} signInHref={signInHref} notice={notice} />;
    return (
      <>
        <SignedOutHeader signInHref={signInHref} />
        <main className="page">
          <ErrorPanel title="Could not open this share link" code={read.code} message={read.message} />
        </main>
      </>
    );
  }

  const banner = (
    <div className="banner banner-info share-banner" role="status" data-testid="share-banner">
      <span className="share-banner-icon" aria-hidden="true">
        <EyeIcon />
      </span>
      <span className="share-banner-text">
        {user ? (
          <>
            <strong>Shared with you — read only.</strong> {notice}
          </>
        ) : (
          <>
            <strong>Shared with you — read only.</strong> <Link href={signInHref}>Sign in</Link> for more.
          </>
        )}
      </span>
    </div>
  );
  const aside = (
    <section className="panel shared-about" aria-labelledby="shared-about-title">
      <h2 className="panel-title" id="shared-about-title">
        Shared link
      </h2>
      <p>Someone shared this document with a read-only link. You see its current version; it updates when they change it.</p>
      {user ? null : <p>Members of the workspace can sign in to see its history and branches, and to edit it if they may.</p>}
    </section>
  );

  const body = <SharedDocument doc={read.value} banner={banner} aside={aside} shareToken={token} />;
  if (user) {
    return (
      <AppShell user={user} wide>
        {body}
      </AppShell>
    );
  }
  return (
    <>
      <SignedOutHeader signInHref={signInHref} />
      <main className="page page-wide">{body}</main>
    </>
  );
}

function EditLinkCard({ user, signInHref, notice }: { user: SessionUser | null; signInHref: string; notice: ReactNode }) {
  return (
    <AuthCard>
      <div data-testid="share-sign-in">
        <span className="share-card-icon" aria-hidden="true">
          <KeyIcon />
        </span>
        <h1>{user ? "This link is for another workspace" : "Sign in to use this link"}</h1>
        {user ? (
          <p className="muted share-card-text">{notice}</p>
        ) : (
          <>
            <p className="muted share-card-text">
              This link lets members of the workspace edit a document. Sign in with your Quire account and you will go straight to it.
            </p>
            <p className="muted small share-card-text">
              No account? Ask the person who shared it for an invitation, or for a read-only link.
            </p>
          </>
        )}
        <div className="share-actions">
          {user ? (
            <Link href="/" className="button button-block">
              Go to your documents
            </Link>
          ) : (
            <Link href={signInHref} className="button button-primary button-block">
              Sign in
            </Link>
          )}
        </div>
      </div>
    </AuthCard>
  );
}

function EyeIcon() {
  return (
    <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
      <path d="M1.5 8s2.4-4.5 6.5-4.5S14.5 8 14.5 8 12.1 12.5 8 12.5 1.5 8 1.5 8z" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <circle cx="8" cy="8" r="2" fill="none" stroke="currentColor" strokeWidth="1.3" />
    </svg>
  );
}
