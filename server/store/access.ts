/** Loads what the access policy decides on: document permission settings and per-user grants. */
import { and, desc, eq, gt, isNull, or } from "drizzle-orm";
import { documentGrants, documents, shareLinks } from "@/db/schema";
import type { Permission } from "@/server/core/document-model";
import { announceAccessChange } from "./access-cache";
import { anyOf, type Tx } from "./db";

export async function getGrant(tx: Tx, documentId: string, userId: string): Promise<Permission | null> {
  const [row] = await tx
    .select({ permission: documentGrants.permission })
    .from(documentGrants)
    .where(and(eq(documentGrants.documentId, documentId), eq(documentGrants.userId, userId)));
  return row?.permission ?? null;
}

export async function listGrants(tx: Tx, documentId: string) {
  return tx.select().from(documentGrants).where(eq(documentGrants.documentId, documentId));
}

export async function setGrant(
  tx: Tx,
  input: { documentId: string; userId: string; permission: Permission | null; grantedBy: string; now: Date },
) {
  await announceAccessChange(tx);
  if (input.permission === null) {
    await tx.delete(documentGrants).where(and(eq(documentGrants.documentId, input.documentId), eq(documentGrants.userId, input.userId)));
    return;
  }
  await tx
    .insert(documentGrants)
    .values({
      documentId: input.documentId,
      userId: input.userId,
      permission: input.permission,
      grantedBy: input.grantedBy,
      createdAt: input.now,
    })
    .onConflictDoUpdate({
      target: [documentGrants.documentId, documentGrants.userId],
      set: { permission: input.permission, grantedBy: input.grantedBy, createdAt: input.now },
    });
}

export async function setDocumentPermissions(
  tx: Tx,
  documentId: string,
  values: { defaultPermission?: Permission; aiAccess?: Permission },
): Promise<void> {
  if (values.defaultPermission === undefined && values.aiAccess === undefined) return;
  await tx.update(documents).set(values).where(eq(documents.id, documentId));
  await announceAccessChange(tx);
}

/** The user's grants on the given documents. */
export async function grantsFor(tx: Tx, userId: string, documentIds: readonly string[]): Promise<Map<string, Permission>> {
  if (documentIds.length === 0) return new Map();
  const rows = await tx
    .select({ documentId: documentGrants.documentId, permission: documentGrants.permission })
    .from(documentGrants)
    .where(and(eq(documentGrants.userId, userId), anyOf(documentGrants.documentId, [...documentIds])));
  return new Map(rows.map((r) => [r.documentId, r.permission]));
}

export type ShareLinkRow = typeof shareLinks.$inferSelect;

export async function insertShareLink(tx: Tx, values: typeof shareLinks.$inferInsert): Promise<ShareLinkRow> {
  const [row] = await tx.insert(shareLinks).values(values).returning();
  return row!;
}

export async function listShareLinks(tx: Tx, documentId: string): Promise<ShareLinkRow[]> {
  return tx.select().from(shareLinks).where(eq(shareLinks.documentId, documentId)).orderBy(desc(shareLinks.createdAt));
}

export async function revokeShareLink(tx: Tx, documentId: string, id: string, now: Date): Promise<ShareLinkRow | undefined> {
  const [row] = await tx
    .update(shareLinks)
    .set({ revokedAt: now })
    .where(and(eq(shareLinks.id, id), eq(shareLinks.documentId, documentId), isNull(shareLinks.revokedAt)))
    .returning();
  // Live rooms decide their share-link visitors again (and close the revoked link's sockets).
  if (row) await announceAccessChange(tx);
  return row;
}

/** Neither revoked nor expired at `now`. */
const liveAt = (now: Date) => and(isNull(shareLinks.revokedAt), or(isNull(shareLinks.expiresAt), gt(shareLinks.expiresAt, now)));

/** A link that is neither revoked nor expired, by the hash of its token. */
export async function findLiveShareLink(tx: Tx, tokenHash: string, now: Date): Promise<ShareLinkRow | undefined> {
  const [row] = await tx
    .select()
    .from(shareLinks)
    .where(and(eq(shareLinks.tokenHash, tokenHash), liveAt(now)));
  return row;
}

/** A link that is neither revoked nor expired, by its id (a download signed for the link names it). */
export async function findLiveShareLinkById(tx: Tx, id: string, now: Date): Promise<ShareLinkRow | undefined> {
  const [row] = await tx
    .select()
    .from(shareLinks)
    .where(and(eq(shareLinks.id, id), liveAt(now)));
  return row;
}
