import type { ReactNode } from "react";

/** The centred card with the Quire mark used by sign-in, invite and share-link pages. */
export function AuthCard({ children }: { children: ReactNode }) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <div className="auth-brand">
          <span className="brand-mark" aria-hidden="true">
            Q
          </span>
          <span className="brand-name">Quire</span>
        </div>
        {children}
      </div>
    </main>
  );
}
