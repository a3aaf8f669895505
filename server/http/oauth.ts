/**
 * The OAuth 2.1 face of Quire's authorization server (server/auth/oauth.ts)
 * over the node HTTP server, and CORS for browser-based MCP clients:
 * - metadata: `/.well-known/oauth-authorization-server` (RFC 8414) and
 *   `/.well-known/oauth-protected-resource[/api/mcp]` (RFC 9728);
 * - `/oauth/authorize` checks the request and sends the person to the consent
 *   page (`app/oauth/consent`), whose form posts the answer to
 *   `/oauth/authorize/decision` (their session, from this site's own page:
 *   the Origin must be the site's);
 * - `/oauth/token`, `/oauth/register`, `/oauth/revoke`: the client's calls,
 *   with RFC 6749's JSON errors.
 *
 * Rate limits (server/auth/rate-limit-guard.ts), per client address: every
 * registration, authorization request (and consent page and answer: the page's
 * count is in server.ts, its bridge) and token request
 * is counted under its own limit, and failed client or grant checks count
 * with invalid API tokens. A refused client call is 429 with the OAuth error
 * JSON `too_many_requests` (the MCP SDK's own handlers' answer), a refused
 * authorization request the coded RATE_LIMITED envelope (or a short page for
 * a browser); both carry Retry-After.
 *
 * CORS: a preflight is answered without credentials; only origins named in
 * QUIRE_MCP_ALLOWED_ORIGINS (or `*`) are allowed, and no response allows
 * credentials (cookies): these endpoints and /api/mcp take bearer tokens and
 * client credentials in the request, never a session.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { InvalidRequestError, OAuthError, ServerError, TooManyRequestsError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { OAuthScope } from "@/db/schema";
import { actorForUser } from "@/server/access/actor";
import type { Database } from "@/db/client";
import { type ClientCredentials, OAUTH_PATHS, type OAuthServer } from "@/server/auth/oauth";
import type { AttemptLimit, RateLimitGuard } from "@/server/auth/rate-limit-guard";
import type { OAuthConsentView } from "@/server/bridge";
import { type DomainError, isDomainError, retryAfterSeconds } from "@/server/core/errors";
import type { OutboundSettings } from "@/server/outbound/addresses";
import { outboundRequest } from "@/server/outbound/request";
import { sendRateLimited } from "./client-address";
import { isOwnOrigin, type SiteAddress } from "./csrf";
import { sendJson } from "./send-json";

/** Bodies of the OAuth endpoints are a few hundred bytes; a registration a few kilobytes. */
const MAX_OAUTH_BODY_BYTES = 64 * 1024;

const MCP_PATH = "/api/mcp";

/** Headers a browser-based MCP client sends and reads (the MCP transport's and OAuth's). */
const ALLOWED_HEADERS = "Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID";
const EXPOSED_HEADERS = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate";

/** The paths CORS applies to: the MCP endpoint and every OAuth endpoint a client calls from script. */
export function isCorsPath(path: string): boolean {
  return (
    path === MCP_PATH ||
    path === OAUTH_PATHS.token ||
    path === OAUTH_PATHS.register ||
    path === OAUTH_PATHS.revoke ||
    path === OAUTH_PATHS.authorizationServerMetadata ||
    path === OAUTH_PATHS.protectedResourceMetadata ||
    path === `${OAUTH_PATHS.protectedResourceMetadata}${MCP_PATH}`
  );
}

/** Whether a web page of `origin` may call the CORS paths: named in QUIRE_MCP_ALLOWED_ORIGINS, or `*` is. */
export function isAllowedCorsOrigin(origin: string, allowed: readonly string[]): boolean {
  return allowed.includes("*") || allowed.includes(origin.toLowerCase().replace(/\/$/, ""));
}

/** The CORS headers of a response to `req` (none when its Origin is absent or not allowed). */
export function corsHeaders(req: IncomingMessage, allowed: readonly string[]): Record<string, string> {
  const origin = req.headers.origin;
  if (!origin || !isAllowedCorsOrigin(origin, allowed)) return {};
  return { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED_HEADERS, vary: "Origin" };
}

