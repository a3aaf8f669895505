"use client";

import { signOut } from "next-auth/react";
import { useState } from "react";

export function SignOutButton() {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className="button button-quiet"
      disabled={pending}
      onClick={async () => {
        setPending(true);
        // No next-auth redirect: its URL is built from NEXTAUTH_URL, and the
        // page should stay on whichever origin the visitor is using.
        await signOut({ redirect: false });
        window.location.assign("/signin");
      }}
    >
      {pending ? "Signing out…" : "Sign out"}
    </button>
  );
}
