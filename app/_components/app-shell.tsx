import Link from "next/link";
import type { ReactNode } from "react";
import { initials } from "@/app/_lib/format";
import type { SessionUser } from "@/app/_lib/session";
import { SignOutButton } from "./sign-out-button";

/** Header and content column shared by every signed-in page. */
export function AppShell({ user, wide, children }: { user: SessionUser; wide?: boolean; children: ReactNode }) {
  return (
    <>
      <header className="app-header">
        <div className="app-header-inner">
          <BrandLink />
          <nav className="app-nav" aria-label="Main">
            <Link href="/">Documents</Link>
            <Link href="/settings/members">Settings</Link>
          </nav>
          <div className="app-user">
            <span className="avatar" aria-hidden="true">{initials(user.name)}</span>
            <span className="app-user-name" title={user.email}>{user.name}</span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main className={wide ? "page page-wide" : "page"}>{children}</main>
    </>
  );
}

/** The Quire mark and name, linking home. */
export function BrandLink() {
  return (
    <Link href="/" className="brand">
      <span className="brand-mark" aria-hidden="true">Q</span>
      <span className="brand-name">Quire</span>
    </Link>
  );
}
