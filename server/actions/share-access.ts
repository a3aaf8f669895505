/**
 * Who a share link's visitor is to the access policy, in one place for the
 * share page's read and the downloads signed for the link: the document read
 * only, whatever the link grants (editing needs an account), as the `share`
 * principal, which no section override raises.
 */
import { findLiveShareLinkById } from "@/server/store/access";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, getDocument } from "@/server/store/documents";
import { accessWithGrant, type DocumentAccess } from "@/server/access/documents";

export const shareVisitorAccess = (document: DocumentRow): DocumentAccess =>
  accessWithGrant(document, { kind: "share", permission: "read" }, null);

/**
 * The visitor's access to `documentId` through share link `shareLinkId`, for a
 * download signed for the link; null once the link is revoked or expired, or
 * when it shares another document.
 */
export async function shareLinkDocumentAccess(tx: Tx, shareLinkId: string, documentId: string, now: Date): Promise<DocumentAccess | null> {
  const link = await findLiveShareLinkById(tx, shareLinkId, now);
  if (!link || link.documentId !== documentId) return null;
  return shareVisitorAccess(await getDocument(tx, link.workspaceId, link.documentId));
}
