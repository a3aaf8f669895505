/**
 * The in-process door between the Next.js app and the Quire server. Next
 * bundles the app separately from the server's own modules, so the server
 * installs one bridge object on globalThis at start and the app's server
 * components and auth callbacks reach actions and accounts only through it:
 * one database connection, one set of actions, whichever bundle calls.
 */
import type { Role } from "@/db/schema";
import type { ApiTokensInput, apiTokensTool } from "./actions/api-tokens";
import type { WebhooksInput, webhooksTool } from "./actions/webhooks";
import type { DocumentView } from "./actions/read";
import type { ToolInput, ToolName, ToolOutput } from "./actions/registry";
import type { ToolResult } from "./actions/tool";
import type { WorkspaceInput, workspaceTool } from "./actions/workspace";
import type { InviteInfo } from "./actions/invites";

export interface SignedInUser {
  id: string;
  email: string;
  name: string;
}

export interface QuireBridge {
  /** Runs one tool action for a signed-in user (a human, web call). Throws DomainError. */
  callTool<T extends ToolName, const I extends ToolInput<T>>(tool: T, userId: string, input: I): Promise<ToolOutput<T, I>>;
  /**
   * The user if the email/password pair is right, else null. Rate limited per
   * account and client address: throws DomainError RATE_LIMITED instead of
   * checking once the attempts are used up.
   */
  verifyCredentials(email: string, password: string): Promise<SignedInUser | null>;
  /** Whether next-auth must use secure (`__Secure-`, Secure-flagged) cookies: the public URL is https. */
  readonly secureCookies: boolean;
  /** The secret that signs browser sessions (the server's, from NEXTAUTH_SECRET or kept in the database). */
  readonly authSecret: string;
  hasUsers(): Promise<boolean>;
  /** Creates the first (owner) account; DomainError ALREADY_INITIALIZED once any user exists. */
  createOwner(input: { email: string; name: string; password: string }): Promise<SignedInUser>;
  /**
   * Workspace administration (members, roles, invites) for a signed-in user.
   * Invite links and `publicUrl` start with QUIRE_PUBLIC_URL when set, else
   * the origin the page's request was sent to (the server knows it).
   */
  workspace<const I extends WorkspaceInput>(userId: string, input: I): Promise<ToolResult<typeof workspaceTool, I>>;
  /** The signed-in user's own API tokens. */
  apiTokens<const I extends ApiTokensInput>(userId: string, input: I): Promise<ToolResult<typeof apiTokensTool, I>>;
  /** The workspace's webhooks, as the signed-in person (Settings → Webhooks). */
  webhooks<const I extends WebhooksInput>(userId: string, input: I): Promise<ToolResult<typeof webhooksTool, I>>;
  /** What an invite link is and whether it still works (and, given the signed-in user, whether they can use it). */
  inviteInfo(token: string, userId?: string): Promise<InviteInfo>;
  /** A signed-in user joins through an invite. Throws DomainError (INVITE_EXPIRED, ALREADY_MEMBER, …). */
  acceptInvite(token: string, userId: string): Promise<{ role: Role }>;
  /** A visitor creates an account through an invite and joins; sign them in afterwards. */
  acceptInviteAsNewUser(token: string, input: { email: string; name: string; password: string }): Promise<SignedInUser>;
  /** The document behind a read share link, for a visitor without an account. Throws DomainError. */
  readShared(token: string, input: { branchName?: string; commitId?: string }): Promise<DocumentView>;
  /** A signed-in member opens a share link: they get its access to the document, whose id is returned. */
  acceptShare(token: string, userId: string): Promise<{ documentId: string }>;
  /** What the OAuth consent page shows for an authorization request's parameters (checked as the authorization endpoint checks them). */
  oauthConsent(params: Record<string, string | undefined>): Promise<OAuthConsentView>;
}

/** An authorization request, as the consent page presents it. */
export type OAuthConsentView =
  | {
      kind: "consent";
      clientName: string;
      clientId: string;
      /** How the client is known: by its metadata document's URL, or registered dynamically. */
      registration: "dynamic" | "metadata_document";
      /** Where the person is sent back to, with the code. */
      redirectHost: string;
      /** What the client asked for: `write` lets the person allow read only instead. */
      scope: "read" | "write";
    }
  /** The client or its redirect URI is not known good: nothing is sent back to it. */
  | { kind: "refused"; message: string }
  /** The request is refused; the client learns why at this URL. */
  | { kind: "redirect"; location: string };

const BRIDGE_KEY = Symbol.for("quire.bridge");
type BridgeHolder = { [BRIDGE_KEY]?: QuireBridge };

export function installBridge(bridge: QuireBridge): void {
  (globalThis as BridgeHolder)[BRIDGE_KEY] = bridge;
}

/** The bridge, or undefined outside the Quire server (as while `next build` prerenders). */
export const installedBridge = (): QuireBridge | undefined => (globalThis as BridgeHolder)[BRIDGE_KEY];

export function getBridge(): QuireBridge {
  const bridge = (globalThis as BridgeHolder)[BRIDGE_KEY];
  if (!bridge)
    throw new Error("Quire server bridge is not installed: start the app with `npm start` (bin/quire.js serve), not `next` directly.");
  return bridge;
}
