/**
 * API tokens as people manage them: what a token looks like when listed
 * (never the token itself), and the CLI's list and revoke. Revocation and
 * expiry take effect on the very next request: live tokens are cached, but a
 * revocation clears the cache of every Quire process on the database (see
 * useApiToken in store/accounts.ts).
 */
import type { Database } from "@/db/client";
import { DomainError, notFound } from "@/server/core/errors";
import { findUserByEmail } from "@/server/store/accounts";
import { type ApiTokenRow, listApiTokens, revokeApiToken } from "@/server/store/api-tokens";

export interface ApiTokenView {
  tokenId: string;
  label: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  status: "active" | "expired" | "revoked";
}

export function presentApiToken(row: ApiTokenRow, now: Date): ApiTokenView {
  const status = row.revokedAt ? "revoked" : row.expiresAt && row.expiresAt.getTime() <= now.getTime() ? "expired" : "active";
  return {
    tokenId: row.id,
    label: row.label,
    createdAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    expiresAt: row.expiresAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    status,
  };
}

/** `quire token list --email E`: the user's tokens, newest first. */
export async function listApiTokensForEmail(db: Database, email: string, now: Date): Promise<ApiTokenView[]> {
  const user = await findUserByEmail(db, email.trim());
  if (!user) throw new DomainError("NOT_FOUND", `No user has the email ${JSON.stringify(email)}.`, { kind: "User", id: email });
  return (await listApiTokens(db, user.id)).map((row) => presentApiToken(row, now));
}

/** `quire token revoke --id ID`: revokes any user's token by id (the CLI runs with the server's own authority). */
export async function revokeApiTokenById(
  db: Database,
  tokenId: string,
  now: Date,
): Promise<{ token: ApiTokenView; alreadyRevoked: boolean }> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tokenId)) {
    throw notFound("API token", tokenId, "Use an id from `quire token list --email E`.");
  }
  const revoked = await revokeApiToken(db, tokenId, now);
  if (!revoked) throw notFound("API token", tokenId, "Use an id from `quire token list --email E`.");
  return { token: presentApiToken(revoked.token, now), alreadyRevoked: !revoked.changed };
}
