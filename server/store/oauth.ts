/**
 * The OAuth authorization server's rows (db/schema-oauth.ts): clients, grants,
 * one-time authorization codes, access and refresh tokens. Callers hand in
 * hashes, never secrets.
 */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import {
  memberships,
  type OAuthClientRow,
  type OAuthGrantRow,
  type OAuthScope,
  oauthClients,
  oauthCodes,
  oauthGrants,
  oauthTokens,
  type Role,
} from "@/db/schema";
import { LAST_USED_RESOLUTION_MS } from "./accounts";
import type { Tx } from "./db";

export type NewOAuthClient = Omit<typeof oauthClients.$inferInsert, "id" | "createdAt">;

export async function findOAuthClient(tx: Tx, clientId: string): Promise<OAuthClientRow | undefined> {
  const [row] = await tx.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
  return row;
}

/** Inserts a client, or (a metadata document fetched again) replaces what is known of it. */
export async function saveOAuthClient(tx: Tx, client: NewOAuthClient): Promise<OAuthClientRow> {
  const [row] = await tx
    .insert(oauthClients)
    .values(client)
    .onConflictDoUpdate({
      target: oauthClients.clientId,
      set: { name: client.name, metadata: client.metadata, fetchedAt: client.fetchedAt ?? null },
    })
    .returning();
  return row!;
}

/** A person's consent and the authorization code that carries it to the client. */
export async function insertGrantWithCode(
  tx: Tx,
  grant: { clientRowId: string; userId: string; scope: OAuthScope; resource: string; now: Date },
  code: { codeHash: string; codeChallenge: string; redirectUri: string; expiresAt: Date },
): Promise<OAuthGrantRow> {
  return tx.transaction(async (t) => {
    const [row] = await t
      .insert(oauthGrants)
      .values({ clientId: grant.clientRowId, userId: grant.userId, scope: grant.scope, resource: grant.resource, createdAt: grant.now })
      .returning();
    await t.insert(oauthCodes).values({ ...code, grantId: row!.id });
    return row!;
  });
}

export type TakenCode =
  | { kind: "taken"; grant: OAuthGrantRow; codeChallenge: string; redirectUri: string; expiresAt: Date }
  /** The code was used before: the grant it carried (the caller revokes it, RFC 6749 §4.1.2). */
  | { kind: "reused"; grantId: string }
  | { kind: "unknown" };

/** Marks a code used, once: a second use finds it used. */
export async function takeCode(tx: Tx, codeHash: string, now: Date): Promise<TakenCode> {
  const [taken] = await tx
    .update(oauthCodes)
    .set({ usedAt: now })
    .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt)))
    .returning();
  if (!taken) {
    const [used] = await tx.select({ grantId: oauthCodes.grantId }).from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash));
    return used ? { kind: "reused", grantId: used.grantId } : { kind: "unknown" };
  }
  const [grant] = await tx.select().from(oauthGrants).where(eq(oauthGrants.id, taken.grantId));
  return { kind: "taken", grant: grant!, codeChallenge: taken.codeChallenge, redirectUri: taken.redirectUri, expiresAt: taken.expiresAt };
}

export async function insertTokens(
  tx: Tx,
  grantId: string,
  tokens: ReadonlyArray<{ tokenHash: string; kind: "access" | "refresh"; scope: OAuthScope; expiresAt: Date; createdAt: Date }>,
): Promise<void> {
  await tx.insert(oauthTokens).values(tokens.map((t) => ({ ...t, grantId })));
}

export type RotatedRefresh =
  | { kind: "rotated"; grant: OAuthGrantRow; scope: OAuthScope; expiresAt: Date }
  /** Rotated before: whoever holds it has a copy it should not (the caller revokes the grant). */
  | { kind: "reused"; grantId: string }
  | { kind: "unknown" };

