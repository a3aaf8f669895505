import type { Metadata } from "next";
import Link from "next/link";
import { AuthCard } from "@/app/_components/auth-card";
import { LinkOffIcon } from "./shared-document";
import "../share.css";

export const metadata: Metadata = { title: "Link not working", referrer: "no-referrer", robots: { index: false, follow: false } };

/** A share link that was revoked, expired, or never existed. */
export default function DeadShareLink() {
  return (
    <AuthCard>
      <div data-testid="share-dead">
        <span className="share-card-icon share-card-icon-dead" aria-hidden="true">
          <LinkOffIcon />
        </span>
        <h1>This link no longer works</h1>
        <p className="muted share-card-text">
          It was revoked, it expired, or it was never a Quire share link. Check that you copied the whole link, or ask the person who shared
          it for a new one.
        </p>
        <div className="share-actions">
          <Link href="/" className="button button-block">
            Go to Quire
          </Link>
        </div>
      </div>
    </AuthCard>
  );
}
