/** Workspace tags. Which tags a document carries is versioned in its tree, not here. */
import { and, eq } from "drizzle-orm";
import { tags } from "@/db/schema";
import { DomainError } from "@/server/core/errors";
import { anyOf, isUniqueViolation, type Tx } from "./db";

export type TagRow = typeof tags.$inferSelect;

export async function insertTag(
  tx: Tx,
  input: {
    workspaceId: string;
    path: string;
    displayName: string | null;
    description: string | null;
    color: string | null;
    createdBy: string;
    now: Date;
  },
): Promise<TagRow> {
  try {
    const [row] = await tx
      .insert(tags)
      .values({ ...input, createdAt: input.now })
      .returning();
    return row!;
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new DomainError("TAG_EXISTS", `A tag with path ${JSON.stringify(input.path)} already exists in this workspace.`, {
        tagPath: input.path,
      });
    }
    throw error;
  }
}

export async function getTags(tx: Tx, workspaceId: string, ids: readonly string[]): Promise<TagRow[]> {
  if (ids.length === 0) return [];
  return tx
    .select()
    .from(tags)
    .where(and(eq(tags.workspaceId, workspaceId), anyOf(tags.id, [...ids])));
}
