/** Uploaded files that storage blocks may reference. */
import { and, eq, isNotNull, isNull } from "drizzle-orm";
import { documents, uploads } from "@/db/schema";
import { anyOf, type Tx } from "./db";

/** The completed uploads of the workspace among `keys`, with who uploaded each. */
export async function completedUploadsAmong(
  tx: Tx,
  workspaceId: string,
  keys: readonly string[],
): Promise<Array<{ key: string; createdBy: string }>> {
  const wanted = [...new Set(keys)];
  if (wanted.length === 0) return [];
  return tx
    .select({ key: uploads.key, createdBy: uploads.createdBy })
    .from(uploads)
    .where(and(eq(uploads.workspaceId, workspaceId), anyOf(uploads.key, wanted), isNotNull(uploads.completedAt)));
}

export type UploadRow = typeof uploads.$inferSelect;

/**
 * The `sha256` value of an upload whose bytes are being received: set by the
 * one PUT that claimed it, so a second PUT cannot claim it too. The real
 * digest replaces it on completion; a failed PUT clears it again.
 */
export const RECEIVING = "receiving";

/** Records a pending upload (no bytes yet; `byteSize` is the declared size, if any). */
export async function insertUpload(
  tx: Tx,
  row: {
    key: string;
    workspaceId: string;
    filename: string;
    mediaType: string;
    byteSize: number | null;
    createdBy: string;
    createdAt: Date;
    expiresAt: Date;
  },
): Promise<void> {
  await tx.insert(uploads).values({ ...row, sha256: null, completedAt: null });
}

export async function getUpload(tx: Tx, key: string): Promise<UploadRow | null> {
  const [row] = await tx.select().from(uploads).where(eq(uploads.key, key)).limit(1);
  return row ?? null;
}

/**
 * Claims a pending upload for one PUT, atomically: of several racing PUTs
 * exactly one gets the row back; the others get null.
 */
export async function claimUpload(tx: Tx, key: string): Promise<UploadRow | null> {
  const [row] = await tx
    .update(uploads)
    .set({ sha256: RECEIVING })
    .where(and(eq(uploads.key, key), isNull(uploads.completedAt), isNull(uploads.sha256)))
    .returning();
  return row ?? null;
}

/** Marks a claimed upload complete with the size and digest of the bytes stored. */
export async function completeUpload(tx: Tx, key: string, done: { byteSize: number; sha256: string; completedAt: Date }): Promise<boolean> {
  const rows = await tx
    .update(uploads)
    .set(done)
    .where(and(eq(uploads.key, key), eq(uploads.sha256, RECEIVING), isNull(uploads.completedAt)))
    .returning({ key: uploads.key });
  return rows.length === 1;
}

/** Gives a claimed upload back after a failed PUT, so the URL can be retried until it expires. */
export async function releaseUpload(tx: Tx, key: string): Promise<void> {
  await tx
    .update(uploads)
    .set({ sha256: null })
    .where(and(eq(uploads.key, key), eq(uploads.sha256, RECEIVING), isNull(uploads.completedAt)));
}

/** A completed upload, provided it belongs to the workspace of `documentId`; else null. */
export async function completedUploadOfDocumentWorkspace(tx: Tx, key: string, documentId: string): Promise<UploadRow | null> {
  const [row] = await tx
    .select({ upload: uploads })
    .from(uploads)
    .innerJoin(documents, eq(documents.workspaceId, uploads.workspaceId))
    .where(and(eq(uploads.key, key), eq(documents.id, documentId), isNotNull(uploads.completedAt)))
    .limit(1);
  return row?.upload ?? null;
}
