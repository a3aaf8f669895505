/** API tokens as their owners see them: listing and revocation. The token itself is never stored. */
import { and, desc, eq, isNull } from "drizzle-orm";
import { apiTokens } from "@/db/schema";
import { announceAccessChange } from "./access-cache";
import type { Tx } from "./db";

export interface ApiTokenRow {
  id: string;
  userId: string;
  label: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
}

const columns = {
  id: apiTokens.id,
  userId: apiTokens.userId,
  label: apiTokens.label,
  createdAt: apiTokens.createdAt,
  lastUsedAt: apiTokens.lastUsedAt,
  expiresAt: apiTokens.expiresAt,
  revokedAt: apiTokens.revokedAt,
};

/** A user's tokens, newest first. */
export async function listApiTokens(tx: Tx, userId: string): Promise<ApiTokenRow[]> {
  return tx
    .select(columns)
    .from(apiTokens)
    .where(eq(apiTokens.userId, userId))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .limit(1_000);
}

/** One token by id; with `userId`, only if that user owns it. */
export async function getApiToken(tx: Tx, tokenId: string, userId?: string): Promise<ApiTokenRow | undefined> {
  const [row] = await tx
    .select(columns)
    .from(apiTokens)
    .where(userId ? and(eq(apiTokens.id, tokenId), eq(apiTokens.userId, userId)) : eq(apiTokens.id, tokenId));
  return row;
}

/** Revokes a token; `changed` is false when it was already revoked (the first revocation time stays). */
export async function revokeApiToken(tx: Tx, tokenId: string, now: Date): Promise<{ token: ApiTokenRow; changed: boolean } | undefined> {
  const [row] = await tx
    .update(apiTokens)
    .set({ revokedAt: now })
    .where(and(eq(apiTokens.id, tokenId), isNull(apiTokens.revokedAt)))
    .returning(columns);
  if (row) {
    await announceAccessChange(tx);
    return { token: row, changed: true };
  }
  const existing = await getApiToken(tx, tokenId);
  return existing ? { token: existing, changed: false } : undefined;
}