/** Answers a CORS preflight: 204, the allowed methods and headers for an allowed origin, nothing else for another. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse, allowed: readonly string[]): void {
  const headers = corsHeaders(req, allowed);
  res.writeHead(204, {
    ...headers,
    ...(headers["access-control-allow-origin"]
      ? {
          "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": "600",
        }
      : {}),
    vary: "Origin",
  });
  res.end();
}

/** The URL of the MCP endpoint's protected resource metadata, for WWW-Authenticate. */
export const resourceMetadataUrl = (base: string): string => `${base}${OAUTH_PATHS.protectedResourceMetadata}${MCP_PATH}`;

/** The MCP endpoint's URL: the resource its tokens are for. */
export const mcpResource = (base: string): string => `${base}${MCP_PATH}`;

/** RFC 6750 §3 / RFC 9728 §5.1: where to find how to get a token, and what scope to ask for. */
export function bearerChallenge(base: string, error?: "invalid_token"): string {
  const parts = [`Bearer resource_metadata="${resourceMetadataUrl(base)}"`, 'scope="read write"'];
  if (error) parts.push(`error="${error}"`);
  return parts.join(", ");
}

function readBody(req: IncomingMessage & { body?: unknown }): Promise<string | null> {
  if (typeof req.body === "string") return Promise.resolve(req.body.length <= MAX_OAUTH_BODY_BYTES ? req.body : null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_OAUTH_BODY_BYTES) chunks.push(chunk);
    });
    req.on("end", () => resolve(size <= MAX_OAUTH_BODY_BYTES ? Buffer.concat(chunks).toString("utf8") : null));
    req.on("error", reject);
  });
}

/** A form body's fields (the first of each name). */
function formFields(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) fields[name] ??= value;
  return fields;
}

const queryFields = (req: IncomingMessage): Record<string, string> => formFields(new URL(req.url ?? "/", "http://quire.invalid").search);

/** RFC 6749 §2.3.1: client_id and client_secret in HTTP Basic (each form-url-encoded), else in the body. */
function clientCredentials(req: IncomingMessage, body: Record<string, string>): ClientCredentials {
  const basic = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? "");
  if (basic) {
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon > 0) {
      const decode = (part: string) => decodeURIComponent(part.replace(/\+/g, " "));
      return { clientId: decode(decoded.slice(0, colon)), clientSecret: decode(decoded.slice(colon + 1)) };
    }
  }
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

/** RFC 6749 §5.2: invalid_client is 401, a server error 500, any other error 400; never cached. */
function sendOAuthError(res: ServerResponse, error: OAuthError, headers: Record<string, string>): void {
  const status =
    error instanceof ServerError ? 500 : error instanceof TooManyRequestsError ? 429 : error.errorCode === "invalid_client" ? 401 : 400;
  sendJson(res, status, error.toResponseObject(), { "cache-control": "no-store", ...headers });
}

/**
 * A refusal at the authorization endpoint, shown to the person's browser instead of redirecting (RFC 6749 §4.1.2.1:
 * the client or its redirect URI is not known good): 400, whatever the error, as no client authenticated here.
 */
function sendAuthorizationRefusal(res: ServerResponse, error: OAuthError): void {
  sendJson(res, 400, error.toResponseObject(), { "cache-control": "no-store" });
}

/** A client metadata document is a few hundred bytes; it is fetched while a person waits at the authorization endpoint. */
const METADATA_DOCUMENT_MAX_BYTES = 64 * 1024;
const METADATA_DOCUMENT_TIMEOUT_MS = 5_000;

/** Fetches a client metadata document through the outbound guard: its JSON, or an error saying why not. */
export async function fetchClientMetadataDocument(url: string, outbound: OutboundSettings): Promise<unknown> {
  const res = await outboundRequest(
    {
      url,
      headers: { accept: "application/json" },
      timeoutMs: METADATA_DOCUMENT_TIMEOUT_MS,
      maxResponseBytes: METADATA_DOCUMENT_MAX_BYTES,
    },
    outbound,
  );
  if (res.status !== 200) throw new Error(`it answered HTTP ${res.status}`);
  try {
    return JSON.parse(res.body.toString("utf8"));
  } catch {
    throw new Error("it is not JSON");
  }
}

