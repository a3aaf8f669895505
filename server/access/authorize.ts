/**
 * The one door: a credential becomes a principal, and a principal's access to
 * a document a permission. Every face asks here — tRPC and MCP requests (the
 * actor of a bearer token or a session cookie), the live rooms' upgrade and
 * their re-decisions, the share page and the downloads signed for a link —
 * and none decides on its own. What a principal may do is the policy's
 * (`server/policies/access.ts`, through `documents.ts`).
 *
 * Share links have one rule, here: a token of the shape `newSecretToken`
 * makes, naming a link neither revoked nor expired, for the document asked
 * about. A visitor without an account reads through a read link. An edit link
 * gives such a visitor nothing (PERMISSION_DENIED: sign in, then open the link
 * again): whoever made it meant it for people who edit, and their edits need
 * an account to be theirs, so a visitor is not let in under it at all — not on
 * the share page, not in a live room. Signed-in members who open a link get
 * its permission as a grant (`acceptShareLink`).
 */
import type { Database } from "@/db/client";
import type { RateLimitGuard } from "@/server/auth/rate-limit-guard";
import { hasSecretTokenShape, hashSecretToken } from "@/server/auth/secret-tokens";
import { DomainError } from "@/server/core/errors";
import { findLiveShareLink, findLiveShareLinkById, type ShareLinkRow } from "@/server/store/access";
import type { Tx } from "@/server/store/db";
import { documentNotFound, findDocumentWithGrants, getDocument } from "@/server/store/documents";
import { type Actor, actorForApiToken, actorForOAuthToken, actorForUser } from "./actor";
import { accessWithGrant, admitActor, type DocumentAccess, type Need, requireDocument } from "./documents";

/** Who is asking, as their credential says. */
export type Credential =
  /** A signed-in person (browser session cookie, the CLI). */
  | { kind: "person"; userId: string }
  /** An API token: an agent, on every face. */
  | { kind: "token"; token: string }
  /** An OAuth access token, presented to `resource` (the MCP endpoint's URL): an agent, its client's. */
  | { kind: "oauth"; token: string; resource: string }
  /** A share link: a visitor without an account. */
  | { kind: "share"; token: string };

export interface Authorizer {
  /**
   * The acting principal: an Actor, or null for a share-link visitor (with the
   * live link). Throws UNAUTHENTICATED when the credential is not valid (any
   * more). `client` is the address the credential came from: given, the
   * transport's limits apply to token and share-link checks (RATE_LIMITED
   * before any lookup once the address used up its failures; a failure
   * counts); absent, nothing is counted (a connection admitted before and
   * decided again).
   */
  principal(credential: Credential, client?: string): Promise<{ actor: Actor | null; shareLink: ShareLinkRow | null }>;
  /**
   * The credential's access to a document, checked against `need`: NOT_FOUND
   * worded as for a missing id when it may not see the document (a share link
   * of another document included), PERMISSION_DENIED when it may see but not
   * `need` it.
   */
  document(
    credential: Credential,
    documentId: string,
    need: Need,
    client?: string,
  ): Promise<{ actor: Actor | null; access: DocumentAccess }>;
}

export interface AuthorizerOptions {
  db: Database;
  clock: () => Date;
  /** The transport's rate limits on credential checks (API tokens, share links) per client address; absent: none. */
  limits?: Pick<RateLimitGuard, "refuseIfExhausted" | "countFailure">;
}

const deadShareLink = () =>
  new DomainError(
    "UNAUTHENTICATED",
    "This share link does not work: it was revoked, it expired, or it never existed. Ask the person who shared it for a new one.",
  );

const invalidToken = () =>
  new DomainError("UNAUTHENTICATED", "This API token is not valid: unknown, revoked or expired. Create one with `npx quire token create`.");

const invalidOAuthToken = () =>
  new DomainError(
    "UNAUTHENTICATED",
    "This OAuth access token is not valid here: unknown, expired, revoked, or issued for another resource. Refresh it, or connect the app again.",
  );

/**
 * What a live share link gives a visitor without an account on `documentId`:
 * NOT_FOUND, worded as for a missing id, when the link shares another
 * document; the document read only through a read link, as the `share`
 * principal (which no section override raises); nothing through an edit link
 * (see the header).
 */
export async function visitorAccess(tx: Tx, link: ShareLinkRow, documentId: string): Promise<DocumentAccess> {
  if (link.documentId !== documentId) throw documentNotFound(documentId);
  if (link.permission !== "read") {
    throw new DomainError("PERMISSION_DENIED", "This link grants edit access, which needs an account: sign in, then open the link again.", {
      documentId,
    });
  }
  return accessWithGrant(await getDocument(tx, link.workspaceId, link.documentId), { kind: "share", permission: "read" }, null);
}

/**
 * The access of a download signed for share link `shareLinkId`: its visitor's
 * (`visitorAccess`) while the link lives, null once it is revoked or expired.
 */
export async function shareLinkHolderAccess(tx: Tx, shareLinkId: string, documentId: string, now: Date): Promise<DocumentAccess | null> {
  const link = await findLiveShareLinkById(tx, shareLinkId, now);
  return link ? visitorAccess(tx, link, documentId) : null;
}

export function createAuthorizer(options: AuthorizerOptions): Authorizer {
  const { db, clock, limits } = options;

  /** Runs a check of a token or share link under the limit named, when a client address is given. */
  async function limited<T>(
    limit: "apiCredential" | "shareLink",
    client: string | undefined,
    check: () => Promise<T | null | undefined>,
  ): Promise<T | null | undefined> {
    if (!limits || client === undefined) return check();
    await limits.refuseIfExhausted(limit, client);
    const found = await check();
    if (!found) await limits.countFailure(limit, client);
    return found;
  }

  async function principal(credential: Credential, client?: string): Promise<{ actor: Actor | null; shareLink: ShareLinkRow | null }> {
    switch (credential.kind) {
      case "person": {
        const actor = await actorForUser(db, credential.userId, "person");
        if (!actor) throw new DomainError("UNAUTHENTICATED", "This account belongs to no workspace (any more). Sign in again.");
        return { actor, shareLink: null };
      }
      case "token": {
        const actor = await limited("apiCredential", client, () => actorForApiToken(db, credential.token, clock()));
        if (!actor) throw invalidToken();
        return { actor, shareLink: null };
      }
      case "oauth": {
        const actor = await limited("apiCredential", client, () => actorForOAuthToken(db, credential.token, credential.resource, clock()));
        if (!actor) throw invalidOAuthToken();
        return { actor, shareLink: null };
      }
      case "share": {
        // A token newSecretToken could not have made names no link: refused before any lookup.
        const shareLink = await limited("shareLink", client, () =>
          hasSecretTokenShape(credential.token)
            ? findLiveShareLink(db, hashSecretToken(credential.token), clock())
            : Promise.resolve(undefined),
        );
        if (!shareLink) throw deadShareLink();
        return { actor: null, shareLink };
      }
    }
  }

  return {
    principal,
    async document(credential, documentId, need, client) {
      const { actor, shareLink } = await principal(credential, client);
      if (actor)
        return { actor, access: admitActor(actor, documentId, await findDocumentWithGrants(db, documentId, [actor.userId]), need) };
      const access = await visitorAccess(db, shareLink!, documentId);
      requireDocument(access, need);
      return { actor: null, access };
    },
  };
}
