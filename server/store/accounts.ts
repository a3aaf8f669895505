/** Users, workspaces, memberships, API tokens and instance settings. */
import { and, asc, count, eq, isNull, sql } from "drizzle-orm";
import { apiTokens, instanceSettings, memberships, type Role, users, workspaces } from "@/db/schema";
import { DomainError } from "@/server/core/errors";
import { createAccessCache } from "./access-cache";
import { anyOf, isUniqueViolation, type Tx } from "./db";

export type UserRow = typeof users.$inferSelect;

const DEFAULT_WORKSPACE_KEY = "default_workspace_id";
/** Advisory lock key that serialises user creation, so exactly one user becomes the owner. */
const USER_CREATION_LOCK = 4_711_0001;

export async function countUsers(tx: Tx): Promise<number> {
  const [row] = await tx.select({ n: count() }).from(users);
  return row?.n ?? 0;
}

export async function findUserByEmail(tx: Tx, email: string): Promise<UserRow | undefined> {
  const [row] = await tx.select().from(users).where(eq(users.email, email.toLowerCase()));
  return row;
}

export async function getSetting(tx: Tx, key: string): Promise<string | undefined> {
  const [row] = await tx.select().from(instanceSettings).where(eq(instanceSettings.key, key));
  return row?.value;
}

/** Returns the stored value, storing `candidate` first if the key is new (first writer wins across processes). */
export async function getOrInitSetting(tx: Tx, key: string, candidate: string): Promise<string> {
  await tx.insert(instanceSettings).values({ key, value: candidate }).onConflictDoNothing();
  return (await getSetting(tx, key))!;
}

export async function getDefaultWorkspaceId(tx: Tx): Promise<string | undefined> {
  return getSetting(tx, DEFAULT_WORKSPACE_KEY);
}

export interface CreatedUser {
  user: UserRow;
  workspaceId: string;
  role: Role;
}

/**
 * Creates a user. The first user also creates the default workspace and owns
 * it; later users join it as members. Call inside a transaction.
 */
export async function createUser(
  tx: Tx,
  input: { email: string; name: string; passwordHash: string; now: Date; onlyIfFirst?: boolean },
): Promise<CreatedUser> {
  await tx.execute(sql`select pg_advisory_xact_lock(${USER_CREATION_LOCK})`);
  const isFirst = (await countUsers(tx)) === 0;
  if (input.onlyIfFirst && !isFirst) {
    throw new DomainError("ALREADY_INITIALIZED", "Quire already has an owner. Sign in, or ask an admin to add you.");
  }
  let user: UserRow;
  try {
    [user] = (await tx
      .insert(users)
      .values({ email: input.email.toLowerCase(), name: input.name, passwordHash: input.passwordHash, createdAt: input.now })
      .returning()) as [UserRow];
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new DomainError("EMAIL_TAKEN", `A user with email ${JSON.stringify(input.email)} already exists.`, {
        email: input.email,
      });
    }
    throw error;
  }
  let workspaceId = await getDefaultWorkspaceId(tx);
  if (!workspaceId) {
    const [workspace] = await tx.insert(workspaces).values({ name: "Workspace", createdAt: input.now }).returning();
    workspaceId = await getOrInitSetting(tx, DEFAULT_WORKSPACE_KEY, workspace!.id);
  }
  const role: Role = isFirst ? "owner" : "member";
  await tx.insert(memberships).values({ workspaceId, userId: user.id, role, createdAt: input.now });
  return { user, workspaceId, role };
}

export interface Membership {
  user: UserRow;
  workspaceId: string;
  role: Role;
}

/** The user's membership in the default workspace, if any. */
export async function getMembership(tx: Tx, userId: string): Promise<Membership | undefined> {
  const [row] = await tx
    .select({ user: users, workspaceId: memberships.workspaceId, role: memberships.role })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(eq(memberships.userId, userId))
    .orderBy(asc(memberships.createdAt))
    .limit(1);
  return row;
}

export async function insertApiToken(
  tx: Tx,
  input: { userId: string; label: string | null; tokenHash: string; expiresAt: Date | null; now: Date },
): Promise<{ id: string }> {
  const [row] = await tx
    .insert(apiTokens)
    .values({ userId: input.userId, label: input.label, tokenHash: input.tokenHash, expiresAt: input.expiresAt, createdAt: input.now })
    .returning({ id: apiTokens.id });
  return row!;
}

/** last_used_at is refreshed at most this often, so busy tokens do not turn every request into a row write. */
export const LAST_USED_RESOLUTION_MS = 60_000;

interface LiveToken {
  tokenId: string;
  label: string | null;
  userId: string;
  membership: { workspaceId: string; role: Role };
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

/** Live tokens of members, by hash (see access-cache.ts for how changes clear it). */
const liveTokens = createAccessCache<LiveToken>("live API tokens by hash", 10_000);

/**
 * Finds a live (not revoked, not expired) token by its hash, with its user's
 * membership, and records its use. A token of a user who belongs to no
 * workspace has no membership (and is not cached).
 */
export async function useApiToken(
  tx: Tx,
  tokenHash: string,
  now: Date,
): Promise<{ tokenId: string; label: string | null; userId: string; membership: { workspaceId: string; role: Role } | null } | undefined> {
  const since = liveTokens.begin();
  let token = liveTokens.get(tokenHash);
  if (!token) {
    const [row] = await tx
      .select({
        tokenId: apiTokens.id,
        label: apiTokens.label,
        userId: apiTokens.userId,
        lastUsedAt: apiTokens.lastUsedAt,
        expiresAt: apiTokens.expiresAt,
        workspaceId: memberships.workspaceId,
        role: memberships.role,
      })
      .from(apiTokens)
      .leftJoin(memberships, eq(memberships.userId, apiTokens.userId))
      .where(and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt)))
      .orderBy(asc(memberships.createdAt))
      .limit(1);
    if (!row) return undefined;
    if (!row.workspaceId || !row.role) return { tokenId: row.tokenId, label: row.label, userId: row.userId, membership: null };
    token = liveTokens.set(tokenHash, { ...row, membership: { workspaceId: row.workspaceId, role: row.role } }, since);
  }
  if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) return undefined;
  if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() >= LAST_USED_RESOLUTION_MS) {
    await tx.update(apiTokens).set({ lastUsedAt: now }).where(eq(apiTokens.id, token.tokenId));
    token = liveTokens.set(tokenHash, { ...token, lastUsedAt: now }, since);
  }
  return { tokenId: token.tokenId, label: token.label, userId: token.userId, membership: token.membership };
}

/** The ids among `userIds` that are not members of the workspace. */
export async function nonMembers(tx: Tx, workspaceId: string, userIds: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(userIds)];
  if (wanted.length === 0) return [];
  const rows = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), anyOf(memberships.userId, wanted)));
  const members = new Set(rows.map((r) => r.userId));
  return wanted.filter((id) => !members.has(id));
}