/** The consent page's view of an authorization request: the authorization endpoint's own judgement of it. */
export async function oauthConsentView(
  server: OAuthServer,
  params: Record<string, string | undefined>,
  resource: string,
): Promise<OAuthConsentView> {
  const outcome = await server.authorizationRequest(params, resource);
  if (outcome.kind === "refused") return { kind: "refused", message: outcome.error.message };
  if (outcome.kind === "redirect") return outcome;
  const { client, redirectUri, scope } = outcome.request;
  return {
    kind: "consent",
    clientName: client.name,
    clientId: client.clientId,
    registration: client.registration,
    redirectHost: new URL(redirectUri).host || redirectUri,
    scope,
  };
}

export interface OAuthEndpointOptions {
  db: Database;
  server: OAuthServer;
  site: SiteAddress;
  /** The public base URL of the request being handled (publicBaseUrl). */
  baseUrl: () => string;
  /** The browser session's user, from the request's cookie. */
  sessionUserId: (req: IncomingMessage) => Promise<string | null>;
  /** QUIRE_MCP_ALLOWED_ORIGINS. */
  allowedOrigins: readonly string[];
  /** Failed client and grant checks count against the client address, as invalid API tokens do; attempts count too. */
  limits: Pick<RateLimitGuard, "refuseIfExhausted" | "countFailure" | "countAttempt">;
  clientAddress: (req: IncomingMessage) => string;
}