/** Rotates a refresh token: marks it used, once. */
export async function rotateRefreshToken(tx: Tx, tokenHash: string, now: Date): Promise<RotatedRefresh> {
  const [rotated] = await tx
    .update(oauthTokens)
    .set({ rotatedAt: now })
    .where(and(eq(oauthTokens.tokenHash, tokenHash), eq(oauthTokens.kind, "refresh"), isNull(oauthTokens.rotatedAt)))
    .returning();
  if (!rotated) {
    const [used] = await tx
      .select({ grantId: oauthTokens.grantId })
      .from(oauthTokens)
      .where(and(eq(oauthTokens.tokenHash, tokenHash), eq(oauthTokens.kind, "refresh")));
    return used ? { kind: "reused", grantId: used.grantId } : { kind: "unknown" };
  }
  const [grant] = await tx.select().from(oauthGrants).where(eq(oauthGrants.id, rotated.grantId));
  return { kind: "rotated", grant: grant!, scope: rotated.scope, expiresAt: rotated.expiresAt };
}

/** The grant a token (access or refresh) was issued under. */
export async function grantOfToken(tx: Tx, tokenHash: string): Promise<OAuthGrantRow | undefined> {
  const [row] = await tx
    .select({ grant: oauthGrants })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, tokenHash));
  return row?.grant;
}

/** Revokes a grant (and with it every token issued under it); with `userId`, only that person's. True when it was live. */
export async function revokeGrant(tx: Tx, grantId: string, now: Date, userId?: string): Promise<boolean> {
  const rows = await tx
    .update(oauthGrants)
    .set({ revokedAt: now })
    .where(and(eq(oauthGrants.id, grantId), isNull(oauthGrants.revokedAt), userId ? eq(oauthGrants.userId, userId) : undefined))
    .returning({ id: oauthGrants.id });
  return rows.length > 0;
}

export interface UsedAccessToken {
  grantId: string;
  userId: string;
  scope: OAuthScope;
  resource: string;
  /** The client's row id (oauth_clients.id) and name: the agent history names. */
  clientRowId: string;
  clientName: string;
  membership: { workspaceId: string; role: Role } | null;
}

/**
 * What a live access token stands for (its grant not revoked, the token not
 * expired), and its use recorded on the grant (to the minute): undefined for
 * any other token.
 */
export async function useAccessToken(tx: Tx, tokenHash: string, now: Date): Promise<UsedAccessToken | undefined> {
  const [row] = await tx
    .select({
      grantId: oauthGrants.id,
      userId: oauthGrants.userId,
      scope: oauthTokens.scope,
      resource: oauthGrants.resource,
      lastUsedAt: oauthGrants.lastUsedAt,
      clientRowId: oauthClients.id,
      clientName: oauthClients.name,
      workspaceId: memberships.workspaceId,
      role: memberships.role,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .leftJoin(memberships, eq(memberships.userId, oauthGrants.userId))
    .where(
      and(
        eq(oauthTokens.tokenHash, tokenHash),
        eq(oauthTokens.kind, "access"),
        isNull(oauthGrants.revokedAt),
        sql`${oauthTokens.expiresAt} > ${now.toISOString()}`,
      ),
    )
    .orderBy(memberships.createdAt)
    .limit(1);
  if (!row) return undefined;
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await tx.update(oauthGrants).set({ lastUsedAt: now }).where(eq(oauthGrants.id, row.grantId));
  }
  const { workspaceId, role, lastUsedAt: _, ...used } = row;
  return { ...used, membership: workspaceId && role ? { workspaceId, role } : null };
}

export interface ConnectedAppRow {
  grantId: string;
  clientName: string;
  clientId: string;
  scope: OAuthScope;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** A person's live grants (connected apps), newest first. */
export async function listLiveGrants(tx: Tx, userId: string): Promise<ConnectedAppRow[]> {
  return tx
    .select({
      grantId: oauthGrants.id,
      clientName: oauthClients.name,
      clientId: oauthClients.clientId,
      scope: oauthGrants.scope,
      createdAt: oauthGrants.createdAt,
      lastUsedAt: oauthGrants.lastUsedAt,
    })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(eq(oauthGrants.userId, userId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.createdAt))
    .limit(1_000);
}
