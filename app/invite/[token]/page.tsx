import type { Metadata } from "next";
import Link from "next/link";
import { AuthCard } from "@/app/_components/auth-card";
import { absoluteTime, article } from "@/app/_lib/format";
import { getSessionUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import type { InviteInfo } from "@/server/actions/invites";
import { JoinButton, SignUpForm, SwitchAccountButton } from "./invite-forms";
import "../../settings/settings.css";

// The token is a secret: never send it onward in a Referer header.
export const metadata: Metadata = { title: "Invitation", referrer: "no-referrer", robots: { index: false, follow: false } };

type Props = { params: Promise<{ token: string }> };

const DEAD: Record<Exclude<InviteInfo["state"], "valid">, { title: string; body: string }> = {
  not_found: {
    title: "This invite link is not valid",
    body: "Check that you copied the whole link. If it still does not work, ask the person who invited you for a new one.",
  },
  expired: {
    title: "This invite has expired",
    body: "Invite links work for a limited time. Ask the person who invited you for a new one.",
  },
  revoked: {
    title: "This invite was revoked",
    body: "The link no longer works. Ask the person who invited you for a new one if you still need access.",
  },
  used: {
    title: "This invite has already been used",
    body: "Each invite link works once. If it was not you who used it, ask for a new one.",
  },
};

export default async function InvitePage({ params }: Props) {
  const { token } = await params;
  const user = await getSessionUser();
  const info = await getBridge().inviteInfo(token, user?.id);
  const invite = info.invite;

  if (info.state !== "valid" || !invite) {
    const dead = DEAD[info.state === "valid" ? "not_found" : info.state];
    return (
      <AuthCard>
        <div data-testid="invite-invalid" data-state={info.state}>
          <h1>{dead.title}</h1>
          <p className="muted">{dead.body}</p>
          {invite ? (
            <p className="muted small">
              It was sent by {invite.invitedByName} for {invite.workspaceName}.
            </p>
          ) : null}
          <p className="auth-actions">
            <Link href={user ? "/" : "/signin"} className="button button-block">
              {user ? "Go to your documents" : "Sign in"}
            </Link>
          </p>
        </div>
      </AuthCard>
    );
  }

  const lead = (
    <p className="muted">
      {invite.invitedByName} invited you to join <strong>{invite.workspaceName}</strong> as {article(invite.role)}{" "}
      <span className={`role role-${invite.role}`}>{invite.role}</span>.
      {invite.expiresAt ? <> The link works until {absoluteTime(invite.expiresAt)}.</> : null}
    </p>
  );

  if (user && info.viewer?.alreadyMember) {
    return (
      <AuthCard>
        <h1>You are already a member</h1>
        <p className="muted">
          You are signed in as {user.email}, who already belongs to {invite.workspaceName}. The invite stays unused for the person it was
          meant for.
        </p>
        <p className="auth-actions">
          <Link href="/" className="button button-primary button-block">
            Go to your documents
          </Link>
        </p>
      </AuthCard>
    );
  }

  if (user && info.viewer && !info.viewer.emailMatches) {
    return (
      <AuthCard>
        <h1>This invite is for someone else</h1>
        <p className="muted">
          It is for <strong>{invite.email}</strong>, and you are signed in as {user.email}. Sign out, then open the link again and sign in
          or sign up with that address.
        </p>
        <div className="auth-actions">
          <SwitchAccountButton token={token} />
        </div>
      </AuthCard>
    );
  }

  if (user) {
    return (
      <AuthCard>
        <h1>Join {invite.workspaceName}</h1>
        {lead}
        <p className="muted small">
          You will join as {user.name} ({user.email}).
        </p>
        <JoinButton token={token} workspaceName={invite.workspaceName} />
      </AuthCard>
    );
  }

  return (
    <AuthCard>
      <h1>Join {invite.workspaceName}</h1>
      {lead}
      <SignUpForm token={token} email={invite.email} />
    </AuthCard>
  );
}