export interface OAuthEndpoints {
  /** Whether `path` is one of these endpoints. */
  serves(path: string): boolean;
  handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function createOAuthEndpoints(options: OAuthEndpointOptions): OAuthEndpoints {
  const { server } = options;
  const paths = new Set<string>([...Object.values(OAUTH_PATHS), `${OAUTH_PATHS.protectedResourceMetadata}${MCP_PATH}`]);
  paths.delete(OAUTH_PATHS.consent);

  /** The RATE_LIMITED error a limit check threw (any other error is thrown on), or null when the request may go on. */
  async function limited(check: Promise<void>): Promise<DomainError | null> {
    try {
      await check;
      return null;
    } catch (error) {
      if (isDomainError(error) && error.code === "RATE_LIMITED") return error;
      throw error;
    }
  }

  /**
   * The client's calls (token, register, revoke): POST with a body, refused while the address has too many failures,
   * and each counted under `attempts` when given.
   */
  async function clientCall(
    req: IncomingMessage,
    res: ServerResponse,
    cors: Record<string, string>,
    attempts: AttemptLimit | null,
    answer: (body: Record<string, string>, text: string) => Promise<{ status: number; body: unknown }>,
  ): Promise<void> {
    if (req.method !== "POST") {
      sendOAuthError(res, new InvalidRequestError("Send this request with POST."), { ...cors, allow: "POST, OPTIONS" });
      return;
    }
    const address = options.clientAddress(req);
    const refused =
      (await limited(options.limits.refuseIfExhausted("apiCredential", address))) ??
      (attempts ? await limited(options.limits.countAttempt(attempts, address)) : null);
    if (refused) {
      sendOAuthError(res, new TooManyRequestsError(refused.message), { ...cors, "retry-after": String(retryAfterSeconds(refused)) });
      return;
    }
    const text = await readBody(req);
    if (text === null) {
      sendOAuthError(res, new InvalidRequestError(`The request body is larger than ${MAX_OAUTH_BODY_BYTES} bytes.`), cors);
      return;
    }
    const isJson = (req.headers["content-type"] ?? "").toLowerCase().startsWith("application/json");
    try {
      const body = isJson ? {} : formFields(text);
      const { status, body: answerBody } = await answer(body, text);
      sendJson(res, status, answerBody, { "cache-control": "no-store", ...cors });
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      if (error.errorCode === "invalid_client" || error.errorCode === "invalid_grant") {
        await options.limits.countFailure("apiCredential", address).catch(() => undefined);
      }
      sendOAuthError(res, error, cors);
    }
  }

  /** The consent form's answer: the signed-in person, from this site's own page. */
  async function decision(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const origin = req.headers.origin;
    if (req.method !== "POST" || !origin || !isOwnOrigin(req, origin, options.site) || req.headers["sec-fetch-site"] === "cross-site") {
      sendOAuthError(res, new InvalidRequestError("The consent answer must come from this site's consent page."), {});
      return;
    }
    if (await refusedAuthorization(req, res)) return;
    const text = await readBody(req);
    const fields = formFields(text ?? "");
    const userId = await options.sessionUserId(req);
    if (!userId || !(await actorForUser(options.db, userId, "person"))) {
      const consent = new URLSearchParams(fields);
      consent.delete("decision");
      res.writeHead(303, { location: `/signin?callbackUrl=${encodeURIComponent(`${OAUTH_PATHS.consent}?${consent}`)}` }).end();
      return;
    }
    const outcome = await server.authorizationRequest(fields, mcpResource(options.baseUrl()));
    if (outcome.kind === "refused") return sendAuthorizationRefusal(res, outcome.error);
    if (outcome.kind === "redirect") {
      res.writeHead(303, { location: outcome.location, "cache-control": "no-store" }).end();
      return;
    }
    const answer = fields.decision;
    const scope: OAuthScope | null = answer === "allow_write" ? "write" : answer === "allow_read" ? "read" : null;
    const location = await server.decide(outcome.request, scope ? { userId, scope } : "deny");
    res.writeHead(303, { location, "cache-control": "no-store" }).end();
  }

  /**
   * Counts an authorization request (it may fetch a client metadata document) and answers 429 when the address has
   * used its limit up: the coded envelope, or a short page for the person's browser. True when it answered.
   */
  async function refusedAuthorization(req: IncomingMessage, res: ServerResponse): Promise<boolean> {
    const refused = await limited(options.limits.countAttempt("oauthAuthorization", options.clientAddress(req)));
    if (refused) sendRateLimited(req, res, refused);
    return refused !== null;
  }

  return {
    serves: (path) => paths.has(path),

    async handle(req, res, path) {
      const cors = isCorsPath(path) ? corsHeaders(req, options.allowedOrigins) : {};
      if (req.method === "OPTIONS" && isCorsPath(path)) return answerPreflight(req, res, options.allowedOrigins);
      const base = options.baseUrl();
      switch (path) {
        case OAUTH_PATHS.authorizationServerMetadata:
          return sendJson(res, 200, server.authorizationServerMetadata(base), cors);
        case OAUTH_PATHS.protectedResourceMetadata:
        case `${OAUTH_PATHS.protectedResourceMetadata}${MCP_PATH}`:
          return sendJson(res, 200, server.protectedResourceMetadata(base), cors);
        case OAUTH_PATHS.authorize: {
          if (req.method !== "GET") return sendOAuthError(res, new InvalidRequestError("Open the authorization URL with GET."), {});
          if (await refusedAuthorization(req, res)) return;
          const params = queryFields(req);
          const outcome = await server.authorizationRequest(params, mcpResource(base));
          if (outcome.kind === "refused") return sendAuthorizationRefusal(res, outcome.error);
          const location = outcome.kind === "redirect" ? outcome.location : `${OAUTH_PATHS.consent}?${new URLSearchParams(params)}`;
          res.writeHead(302, { location, "cache-control": "no-store" }).end();
          return;
        }
        case OAUTH_PATHS.decision:
          return decision(req, res);
        case OAUTH_PATHS.token:
          return clientCall(req, res, cors, "oauthToken", async (body) => ({
            status: 200,
            body: await server.token(body, clientCredentials(req, body), mcpResource(base)),
          }));
        case OAUTH_PATHS.revoke:
          // Revocation only ends access; it is limited by failed client checks alone.
          return clientCall(req, res, cors, null, async (body) => {
            await server.revoke(body, clientCredentials(req, body));
            return { status: 200, body: {} };
          });
        case OAUTH_PATHS.register:
          return clientCall(req, res, cors, "oauthRegistration", async (_, text) => {
            let metadata: unknown;
            try {
              metadata = JSON.parse(text);
            } catch {
              throw new InvalidRequestError("Send the client metadata as a JSON object (Content-Type: application/json).");
            }
            return { status: 201, body: await server.register(metadata) };
          });
      }
    },
  };
}
