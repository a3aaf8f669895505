/**
 * Opening a share link. A signed-in workspace member who opens it gets the
 * link's permission on the document as a grant (never lowering one they
 * have); a visitor without an account can read the document through a read
 * link, and nothing else.
 */
import type { Database } from "@/db/client";
import { hashSecretToken } from "@/server/auth/secret-tokens";
import { DomainError } from "@/server/core/errors";
import { atLeast } from "@/server/policies/access";
import { findLiveShareLink, type ShareLinkRow, setGrant } from "@/server/store/access";
import { getMembership } from "@/server/store/accounts";
import { getDocument } from "@/server/store/documents";
import { accessFor } from "./access";
import { type DocumentView, readDocument } from "./read";

const deadLink = () =>
  new DomainError(
    "NOT_FOUND",
    "This share link does not work: it was revoked, it expired, or it never existed. Ask the person who shared it for a new one.",
  );

async function liveLink(db: Database, token: string, now: Date): Promise<ShareLinkRow> {
  if (token.length < 20 || token.length > 200) throw deadLink();
  const link = await findLiveShareLink(db, hashSecretToken(token), now);
  if (!link) throw deadLink();
  return link;
}

/** The document behind a read link, as a visitor without an account sees it. */
export async function readSharedDocument(
  db: Database,
  token: string,
  input: { branchName?: string; commitId?: string },
  now: Date,
): Promise<DocumentView> {
  const link = await liveLink(db, token, now);
  if (link.permission !== "read") {
    throw new DomainError("UNAUTHENTICATED", "This link grants edit access, which needs an account: sign in, then open the link again.");
  }
  const document = await getDocument(db, link.workspaceId, link.documentId);
  return readDocument(db, await accessFor(db, document, { kind: "share", permission: "read" }), input);
}

/** Gives a signed-in member the link's access to its document; returns the document id to open. */
export async function acceptShareLink(db: Database, userId: string, token: string, now: Date): Promise<{ documentId: string }> {
  const link = await liveLink(db, token, now);
  const membership = await getMembership(db, userId);
  if (!membership || membership.workspaceId !== link.workspaceId) {
    throw new DomainError(
      "PERMISSION_DENIED",
      "This link belongs to a workspace you are not a member of. Open it signed out to read it, or ask for an invitation.",
    );
  }
  // A grant replaces the team default, so grant only when the link raises what the member can already do.
  const document = await getDocument(db, link.workspaceId, link.documentId);
  const current = await accessFor(db, document, { kind: "member", userId, role: membership.role, principal: "person" });
  if (!atLeast(current.permission, link.permission)) {
    await setGrant(db, { documentId: link.documentId, userId, permission: link.permission, grantedBy: link.createdBy, now });
  }
  return { documentId: link.documentId };
}
