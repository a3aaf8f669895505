/** Uploaded files that storage blocks may reference. */
import { and, eq, inArray, isNotNull } from "drizzle-orm";
import { uploads } from "@/db/schema";
import type { Tx } from "./db";

/** The keys among `keys` that are not completed uploads of the workspace. */
export async function missingUploadKeys(tx: Tx, workspaceId: string, keys: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(keys)];
  if (wanted.length === 0) return [];
  const rows = await tx
    .select({ key: uploads.key })
    .from(uploads)
    .where(and(eq(uploads.workspaceId, workspaceId), inArray(uploads.key, wanted), isNotNull(uploads.completedAt)));
  const found = new Set(rows.map((r) => r.key));
  return wanted.filter((k) => !found.has(k));
}
