/**
 * Opening a share link. A signed-in workspace member who opens it gets the
 * link's permission on the document as a grant (never lowering one they
 * have); a visitor without an account reads the document through a read link
 * (the one share-link rule, `server/access/authorize.ts`). Creating, listing
 * and revoking links are `documents` actions, for those who manage the
 * document.
 */
import { z } from "zod";
import type { Database } from "@/db/client";
import { type Authorizer, createAuthorizer, visitorAccess } from "@/server/access/authorize";
import { accessFor, openDocument } from "@/server/access/documents";
import { hashSecretToken, newSecretToken } from "@/server/auth/secret-tokens";
import { DomainError, notFound } from "@/server/core/errors";
import { atLeast } from "@/server/policies/access";
import { insertShareLink, listShareLinks, revokeShareLink, type ShareLinkRow, setGrant } from "@/server/store/access";
import { getMembership } from "@/server/store/accounts";
import { getDocument } from "@/server/store/documents";
import type { FileLinks } from "@/server/storage/links";
import type { ActionContext } from "./context";
import { documentIdField } from "./document-fields";
import { uuidSchema } from "./tool";
import { type DocumentView, readDocument } from "./read";
import { signedDownloads } from "./upload-url";

/**
 * Where a share link is checked: the server's authorizer, with its rate
 * limits, and the client address the link came from (failures count against
 * it). Absent: an authorizer of `db` without limits (tests, scripts).
 */
export interface ShareLinkDoor {
  authorizer: Authorizer;
  client?: string;
}

const doorOf = (db: Database, now: Date, door: ShareLinkDoor | undefined): ShareLinkDoor =>
  door ?? { authorizer: createAuthorizer({ db, clock: () => now }) };

/**
 * The document behind a read link, as a visitor without an account sees it. Given the server's `files`, each
 * section carries download links signed for the link: they serve a file only while the link lives and its visitor
 * sees a section holding it (without `files`, as `documentView` without a signer, there are none).
 */
export async function readSharedDocument(
  db: Database,
  token: string,
  input: { branchName?: string; commitId?: string },
  now: Date,
  files?: FileLinks,
  door?: ShareLinkDoor,
): Promise<DocumentView> {
  const { authorizer, client } = doorOf(db, now, door);
  const link = (await authorizer.principal({ kind: "share", token }, client)).shareLink!;
  const access = await visitorAccess(db, link, link.documentId);
  const holder = { shareLinkId: link.id, principal: "share" } as const;
  const documentId = link.documentId;
  return readDocument(
    db,
    access,
    input,
    files && ((content, commitId) => signedDownloads({ files, now, holder, documentId }, commitId, content)),
  );
}

/** Gives a signed-in member the link's access to its document; returns the document id to open. */
export async function acceptShareLink(
  db: Database,
  userId: string,
  token: string,
  now: Date,
  door?: ShareLinkDoor,
): Promise<{ documentId: string }> {
  const { authorizer, client } = doorOf(db, now, door);
  const link = (await authorizer.principal({ kind: "share", token }, client)).shareLink!;
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

const createShareLinkInput = z.strictObject({
  action: z.literal("create_share_link"),
  documentId: documentIdField,
  permission: z.enum(["read", "edit"]).describe("What the link grants."),
  expiresInDays: z.number().int().min(1).max(3_650).optional().describe("Days valid; default: forever."),
});

const listShareLinksInput = z.strictObject({ action: z.literal("list_share_links"), documentId: documentIdField });

const revokeShareLinkInput = z.strictObject({
  action: z.literal("revoke_share_link"),
  documentId: documentIdField,
  shareLinkId: uuidSchema,
});

/** The input schemas of these actions, in the order agents read them. */
export const shareLinkActionInputs = [createShareLinkInput, listShareLinksInput, revokeShareLinkInput] as const;

const presentShareLink = (link: ShareLinkRow) => ({
  shareLinkId: link.id,
  documentId: link.documentId,
  permission: link.permission,
  createdAt: link.createdAt.toISOString(),
  expiresAt: link.expiresAt?.toISOString() ?? null,
  revokedAt: link.revokedAt?.toISOString() ?? null,
});

async function createShareLink(ctx: ActionContext, input: z.output<typeof createShareLinkInput>) {
  const { document } = await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  const token = newSecretToken();
  const now = ctx.clock();
  const link = await insertShareLink(ctx.db, {
    workspaceId: document.workspaceId,
    documentId: document.id,
    tokenHash: hashSecretToken(token),
    permission: input.permission,
    createdBy: ctx.actor.userId,
    createdAt: now,
    expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : null,
  });
  return { ...presentShareLink(link), path: `/share/${token}` };
}

async function listShareLinksAction(ctx: ActionContext, input: z.output<typeof listShareLinksInput>) {
  await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  return { shareLinks: (await listShareLinks(ctx.db, input.documentId)).map(presentShareLink) };
}

async function revokeShareLinkAction(ctx: ActionContext, input: z.output<typeof revokeShareLinkInput>) {
  await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  const link = await revokeShareLink(ctx.db, input.documentId, input.shareLinkId, ctx.clock());
  if (!link)
    throw notFound(
      "Share link",
      input.shareLinkId,
      "It does not exist on this document or is already revoked; `list_share_links` shows the links.",
    );
  return presentShareLink(link);
}

export const shareLinkHandlers = {
  create_share_link: createShareLink,
  list_share_links: listShareLinksAction,
  revoke_share_link: revokeShareLinkAction,
};
