/** Display data about users, for logs and reviewer lists. */
import { users } from "@/db/schema";
import { anyOf, type Tx } from "./db";

export async function userNames(tx: Tx, ids: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await tx.select({ id: users.id, name: users.name }).from(users).where(anyOf(users.id, wanted));
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** Name and email per user, for commit trailers (`Co-authored-by: Name <email>`). */
export async function userIdentities(tx: Tx, ids: Iterable<string>): Promise<Map<string, { name: string; email: string }>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Map();
  const rows = await tx.select({ id: users.id, name: users.name, email: users.email }).from(users).where(anyOf(users.id, wanted));
  return new Map(rows.map((r) => [r.id, { name: r.name, email: r.email }]));
}
