import Link from "next/link";
import type { ReactNode } from "react";
import type { SessionUser } from "@/app/_lib/session";
import { SignOutButton } from "./sign-out-button";

/** Header and content column shared by every signed-in page. */
export function AppShell({ user, wide, children }: { user: SessionUser; wide?: boolean; children: ReactNode }) {
  return (
    <>
      <header className="app-header">
        <div className="app-header-inner">
          <Link href="/" className="brand">
            <span className="brand-mark" aria-hidden="true">Q</span>
            <span className="brand-name">Quire</span>
          </Link>
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

function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const letters = parts.length > 1 ? [parts[0]?.[0], parts[parts.length - 1]?.[0]] : [parts[0]?.[0]];
  return letters.filter(Boolean).join("").toUpperCase() || "?";
}
