/**
 * The invite workflow: what an invite link is, accepting it (the
 * /invite/<token> page), and creating links from the CLI. Whoever opens a
 * link is not a member yet, so accepting works from the token, not from an
 * actor; creating links is the workspace tool's `create_invite`.
 */
import { z } from "zod";
import type { Database } from "@/db/client";
import type { Role } from "@/db/schema";

import { DomainError, validationError } from "@/server/core/errors";
import { findUserByEmail, getDefaultWorkspaceId } from "@/server/store/accounts";
import type { Tx } from "@/server/store/db";
import { findInviteByTokenHash, type InviteRow, markInviteAccepted } from "@/server/store/invites";
import { createUserWithMembership, findUserById, firstOwner, getMember, getWorkspaceName, insertMembership } from "@/server/store/members";
import { userNames } from "@/server/store/users";
import { MIN_PASSWORD_LENGTH } from "@/server/auth/accounts";
import { hashPassword } from "@/server/auth/passwords";
import { runTool } from "./tool";
import { hashInviteToken, inviteStatusOf, type WorkspaceResults, workspaceTool } from "./workspace";

export type InviteState = "valid" | "expired" | "revoked" | "used" | "not_found";

export interface InviteInfo {
  state: InviteState;
  /** Present unless state is not_found. */
  invite?: {
    role: Role;
    email: string | null;
    workspaceName: string;
    invitedByName: string;
    expiresAt: string | null;
  };
  /** For a signed-in visitor: whether they already belong, and whether the invite's email (if any) is theirs. */
  viewer?: { alreadyMember: boolean; emailMatches: boolean };
}

/** Tokens are 43 base64url characters; anything else cannot name an invite. */
const tokenShape = /^[A-Za-z0-9_-]{20,100}$/;

function stateOf(row: InviteRow, now: Date): InviteState {
  const status = inviteStatusOf(row, now);
  return status === "pending" ? "valid" : status === "accepted" ? "used" : status;
}

/** What the invite page shows before anyone acts; `userId` is the signed-in visitor, if any. */
export async function inviteInfo(db: Database, token: string, now: Date, userId?: string): Promise<InviteInfo> {
  if (!tokenShape.test(token)) return { state: "not_found" };
  const row = await findInviteByTokenHash(db, hashInviteToken(token));
  if (!row) return { state: "not_found" };
  const inviter = (await userNames(db, [row.createdBy])).get(row.createdBy) ?? "A former member";
  const user = userId ? await findUserById(db, userId) : undefined;
  const viewer = user
    ? {
        alreadyMember: (await getMember(db, row.workspaceId, user.id)) !== undefined,
        emailMatches: emailMismatch(row, user.email) === null,
      }
    : undefined;
  return {
    ...(viewer ? { viewer } : {}),
    state: stateOf(row, now),
    invite: {
      role: row.role,
      email: row.email,
      workspaceName: (await getWorkspaceName(db, row.workspaceId)) ?? "Workspace",
      invitedByName: inviter,
      expiresAt: row.expiresAt?.toISOString() ?? null,
    },
  };
}

/** Loads and locks the invite, refusing one that can no longer be used. */
async function claimable(tx: Tx, token: string, now: Date): Promise<InviteRow> {
  const row = tokenShape.test(token) ? await findInviteByTokenHash(tx, hashInviteToken(token), { forUpdate: true }) : undefined;
  if (!row) {
    throw new DomainError("NOT_FOUND", "This invite link is not valid. Check that you copied all of it, or ask for a new one.", {
      kind: "Invite",
    });
  }
  const state = stateOf(row, now);
  if (state === "used")
    throw new DomainError("INVITE_USED", "This invite link has already been used. Ask the person who invited you for a new one.");
  if (state === "revoked")
    throw new DomainError("INVITE_REVOKED", "This invite link was revoked. Ask the person who invited you for a new one.");
  if (state === "expired")
    throw new DomainError("INVITE_EXPIRED", "This invite link has expired. Ask the person who invited you for a new one.");
  return row;
}

