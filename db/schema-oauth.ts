/**
 * Quire as an OAuth 2.1 authorization server for remote MCP clients
 * (db/migrations/0012_oauth.sql). Every secret (client secrets, authorization
 * codes, access and refresh tokens) is stored only as its sha256 hash, as API
 * tokens are; a grant is one person's consent to one client, and revoking it
 * ends every token issued under it.
 */
import { index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { users } from "./schema";

const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/** An OAuth client: registered dynamically (RFC 7591) or known by the URL of its metadata document. */
export const oauthClients = pgTable("oauth_clients", {
  id: uuid("id").primaryKey().defaultRandom(),
  /** The client_id clients send: a generated id (dynamic registration) or the https URL of the metadata document. */
  clientId: text("client_id").notNull().unique(),
  registration: text("registration", { enum: ["dynamic", "metadata_document"] }).notNull(),
  /** What the consent page and the connected apps list call it: client_name, else the client_id's host. */
  name: text("name").notNull(),
  /** The client's metadata as registered or fetched (redirect_uris, token_endpoint_auth_method, client_uri, ...). */
  metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull(),
  /** sha256 of a confidential client's secret; null for a public client. */
  secretHash: text("secret_hash"),
  secretExpiresAt: at("secret_expires_at"),
  createdAt: at("created_at").notNull().defaultNow(),
  /** When a metadata document was last fetched (it is fetched again once stale). */
  fetchedAt: at("fetched_at"),
});

/** One person's consent to one client, for one resource and scope; every code and token is issued under one. */
export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    clientId: uuid("client_id")
      .notNull()
      .references(() => oauthClients.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    /** `read`: the client reads only; `write`: reads and writes, as an agent capped by aiAccess. */
    scope: text("scope", { enum: ["read", "write"] }).notNull(),
    /** The resource (RFC 8707) its tokens are for: the MCP endpoint's URL. */
    resource: text("resource").notNull(),
    createdAt: at("created_at").notNull().defaultNow(),
    lastUsedAt: at("last_used_at"),
    revokedAt: at("revoked_at"),
  },
  (t) => [index("oauth_grants_user_idx").on(t.userId, t.createdAt)],
);

/** An authorization code: used once, within minutes, by the client that asked, with the PKCE verifier of its challenge. */
export const oauthCodes = pgTable("oauth_codes", {
  codeHash: text("code_hash").primaryKey(),
  grantId: uuid("grant_id")
    .notNull()
    .references(() => oauthGrants.id),
  /** The S256 PKCE challenge (base64url of the verifier's sha256). */
  codeChallenge: text("code_challenge").notNull(),
  redirectUri: text("redirect_uri").notNull(),
  expiresAt: at("expires_at").notNull(),
  usedAt: at("used_at"),
});

/** Access tokens (short-lived) and refresh tokens (rotated on every use; a rotated one used again revokes the grant). */
export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    grantId: uuid("grant_id")
      .notNull()
      .references(() => oauthGrants.id),
    kind: text("kind", { enum: ["access", "refresh"] }).notNull(),
    /** The scope this token carries: the grant's, or less when a refresh asked for less. */
    scope: text("scope", { enum: ["read", "write"] }).notNull(),
    createdAt: at("created_at").notNull().defaultNow(),
    expiresAt: at("expires_at").notNull(),
    /** A refresh token's rotation: set when it was exchanged for a new pair. */
    rotatedAt: at("rotated_at"),
  },
  (t) => [index("oauth_tokens_grant_idx").on(t.grantId)],
);

export type OAuthClientRow = typeof oauthClients.$inferSelect;
export type OAuthGrantRow = typeof oauthGrants.$inferSelect;
export type OAuthScope = OAuthGrantRow["scope"];
