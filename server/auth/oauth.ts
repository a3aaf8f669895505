/**
 * Quire as its own OAuth 2.1 authorization server for remote MCP clients, as
 * the MCP authorization spec describes: authorization code with PKCE (S256
 * only), clients known by a Client ID Metadata Document (the client_id is the
 * https URL of its JSON) or registered dynamically (RFC 7591), tokens bound to
 * the MCP endpoint (RFC 8707 `resource`), short-lived access tokens with
 * refresh tokens rotated on every use (a rotated one used again revokes the
 * grant), revocation (RFC 7009).
 *
 * The wire shapes are the MCP SDK's (its zod schemas and OAuth error classes);
 * every secret is `newSecretToken`'s, stored only as its hash. Transport-free:
 * `server/http/oauth.ts` serves it.
 */
import { createHash } from "node:crypto";
import {
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  UnsupportedGrantTypeError,
  UnsupportedResponseTypeError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { redirectUriMatches } from "@modelcontextprotocol/sdk/server/auth/handlers/authorize.js";
import {
  type OAuthClientInformationFull,
  type OAuthClientMetadata,
  OAuthClientMetadataSchema,
  type OAuthMetadata,
  type OAuthProtectedResourceMetadata,
  OAuthTokenRevocationRequestSchema,
  type OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { z } from "zod";
import type { Database } from "@/db/client";
import type { OAuthClientRow, OAuthScope } from "@/db/schema";
import {
  findOAuthClient,
  grantOfToken,
  insertGrantWithCode,
  insertTokens,
  revokeGrant,
  rotateRefreshToken,
  saveOAuthClient,
  takeCode,
} from "@/server/store/oauth";
import { hasSecretTokenShape, hashSecretToken, newSecretToken } from "./secret-tokens";

export const OAUTH_ACCESS_TOKEN_PREFIX = "qoa_";
const REFRESH_TOKEN_PREFIX = "qor_";
const CODE_PREFIX = "qoc_";
const CLIENT_SECRET_PREFIX = "qcs_";

/** An access token lives an hour: a leaked one is short-lived; the refresh token, rotated on use, keeps the client connected. */
export const ACCESS_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
/** RFC 6749 §4.1.2 recommends at most ten minutes. */
const CODE_SECONDS = 300;
/** A metadata document is fetched again once this old, so a client's new redirect URIs or name reach Quire. */
const METADATA_DOCUMENT_MAX_AGE_MS = 3600_000;
const CLIENT_SECRET_SECONDS = 90 * 24 * 3600;

/** The scopes Quire offers: `write` includes reading. */
export const OAUTH_SCOPES = ["read", "write"] as const;

/** The scope string a grant's scope is sent as. */
export const scopeString = (scope: OAuthScope): string => (scope === "write" ? "read write" : "read");

/** The endpoints' paths on the site (the metadata gives them as URLs on the public base). */
export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  decision: "/oauth/authorize/decision",
  consent: "/oauth/consent",
  token: "/oauth/token",
  register: "/oauth/register",
  revoke: "/oauth/revoke",
  authorizationServerMetadata: "/.well-known/oauth-authorization-server",
  protectedResourceMetadata: "/.well-known/oauth-protected-resource",
} as const;

/** Where a client's metadata document comes from: the outbound guard's fetch of a JSON document. */
export type FetchClientMetadata = (url: string) => Promise<unknown>;

export interface OAuthServerOptions {
  db: Database;
  clock: () => Date;
  /** Absent: clients known by a metadata document are refused (only registered clients). */
  fetchClientMetadata?: FetchClientMetadata;
  /** Accept http:// client metadata URLs (development and tests); otherwise https only. */
  allowHttpClientIds?: boolean;
}

/** An authorization request whose client and redirect URI are known good: errors from here on go back to the client. */
export interface AuthorizationRequest {
  client: OAuthClientRow;
  redirectUri: string;
  state: string | undefined;
  scope: OAuthScope;
  codeChallenge: string;
  resource: string;
}

/** What the authorization endpoint makes of a request: a direct refusal (the client or its redirect URI is not known good), a refusal to send back, or the request. */
export type AuthorizationOutcome =
  | { kind: "refused"; error: InvalidRequestError | InvalidClientError }
  | { kind: "redirect"; location: string }
  | { kind: "request"; request: AuthorizationRequest };

/** Credentials a client presents at the token and revocation endpoints (body, or HTTP Basic). */
export interface ClientCredentials {
  clientId: string | undefined;
  clientSecret: string | undefined;
}

const s256 = (verifier: string): string => createHash("sha256").update(verifier).digest("base64url");

/** RFC 7636 §4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is a sha256 in base64url: 43 characters. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

const authorizationParams = z.object({
  response_type: z.string().optional(),
  code_challenge: z.string().optional(),
  code_challenge_method: z.string().optional(),
  scope: z.string().optional(),
  state: z.string().optional(),
  resource: z.string().optional(),
});

/** The one scope a request's scope string asks for: `write` if named, else `read`; absent, `write` (the person may allow read only). */
function requestedScope(scope: string | undefined): OAuthScope {
  if (scope === undefined || scope.trim() === "") return "write";
  const names = scope.split(" ").filter(Boolean);
  const known = names.filter((name): name is OAuthScope => (OAUTH_SCOPES as readonly string[]).includes(name));
  if (known.length === 0)
    throw new InvalidScopeError(`Quire offers the scopes "read" and "write" (which includes read), not ${JSON.stringify(scope)}.`);
  return known.includes("write") ? "write" : "read";
}

/** The name people see for a client: its client_name, else the host of its client_id or client_uri. */
function clientDisplayName(clientId: string, metadata: OAuthClientMetadata): string {
  const named = metadata.client_name?.trim();
  if (named) return named.slice(0, 100);
  for (const candidate of [clientId, metadata.client_uri]) {
    if (candidate && URL.canParse(candidate)) return new URL(candidate).host;
  }
  return "Unnamed client";
}

/** The client as the SDK's types describe it (what registration answers). */
export function clientInformation(row: OAuthClientRow): OAuthClientInformationFull {
  return {
    ...(row.metadata as OAuthClientMetadata),
    client_id: row.clientId,
    client_id_issued_at: Math.floor(row.createdAt.getTime() / 1000),
  };
}

const redirectUrisOf = (row: OAuthClientRow): string[] => (row.metadata as OAuthClientMetadata).redirect_uris ?? [];

/** Only what the authorization code flow needs, in every registration and metadata document. */
function checkClientMetadata(metadata: OAuthClientMetadata): void {
  if (metadata.redirect_uris.length === 0) throw new InvalidClientMetadataError("redirect_uris must name at least one redirect URI.");
  for (const uri of metadata.redirect_uris) {
    const url = new URL(uri);
    if (url.hash) throw new InvalidClientMetadataError(`A redirect URI may not have a fragment: ${uri}`);
    if (url.protocol === "javascript:" || url.protocol === "data:") throw new InvalidClientMetadataError(`Not a redirect URI: ${uri}`);
  }
  const grants = metadata.grant_types ?? ["authorization_code"];
  if (!grants.includes("authorization_code") || grants.some((g) => g !== "authorization_code" && g !== "refresh_token")) {
    throw new InvalidClientMetadataError('Quire offers the grant types "authorization_code" and "refresh_token".');
  }
  if (metadata.response_types?.some((r) => r !== "code")) {
    throw new InvalidClientMetadataError('Quire offers the response type "code" only.');
  }
}

export interface OAuthServer {
  /** RFC 8414 metadata of the authorization server at `base` (the public base URL). */
  authorizationServerMetadata(base: string): OAuthMetadata;
  /** RFC 9728 metadata of the MCP endpoint at `base`. */
  protectedResourceMetadata(base: string): OAuthProtectedResourceMetadata;
  /** RFC 7591: registers a client from its metadata (the request body). */
  register(body: unknown): Promise<OAuthClientInformationFull>;
  /** The authorization endpoint's judgement of a request's parameters, for the resource `resource`. */
  authorizationRequest(params: Record<string, string | undefined>, resource: string): Promise<AuthorizationOutcome>;
  /** The person's answer: the redirect that carries a code (allowed, with the scope they allowed) or access_denied. */
  decide(request: AuthorizationRequest, decision: { userId: string; scope: OAuthScope } | "deny"): Promise<string>;
  /** The token endpoint: `authorization_code` and `refresh_token` grants for the resource `resource`. */
  token(body: Record<string, string | undefined>, credentials: ClientCredentials, resource: string): Promise<OAuthTokens>;
  /** RFC 7009: revokes the grant the token (access or refresh) was issued under; an unknown token is not an error. */
  revoke(body: Record<string, string | undefined>, credentials: ClientCredentials): Promise<void>;
}

export function createOAuthServer(options: OAuthServerOptions): OAuthServer {
  const { db, clock } = options;

  function isMetadataDocumentUrl(clientId: string): boolean {
    if (!URL.canParse(clientId)) return false;
    const url = new URL(clientId);
    const scheme = url.protocol === "https:" || (options.allowHttpClientIds === true && url.protocol === "http:");
    return scheme && url.pathname !== "/" && !url.hash;
  }

  /** A metadata document fetched (again) and remembered: its client_id must be its own URL, and it has no secret. */
  async function fetchMetadataClient(clientId: string): Promise<OAuthClientRow> {
    let document: unknown;
    if (!options.fetchClientMetadata)
      throw new InvalidClientError("This server fetches no client metadata documents: register the client.");
    try {
      document = await options.fetchClientMetadata(clientId);
    } catch (error) {
      throw new InvalidClientError(`Could not fetch the client metadata document at ${clientId}: ${(error as Error).message}`);
    }
    const parsed = OAuthClientMetadataSchema.extend({ client_id: z.string() }).safeParse(document);
    if (!parsed.success) throw new InvalidClientError(`The client metadata document at ${clientId} is not valid: ${parsed.error.message}`);
    if (parsed.data.client_id !== clientId) {
      throw new InvalidClientError(`The client metadata document at ${clientId} names another client_id (${parsed.data.client_id}).`);
    }
    const method = parsed.data.token_endpoint_auth_method ?? "none";
    if (method !== "none") {
      throw new InvalidClientError(
        `A client known by its metadata document authenticates with "none" here, not ${JSON.stringify(method)}.`,
      );
    }
    const { client_id: _, ...metadata } = parsed.data;
    try {
      checkClientMetadata(metadata);
    } catch (error) {
      throw new InvalidClientError((error as Error).message);
    }
    return saveOAuthClient(db, {
      clientId,
      registration: "metadata_document",
      name: clientDisplayName(clientId, metadata),
      metadata: { ...metadata, token_endpoint_auth_method: "none" },
      fetchedAt: clock(),
    });
  }

  /** The client a client_id names: a registered one, or one known by its metadata document (fetched when unknown or stale). */
  async function findClient(clientId: string): Promise<OAuthClientRow> {
    const known = await findOAuthClient(db, clientId);
    if (known?.registration === "dynamic") return known;
    if (!isMetadataDocumentUrl(clientId))
      throw new InvalidClientError("Unknown client_id: register the client first, or use the https URL of its metadata document.");
    if (known?.fetchedAt && clock().getTime() - known.fetchedAt.getTime() < METADATA_DOCUMENT_MAX_AGE_MS) return known;
    return fetchMetadataClient(clientId);
  }

  /** The client a token or revocation request comes from, authenticated by its secret when it has one. */
  async function authenticateClient(credentials: ClientCredentials): Promise<OAuthClientRow> {
    if (!credentials.clientId) throw new InvalidClientError("client_id is required.");
    const client = await findClient(credentials.clientId);
    if (client.secretHash) {
      if (!credentials.clientSecret || hashSecretToken(credentials.clientSecret) !== client.secretHash) {
        throw new InvalidClientError("The client secret is missing or wrong.");
      }
      if (client.secretExpiresAt && client.secretExpiresAt.getTime() <= clock().getTime()) {
        throw new InvalidClientError("The client secret has expired: register the client again.");
      }
    }
    return client;
  }

  /** A resource parameter must name this MCP endpoint (RFC 8707): tokens are for nothing else. */
  function checkResource(requested: string | undefined, resource: string): void {
    if (requested !== undefined && requested.replace(/\/$/, "") !== resource) {
      throw new InvalidTargetError(`This server issues tokens for ${resource} only, not ${requested}.`);
    }
  }

  async function issueTokens(grantId: string, scope: OAuthScope): Promise<OAuthTokens> {
    const now = clock();
    const accessToken = newSecretToken(OAUTH_ACCESS_TOKEN_PREFIX);
    const refreshToken = newSecretToken(REFRESH_TOKEN_PREFIX);
    await insertTokens(db, grantId, [
      {
        tokenHash: hashSecretToken(accessToken),
        kind: "access",
        scope,
        createdAt: now,
        expiresAt: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000),
      },
      {
        tokenHash: hashSecretToken(refreshToken),
        kind: "refresh",
        scope,
        createdAt: now,
        expiresAt: new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000),
      },
    ]);
    return {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: ACCESS_TOKEN_SECONDS,
      refresh_token: refreshToken,
      scope: scopeString(scope),
    };
  }

  async function exchangeCode(client: OAuthClientRow, body: Record<string, string | undefined>, resource: string): Promise<OAuthTokens> {
    const { code, code_verifier: verifier, redirect_uri: redirectUri } = body;
    if (!code) throw new InvalidRequestError("code is required.");
    if (!verifier) throw new InvalidRequestError("code_verifier is required: Quire accepts only PKCE (S256) authorization codes.");
    if (!hasSecretTokenShape(code, CODE_PREFIX)) throw new InvalidGrantError("The authorization code is not valid.");
    const now = clock();
    const taken = await takeCode(db, hashSecretToken(code), now);
    if (taken.kind === "reused") {
      // A code used twice was copied: whatever it gave the first time is no longer trusted (RFC 6749 §4.1.2).
      await revokeGrant(db, taken.grantId, now);
      throw new InvalidGrantError("The authorization code was already used; the tokens issued for it are revoked.");
    }
    if (taken.kind === "unknown") throw new InvalidGrantError("The authorization code is not valid.");
    const { grant } = taken;
    if (grant.clientId !== client.id) throw new InvalidGrantError("The authorization code was issued to another client.");
    if (taken.expiresAt.getTime() <= now.getTime()) throw new InvalidGrantError("The authorization code has expired.");
    if (redirectUri !== undefined && redirectUri !== taken.redirectUri)
      throw new InvalidGrantError("redirect_uri differs from the authorization request's.");
    if (!CODE_VERIFIER.test(verifier) || s256(verifier) !== taken.codeChallenge) {
      throw new InvalidGrantError("code_verifier does not match the code challenge.");
    }
    checkResource(body.resource, grant.resource);
    if (grant.resource !== resource) throw new InvalidTargetError(`The authorization code was issued for ${grant.resource}.`);
    if (grant.revokedAt) throw new InvalidGrantError("The authorization was revoked.");
    return issueTokens(grant.id, grant.scope);
  }

  async function refresh(client: OAuthClientRow, body: Record<string, string | undefined>, resource: string): Promise<OAuthTokens> {
    const token = body.refresh_token;
    if (!token) throw new InvalidRequestError("refresh_token is required.");
    if (!hasSecretTokenShape(token, REFRESH_TOKEN_PREFIX)) throw new InvalidGrantError("The refresh token is not valid.");
    const now = clock();
    const rotated = await rotateRefreshToken(db, hashSecretToken(token), now);
    if (rotated.kind === "reused") {
      // A rotated refresh token used again: one of its two holders is not the client (OAuth 2.1 §4.3.1).
      await revokeGrant(db, rotated.grantId, now);
      throw new InvalidGrantError("The refresh token was already used; this authorization is revoked. Connect the app again.");
    }
    if (rotated.kind === "unknown") throw new InvalidGrantError("The refresh token is not valid.");
    const { grant } = rotated;
    if (grant.clientId !== client.id) throw new InvalidGrantError("The refresh token was issued to another client.");
    if (grant.revokedAt) throw new InvalidGrantError("The authorization was revoked. Connect the app again.");
    if (rotated.expiresAt.getTime() <= now.getTime()) throw new InvalidGrantError("The refresh token has expired. Connect the app again.");
    checkResource(body.resource, grant.resource);
    if (grant.resource !== resource) throw new InvalidTargetError(`The refresh token was issued for ${grant.resource}.`);
    // A refresh may narrow the scope, never widen it.
    const asked = body.scope === undefined ? rotated.scope : requestedScope(body.scope);
    if (asked === "write" && rotated.scope === "read") throw new InvalidScopeError("This authorization allows reading only.");
    return issueTokens(grant.id, asked);
  }

  return {
    authorizationServerMetadata(base) {
      return {
        issuer: base,
        authorization_endpoint: `${base}${OAUTH_PATHS.authorize}`,
        token_endpoint: `${base}${OAUTH_PATHS.token}`,
        registration_endpoint: `${base}${OAUTH_PATHS.register}`,
        revocation_endpoint: `${base}${OAUTH_PATHS.revoke}`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
        revocation_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
        scopes_supported: [...OAUTH_SCOPES],
        client_id_metadata_document_supported: true,
        service_documentation: `${base}/settings/tokens`,
      };
    },

    protectedResourceMetadata(base) {
      return {
        resource: `${base}/api/mcp`,
        authorization_servers: [base],
        scopes_supported: [...OAUTH_SCOPES],
        bearer_methods_supported: ["header"],
        resource_name: "Quire",
      };
    },

    async register(body) {
      const now = clock();
      const parsed = OAuthClientMetadataSchema.safeParse(body);
      if (!parsed.success) throw new InvalidClientMetadataError(parsed.error.message);
      const metadata = parsed.data;
      checkClientMetadata(metadata);
      const isPublic = metadata.token_endpoint_auth_method === "none";
      const method = isPublic
        ? "none"
        : metadata.token_endpoint_auth_method === "client_secret_basic"
          ? "client_secret_basic"
          : "client_secret_post";
      const secret = isPublic ? undefined : newSecretToken(CLIENT_SECRET_PREFIX);
      const clientId = crypto.randomUUID();
      const secretExpiresAt = secret ? new Date(now.getTime() + CLIENT_SECRET_SECONDS * 1000) : null;
      const stored = {
        ...metadata,
        token_endpoint_auth_method: method,
        grant_types: metadata.grant_types ?? ["authorization_code", "refresh_token"],
      };
      const row = await saveOAuthClient(db, {
        clientId,
        registration: "dynamic",
        name: clientDisplayName(clientId, metadata),
        metadata: stored,
        secretHash: secret ? hashSecretToken(secret) : null,
        secretExpiresAt,
      });
      return {
        ...clientInformation(row),
        ...(secret ? { client_secret: secret, client_secret_expires_at: Math.floor(secretExpiresAt!.getTime() / 1000) } : {}),
      };
    },

    async authorizationRequest(params, resource) {
      // Until the client and its redirect URI are known good, a refusal is shown here, never sent to a redirect URI.
      let client: OAuthClientRow;
      let redirectUri: string;
      try {
        if (!params.client_id) throw new InvalidRequestError("client_id is required.");
        client = await findClient(params.client_id);
        const registered = redirectUrisOf(client);
        const asked = params.redirect_uri;
        if (asked !== undefined) {
          if (!registered.some((uri) => redirectUriMatches(asked, uri)))
            throw new InvalidRequestError(`redirect_uri ${asked} is not registered for this client.`);
          redirectUri = asked;
        } else if (registered.length === 1) redirectUri = registered[0]!;
        else throw new InvalidRequestError("redirect_uri is required: the client registered several.");
      } catch (error) {
        if (error instanceof InvalidRequestError || error instanceof InvalidClientError) return { kind: "refused", error };
        throw error;
      }
      const parsed = authorizationParams.parse(params);
      const refuse = (error: { errorCode: string; message: string }) => {
        const location = new URL(redirectUri);
        location.searchParams.set("error", error.errorCode);
        location.searchParams.set("error_description", error.message);
        if (parsed.state !== undefined) location.searchParams.set("state", parsed.state);
        return { kind: "redirect" as const, location: location.href };
      };
      try {
        if (parsed.response_type !== "code") throw new UnsupportedResponseTypeError('response_type must be "code".');
        if (!parsed.code_challenge) throw new InvalidRequestError("code_challenge is required: Quire accepts only PKCE with S256.");
        if (parsed.code_challenge_method !== "S256")
          throw new InvalidRequestError('code_challenge_method must be "S256" (plain is refused).');
        if (!S256_CHALLENGE.test(parsed.code_challenge))
          throw new InvalidRequestError("code_challenge is not an S256 challenge (43 base64url characters).");
        const scope = requestedScope(parsed.scope);
        checkResource(parsed.resource, resource);
        return {
          kind: "request",
          request: { client, redirectUri, state: parsed.state, scope, codeChallenge: parsed.code_challenge, resource },
        };
      } catch (error) {
        if (
          error instanceof InvalidRequestError ||
          error instanceof UnsupportedResponseTypeError ||
          error instanceof InvalidScopeError ||
          error instanceof InvalidTargetError
        ) {
          return refuse(error);
        }
        throw error;
      }
    },

    async decide(request, decision) {
      const location = new URL(request.redirectUri);
      if (decision === "deny") {
        location.searchParams.set("error", "access_denied");
        location.searchParams.set("error_description", "The person declined to connect this app.");
      } else {
        const now = clock();
        const code = newSecretToken(CODE_PREFIX);
        // The person may allow less than was asked (read only), never more.
        const scope: OAuthScope = request.scope === "read" ? "read" : decision.scope;
        await insertGrantWithCode(
          db,
          { clientRowId: request.client.id, userId: decision.userId, scope, resource: request.resource, now },
          {
            codeHash: hashSecretToken(code),
            codeChallenge: request.codeChallenge,
            redirectUri: request.redirectUri,
            expiresAt: new Date(now.getTime() + CODE_SECONDS * 1000),
          },
        );
        location.searchParams.set("code", code);
      }
      if (request.state !== undefined) location.searchParams.set("state", request.state);
      return location.href;
    },

    async token(body, credentials, resource) {
      const client = await authenticateClient(credentials);
      switch (body.grant_type) {
        case "authorization_code":
          return exchangeCode(client, body, resource);
        case "refresh_token":
          return refresh(client, body, resource);
        case undefined:
          throw new InvalidRequestError("grant_type is required.");
        default:
          throw new UnsupportedGrantTypeError('Quire offers the grant types "authorization_code" and "refresh_token".');
      }
    },

    async revoke(body, credentials) {
      const client = await authenticateClient(credentials);
      const parsed = OAuthTokenRevocationRequestSchema.safeParse(body);
      if (!parsed.success) throw new InvalidRequestError("token is required.");
      const grant = await grantOfToken(db, hashSecretToken(parsed.data.token));
      // RFC 7009 §2.2: an unknown token, or another client's, is answered as revoked, telling nothing.
      if (grant && grant.clientId === client.id) await revokeGrant(db, grant.id, clock());
    },
  };
}