function emailMismatch(row: InviteRow, email: string): DomainError | null {
  if (!row.email || row.email === email.toLowerCase()) return null;
  return new DomainError("INVITE_EMAIL_MISMATCH", `This invite is for ${row.email}. Sign in or sign up with that email address.`, {
    email: row.email,
  });
}

/** A signed-in user joins the invite's workspace with its role. */
export async function acceptInvite(db: Database, token: string, userId: string, now: Date): Promise<{ workspaceId: string; role: Role }> {
  return db.transaction(async (tx) => {
    const row = await claimable(tx, token, now);
    if (await getMember(tx, row.workspaceId, userId)) {
      throw new DomainError("ALREADY_MEMBER", "You are already a member of this workspace; the invite is left for someone else.");
    }
    const user = await findUserById(tx, userId);
    if (!user) throw new DomainError("UNAUTHENTICATED", "Your session is for an account that no longer exists. Sign in again.");
    const mismatch = emailMismatch(row, user.email);
    if (mismatch) throw mismatch;
    await insertMembership(tx, { workspaceId: row.workspaceId, userId, role: row.role, now });
    await markInviteAccepted(tx, row.id, userId, now);
    return { workspaceId: row.workspaceId, role: row.role };
  });
}

const newAccountSchema = z.object({
  name: z.string().trim().min(1, "must not be empty").max(200),
  email: z.string().trim().toLowerCase().email("must be an email address").max(320),
  password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(1_000),
});

/** A visitor creates an account through the invite and joins with its role. */
export async function acceptInviteAsNewUser(
  db: Database,
  token: string,
  input: { name: string; email: string; password: string },
  now: Date,
): Promise<{ id: string; email: string; name: string }> {
  const parsed = newAccountSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  const account = parsed.data;
  // Check before the slow password hash, so a dead link says so at once; checked again under the lock below.
  await db.transaction(async (tx) => {
    const row = await claimable(tx, token, now);
    const mismatch = emailMismatch(row, account.email);
    if (mismatch) throw mismatch;
  });
  if (await findUserByEmail(db, account.email)) {
    throw new DomainError(
      "EMAIL_TAKEN",
      `An account with email ${account.email} already exists: sign in with it, then open the invite link again to join.`,
      { email: account.email },
    );
  }
  const passwordHash = await hashPassword(account.password);
  return db.transaction(async (tx) => {
    const row = await claimable(tx, token, now);
    const mismatch = emailMismatch(row, account.email);
    if (mismatch) throw mismatch;
    const user = await createUserWithMembership(tx, { ...account, passwordHash, workspaceId: row.workspaceId, role: row.role, now });
    await markInviteAccepted(tx, row.id, user.id, now);
    return user;
  });
}

/**
 * `quire invite create`: the CLI runs with the server's own authority, so the
 * invite is created in the name of the workspace's longest-standing owner.
 */
export async function createInviteFromCli(
  db: Database,
  input: { role: string; email?: string; expiresInDays?: number },
  baseUrl: string,
  now: Date,
) {
  const workspaceId = await getDefaultWorkspaceId(db);
  const ownerId = workspaceId ? await firstOwner(db, workspaceId) : undefined;
  if (!workspaceId || !ownerId) {
    throw new DomainError(
      "NOT_FOUND",
      "There is no workspace owner yet: create the first user with `quire user add` (or on the sign-in page).",
    );
  }
  // The role is checked by the action's schema, like every other input.
  const raw: unknown = { action: "create_invite", ...input };
  return runTool(
    workspaceTool,
    { db, actor: { userId: ownerId, workspaceId, role: "owner", principal: "person", agent: null }, clock: () => now, baseUrl },
    raw,
  ) as Promise<WorkspaceResults["create_invite"]>;
}
