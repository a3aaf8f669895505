/** Workspace invitations. Only the sha256 of an invite's token is stored. */
import { and, asc, desc, eq, gt, isNull, or } from "drizzle-orm";
import { invites, users } from "@/db/schema";
import type { Tx } from "./db";

export type InviteRow = typeof invites.$inferSelect;
export type InviteRole = InviteRow["role"];

export interface PendingInvite extends InviteRow {
  createdByName: string;
}

export async function insertInvite(
  tx: Tx,
  input: {
    workspaceId: string;
    tokenHash: string;
    role: InviteRole;
    email: string | null;
    createdBy: string;
    now: Date;
    expiresAt: Date | null;
  },
): Promise<InviteRow> {
  const [row] = await tx
    .insert(invites)
    .values({
      workspaceId: input.workspaceId,
      tokenHash: input.tokenHash,
      role: input.role,
      email: input.email,
      createdBy: input.createdBy,
      createdAt: input.now,
      expiresAt: input.expiresAt,
    })
    .returning();
  return row!;
}

/** The invite a token names; with forUpdate, locked so two people cannot accept it at once. */
export async function findInviteByTokenHash(
  tx: Tx,
  tokenHash: string,
  options: { forUpdate?: boolean } = {},
): Promise<InviteRow | undefined> {
  const query = tx.select().from(invites).where(eq(invites.tokenHash, tokenHash));
  const [row] = options.forUpdate ? await query.for("update") : await query;
  return row;
}

/** Invites nobody has accepted or revoked and that have not expired, newest first. */
export async function listPendingInvites(tx: Tx, workspaceId: string, now: Date): Promise<PendingInvite[]> {
  const rows = await tx
    .select({ invite: invites, createdByName: users.name })
    .from(invites)
    .innerJoin(users, eq(users.id, invites.createdBy))
    .where(
      and(
        eq(invites.workspaceId, workspaceId),
        isNull(invites.acceptedAt),
        isNull(invites.revokedAt),
        or(isNull(invites.expiresAt), gt(invites.expiresAt, now)),
      ),
    )
    .orderBy(desc(invites.createdAt), asc(invites.id))
    .limit(500);
  return rows.map((r) => ({ ...r.invite, createdByName: r.createdByName }));
}

export async function getInvite(
  tx: Tx,
  workspaceId: string,
  inviteId: string,
  options: { forUpdate?: boolean } = {},
): Promise<InviteRow | undefined> {
  const query = tx
    .select()
    .from(invites)
    .where(and(eq(invites.workspaceId, workspaceId), eq(invites.id, inviteId)));
  const [row] = options.forUpdate ? await query.for("update") : await query;
  return row;
}

export async function markInviteRevoked(tx: Tx, inviteId: string, now: Date): Promise<void> {
  await tx.update(invites).set({ revokedAt: now }).where(eq(invites.id, inviteId));
}

export async function markInviteAccepted(tx: Tx, inviteId: string, userId: string, now: Date): Promise<void> {
  await tx.update(invites).set({ acceptedAt: now, acceptedBy: userId }).where(eq(invites.id, inviteId));
}
