/** The workspace row itself: its name. (Members live in members.ts, the default workspace in accounts.ts.) */
import { eq } from "drizzle-orm";
import { workspaces } from "@/db/schema";
import type { Tx } from "./db";

/**
 * Renames a workspace; returns its previous name, or undefined when there is
 * no such workspace. Call inside a transaction: the row is locked between
 * reading the old name and writing the new one.
 */
export async function renameWorkspace(tx: Tx, workspaceId: string, name: string): Promise<{ previousName: string } | undefined> {
  const [row] = await tx.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, workspaceId)).for("update");
  if (!row) return undefined;
  if (row.name !== name) await tx.update(workspaces).set({ name }).where(eq(workspaces.id, workspaceId));
  return { previousName: row.name };
}
