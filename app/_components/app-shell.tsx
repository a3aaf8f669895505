import { cookies } from "next/headers";
import Link from "next/link";
import type { ReactNode } from "react";
import { initials } from "@/app/_lib/format";
import type { SessionUser } from "@/app/_lib/session";
import { parseTheme, THEME_COOKIE } from "@/app/_lib/theme";
import { loadWorkspace } from "@/app/_lib/workspace";
import { InboxBadge } from "./inbox-badge";
import { QuickOpen } from "./quick-open";
import { ShortcutSheet } from "./shortcut-sheet";
import { SignOutButton } from "./sign-out-button";
import { ThemeSwitch } from "./theme-switch";

/** Header and content column shared by every signed-in page; the header names the user's workspace. */
export async function AppShell({ user, wide, children }: { user: SessionUser; wide?: boolean; children: ReactNode }) {
  const workspace = await loadWorkspace(user.id);
  const workspaceName = workspace.ok ? workspace.value.workspace.name : null;
  const theme = parseTheme((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <>
      <header className="app-header">
        <div className="app-header-inner">
          <div className="app-brand">
            <BrandLink />
            {workspaceName ? (
              <span className="workspace-name" data-testid="workspace-name" title={workspaceName}>
                {workspaceName}
              </span>
            ) : null}
          </div>
          <nav className="app-nav" aria-label="Main">
            <Link href="/">Documents</Link>
            <Link href="/merge-requests">Merge requests</Link>
            <Link href="/changesets">Changesets</Link>
            <Link href="/settings/members">Settings</Link>
          </nav>
          <QuickOpen />
          <ShortcutSheet />
          <div className="app-user">
            <InboxBadge />
            <ThemeSwitch initial={theme} />
            <span className="avatar" aria-hidden="true" title={`${user.name} (${user.email})`}>
              {initials(user.name)}
            </span>
            <span className="app-user-name" title={user.email}>
              {user.name}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main className={wide ? "page page-wide" : "page"}>{children}</main>
    </>
  );
}

/** The header for visitors who are not signed in: the Quire mark and a way to sign in. */
export function SignedOutHeader({ signInHref = "/signin" }: { signInHref?: string }) {
  return (
    <header className="app-header public-header">
      <div className="app-header-inner">
        <BrandLink />
        <div className="public-header-actions">
          <Link href={signInHref} className="button button-primary">
            Sign in
          </Link>
        </div>
      </div>
    </header>
  );
}

/** The Quire mark and name, linking home. */
export function BrandLink() {
  return (
    <Link href="/" className="brand">
      <span className="brand-mark" aria-hidden="true">
        Q
      </span>
      <span className="brand-name">Quire</span>
    </Link>
  );
}
