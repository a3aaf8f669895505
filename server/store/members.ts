/** Workspace members: listing and prefix search, role changes, removal, and users who join by invite. */
import { and, asc, eq, ilike, inArray, or, type SQL, sql } from "drizzle-orm";
import { memberships, type Role, users, workspaces } from "@/db/schema";
import { DomainError } from "@/server/core/errors";
import { announceAccessChange } from "./access-cache";
import { isUniqueViolation, type Tx } from "./db";

export interface MemberRow {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: Date;
  /** lower(name) as the database computes it: the first half of the keyset cursor. */
  sortName: string;
}

/** Makes user input match literally inside a LIKE pattern (backslash is PostgreSQL's default escape). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * Members of a workspace ordered by name (case-insensitively), then id.
 * With `query`: a case-insensitive prefix match on the email, on the whole
 * name, or on any word of the name ("lov" finds "Ada Lovelace").
 */
export async function listMembers(
  tx: Tx,
  input: { workspaceId: string; query?: string; after?: { sortName: string; userId: string }; limit: number },
): Promise<MemberRow[]> {
  const conditions = [eq(memberships.workspaceId, input.workspaceId)];
  if (input.query !== undefined) {
    const prefix = escapeLike(input.query);
    conditions.push(
      or(
        ilike(users.email, `${prefix}%`),
        ilike(users.name, `${prefix}%`),
        // The start of a later word of the name: after a space or a hyphen.
        ilike(users.name, `% ${prefix}%`),
        ilike(users.name, `%-${prefix}%`),
      )!,
    );
  }
  if (input.after) {
    conditions.push(sql`(${memberSortName}, ${users.id}) > (${input.after.sortName}, ${input.after.userId}::uuid)`);
  }
  return membersWhere(tx, and(...conditions)!).limit(input.limit);
}

/** The members of a workspace among `userIds` (ids of anyone else are left out), ordered as listMembers orders them. */
export async function findMembers(tx: Tx, input: { workspaceId: string; userIds: readonly string[] }): Promise<MemberRow[]> {
  if (input.userIds.length === 0) return [];
  return membersWhere(tx, and(eq(memberships.workspaceId, input.workspaceId), inArray(memberships.userId, [...input.userIds]))!);
}

/** Members ordered by name (case-insensitively), then id: the order every listing of members keeps. */
const memberSortName = sql<string>`lower(${users.name})`;

function membersWhere(tx: Tx, condition: SQL) {
  return tx
    .select({
      userId: users.id,
      name: users.name,
      email: users.email,
      role: memberships.role,
      joinedAt: memberships.createdAt,
      sortName: memberSortName,
    })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(condition)
    .orderBy(asc(memberSortName), asc(users.id));
}

export async function getMember(tx: Tx, workspaceId: string, userId: string, options: { forUpdate?: boolean } = {}) {
  const query = tx
    .select({ userId: memberships.userId, role: memberships.role, name: users.name, email: users.email, joinedAt: memberships.createdAt })
    .from(memberships)
    .innerJoin(users, eq(users.id, memberships.userId))
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
  const [row] = options.forUpdate ? await query.for("update", { of: memberships }) : await query;
  return row;
}

/**
 * Locks the owners' membership rows and returns their ids. Every change that
 * could take away an owner calls this first, so two owners demoting or
 * removing each other at once cannot leave the workspace without one.
 */
export async function lockOwners(tx: Tx, workspaceId: string): Promise<string[]> {
  const rows = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, "owner")))
    .orderBy(asc(memberships.userId))
    .for("update");
  return rows.map((r) => r.userId);
}

/** The workspace's longest-standing owner (the CLI acts as them). */
export async function firstOwner(tx: Tx, workspaceId: string): Promise<string | undefined> {
  const [row] = await tx
    .select({ userId: memberships.userId })
    .from(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.role, "owner")))
    .orderBy(asc(memberships.createdAt), asc(memberships.userId))
    .limit(1);
  return row?.userId;
}

export async function setMemberRole(tx: Tx, workspaceId: string, userId: string, role: Role): Promise<void> {
  await tx
    .update(memberships)
    .set({ role })
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)));
  await announceAccessChange(tx);
}

/** Ends a membership. The user row stays, so commits, comments and reviews keep their author. */
export async function deleteMembership(tx: Tx, workspaceId: string, userId: string): Promise<boolean> {
  const rows = await tx
    .delete(memberships)
    .where(and(eq(memberships.workspaceId, workspaceId), eq(memberships.userId, userId)))
    .returning({ userId: memberships.userId });
  if (rows.length > 0) await announceAccessChange(tx);
  return rows.length > 0;
}

export async function insertMembership(tx: Tx, input: { workspaceId: string; userId: string; role: Role; now: Date }): Promise<void> {
  await tx.insert(memberships).values({ workspaceId: input.workspaceId, userId: input.userId, role: input.role, createdAt: input.now });
}

export async function findUserById(tx: Tx, userId: string): Promise<{ id: string; email: string; name: string } | undefined> {
  const [row] = await tx.select({ id: users.id, email: users.email, name: users.name }).from(users).where(eq(users.id, userId));
  return row;
}

export async function getWorkspaceName(tx: Tx, workspaceId: string): Promise<string | undefined> {
  const [row] = await tx.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, workspaceId));
  return row?.name;
}

/** Creates a user who joins one workspace with the given role (accepting an invite). Call inside a transaction. */
export async function createUserWithMembership(
  tx: Tx,
  input: { email: string; name: string; passwordHash: string; workspaceId: string; role: Role; now: Date },
): Promise<{ id: string; email: string; name: string }> {
  let user: { id: string; email: string; name: string } | undefined;
  try {
    [user] = await tx
      .insert(users)
      .values({ email: input.email.toLowerCase(), name: input.name, passwordHash: input.passwordHash, createdAt: input.now })
      .returning({ id: users.id, email: users.email, name: users.name });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new DomainError(
        "EMAIL_TAKEN",
        `An account with email ${JSON.stringify(input.email)} already exists: sign in with it, then open the invite link again.`,
        { email: input.email },
      );
    }
    throw error;
  }
  await insertMembership(tx, { workspaceId: input.workspaceId, userId: user!.id, role: input.role, now: input.now });
  return user!;
}
