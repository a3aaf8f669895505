/**
 * Quire's single process: one HTTP server that answers MCP (/api/mcp) and
 * tRPC (/api/trpc) itself and hands every other request to Next.js, which it
 * reaches through the in-process bridge. The live-collaboration WebSocket
 * upgrade joins this server on the same port.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import type { DatabaseHandle } from "@/db/client";
import { type Credential, createAuthorizer } from "@/server/access/authorize";
import type { Actor } from "@/server/access/actor";
import { toolsByName } from "@/server/actions/registry";
import { workUnderWay } from "@/server/actions/tool";
import { acceptShareLink, readSharedDocument } from "@/server/actions/share-links";
import { appRouter, toTrpcError } from "@/server/api/router";
import { addUser, ensureAuthSecret, hasUsers } from "@/server/auth/accounts";
import { createRateLimitGuard } from "@/server/auth/rate-limit-guard";
import { sessionUserId, usesSecureCookies } from "@/server/auth/web-session";
import { installBridge, type QuireBridge } from "@/server/bridge";
import { followAccessChanges } from "@/server/store/access-cache";
import { followHeadMovesForNotifications } from "@/server/actions/notification-events";
import {
  type NotificationEmailOptions,
  type NotificationEmailSender,
  startNotificationEmail,
  unsubscribe,
} from "@/server/actions/notification-email";
import { shareInboxChanges, shareThreadsChanges } from "@/server/collab/inbox-fan-out";
import { startSearchIndexer } from "@/server/store/search-index";
import { DomainError, ERROR_FACES, isDomainError, retryAfterSeconds } from "@/server/core/errors";
import { MAX_REQUEST_BYTES, requestTooLarge } from "@/server/core/limits";
import { createMcpEndpoint } from "./mcp-endpoint";
import {
  answerPreflight,
  bearerChallenge,
  corsHeaders,
  createOAuthEndpoints,
  fetchClientMetadataDocument,
  mcpResource,
  oauthConsentView,
} from "./oauth";
import { createOAuthServer, OAUTH_ACCESS_TOKEN_PREFIX } from "@/server/auth/oauth";
import { connectRedisBus } from "@/server/collab/bus";
import { type LiveDrafts, roomsLiveDrafts } from "@/server/collab/live-drafts";
import { CollabRooms, parseRoomPath, type RoomAddress } from "@/server/collab/rooms";
import { exportNextEnvironment, publicBaseUrl } from "@/server/config";
import { createFileLinks, type FileLinks } from "@/server/storage/links";
import { DEFAULT_OUTBOUND_SETTINGS, type OutboundSettings } from "@/server/outbound/addresses";
import { startWebhookDeliveries, type WebhookDeliveryOptions, type WebhookSender } from "@/server/actions/webhooks";
import type { ObjectStore } from "@/server/storage/object-store";
import { createRateLimitStore } from "@/server/store/rate-limits";
import { settledWithin } from "./deadlines";
import { sendJson } from "./send-json";
import { handleFileRoute, isFileRoute } from "./uploads";
import { accountBridge } from "./account-bridge";
import { addressedHost, csrfRefusal, foreignOriginRefusal, type SiteAddress } from "./csrf";
import { clientAddress, currentClientAddress, sendRateLimited, withClientAddress } from "./client-address";
import packageJson from "../../package.json" with { type: "json" };

export interface ServerOptions {
  database: DatabaseHandle;
  port: number;
  host?: string;
  /** Serve the Next.js app too (needs a build unless dev). */
  next?: { dev: boolean; dir: string } | false;
  authSecret?: string;
  clock?: () => Date;
  /** Where uploaded files go (createObjectStore(config): QUIRE_S3_* or <QUIRE_DATA_DIR>/uploads). */
  objectStore: ObjectStore;
  /** Base of the links Quire hands out (QUIRE_PUBLIC_URL); default: the request's origin, else this server's own URL. */
  publicUrl?: string;
  /** Where sign-in redirects point (config.siteUrl); default: publicUrl, else this server's own URL. */
  siteUrl?: string;
  /** Largest upload in bytes (QUIRE_MAX_UPLOAD_BYTES); default 25 MB. */
  maxUploadBytes?: number;
  /** Believe X-Forwarded-For/-Host/-Proto (QUIRE_TRUST_PROXY); default false. */
  trustProxy?: boolean;
  /** Share live rooms with other Quire processes through this Redis (QUIRE_REDIS_URL); default: rooms are this process's alone. */
  redisUrl?: string;
  /** Email notifications through this mail server (QUIRE_SMTP_URL and friends); default: no email. */
  email?: NotificationEmailOptions;
  /** What outbound requests (webhooks, OAuth client metadata) may reach (config.outbound); default: public https only. */
  outbound?: OutboundSettings;
  /** Origins whose pages may call /api/mcp and the OAuth endpoints (QUIRE_MCP_ALLOWED_ORIGINS); default: none. */
  mcpAllowedOrigins?: readonly string[];
  /** Webhook retry and disable timings; default DEFAULT_WEBHOOK_DELIVERY (tests shorten them). */
  webhookDelivery?: Partial<WebhookDeliveryOptions>;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Signs this server's upload and download links. */
  files: FileLinks;
  /** The live drafts, through this server's rooms (what its action contexts carry). */
  live: LiveDrafts;
  /** This server's live rooms: their counters are for the operator's and the tests' eyes. */
  rooms: CollabRooms;
  /** The email digests' sender, when the server sends email. */
  notificationEmail: NotificationEmailSender | undefined;
  /** The webhook queue's sender (tests run its rounds at once). */
  webhookDeliveries: WebhookSender;
  close(): Promise<void>;
}

/** How long a close waits for requests still being handled after their connections closed. */
const CLOSE_WAITS_FOR_REQUESTS_MS = 5_000;

/**
 * Reads a request body sent without a Content-Length (chunked) into `req.body`, where tRPC's adapter and the MCP
 * endpoint take it. False once it passes MAX_REQUEST_BYTES (the rest is let through unread), or when the client
 * breaks the request off (then no one reads the refusal).
 */
function readUndeclaredBody(req: IncomingMessage & { body?: string }): Promise<boolean> {
  if (req.headers["transfer-encoding"] === undefined) return Promise.resolve(true);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
      else {
        req.off("data", onData).off("end", onEnd);
        resolve(false);
      }
    };
    const onEnd = () => {
      req.body = Buffer.concat(chunks).toString("utf8");
      resolve(true);
    };
    req
      .on("data", onData)
      .on("end", onEnd)
      .once("error", () => resolve(false));
  });
}

/**
 * The origin a request was sent to, for the links made while it is handled: the host it addressed (by the CSRF
 * guard's rule: a trusted proxy's X-Forwarded-Host, else Host) over http, the only scheme Quire serves itself
 * (https is learnt from QUIRE_PUBLIC_URL). Undefined when the request names no usable host.
 */
/**
 * An upgrading socket's error listener. Not a closure: the socket lives as long as its room connection, and an arrow
 * here would keep the upgrade handler's scope (the request with its headers and URL) alive with it.
 */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

function requestOrigin(req: IncomingMessage, site: SiteAddress): string | undefined {
  const host = addressedHost(req, site);
  return host && /^[a-z0-9.\-:[\]]+$/i.test(host) ? `http://${host.toLowerCase()}` : undefined;
}

function bearerToken(req: IncomingMessage): string | null {
  const header = req.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  return match ? match[1]! : null;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { db } = options.database;
  const clock = options.clock ?? (() => new Date());
  const authSecret = await ensureAuthSecret(db, options.authSecret);
  const stopFollowingAccessChanges = await followAccessChanges(options.database);
  // The search index follows this process's head moves as soon as each is committed (server/store/search-index.ts).
  const stopSearchIndexer = startSearchIndexer(db);
  const version = packageJson.version;
  let ownUrl = "";
  const trustProxy = options.trustProxy ?? false;
  const site: SiteAddress = { publicUrl: options.publicUrl, trustProxy };
  // Every request is handled inside the scope of the origin it was sent to: links made for it on any face (MCP,
  // tRPC, the pages' bridge calls) start where its client reached Quire.
  const requestOrigins = new AsyncLocalStorage<string | undefined>();
  /** The base of links handed out: see publicBaseUrl. */
  const baseUrl = () => publicBaseUrl({ configured: options.publicUrl, requestOrigin: requestOrigins.getStore(), ownUrl });
  const files = createFileLinks({ authSecret, baseUrl, maxUploadBytes: options.maxUploadBytes });
  const fileContext = { db, clock, files, store: options.objectStore };
  // Secure cookies when the site is served over https (QUIRE_PUBLIC_URL, or an https NEXTAUTH_URL).
  const secureCookies = usesSecureCookies(options.siteUrl) || usesSecureCookies(options.publicUrl);
  const rateLimitStore = createRateLimitStore(db);
  const limits = createRateLimitGuard(db, rateLimitStore);
  // The one door every face asks (server/access/authorize.ts); a token or share link that does not work counts against
  // the client address it came from.
  const authorizer = createAuthorizer({ db, clock, limits });
  const bus = options.redisUrl ? await connectRedisBus(options.redisUrl) : undefined;
  const rooms = new CollabRooms({ database: options.database, bus, authorize: authorizer });
  await rooms.start();

  // Inbox items that head moves cause (stale approvals, updated requests, mentions in new comments), and inbox and
  // comment-thread changes shared with the other processes when there are any.
  const stopNotifyingHeadMoves = followHeadMovesForNotifications(db, clock);
  const stopSharingInbox = options.redisUrl ? await shareInboxChanges(options.redisUrl) : undefined;
  const stopSharingThreads = options.redisUrl ? await shareThreadsChanges(options.redisUrl) : undefined;
  const notificationEmail = options.email
    ? startNotificationEmail({ db, clock, options: options.email, authSecret, baseUrl: () => baseUrl() })
    : undefined;
  const outbound = options.outbound ?? DEFAULT_OUTBOUND_SETTINGS;
  const webhookDeliveries = startWebhookDeliveries({ db, clock, outbound, options: options.webhookDelivery, email: options.email });

  // Every action context of this server reaches the drafts through its rooms.
  const live = roomsLiveDrafts(db, rooms);

  const oauthServer = createOAuthServer({
    db,
    clock,
    fetchClientMetadata: (url) => fetchClientMetadataDocument(url, outbound),
    allowHttpClientIds: outbound.allowHttp,
  });

  const bridge: QuireBridge = {
    verifyCredentials: (email, password) => limits.signIn(email, password, currentClientAddress()),
    secureCookies,
    authSecret,
    hasUsers: () => hasUsers(db),
    async createOwner(input) {
      const { user } = await addUser(db, input, clock(), { onlyIfFirst: true });
      return { id: user.id, email: user.email, name: user.name };
    },
    ...accountBridge({ db, clock, files, live, baseUrl, outbound }),
    readShared: (token, input) => readSharedDocument(db, token, input, clock(), files, { authorizer, client: currentClientAddress() }),
    acceptShare: (token, userId) => acceptShareLink(db, userId, token, clock(), { authorizer, client: currentClientAddress() }),
    async oauthConsent(params) {
      // The consent page judges the request again (which may fetch a client metadata document): an authorization attempt.
      try {
        await limits.countAttempt("oauthAuthorization", currentClientAddress());
      } catch (error) {
        if (isDomainError(error) && error.code === "RATE_LIMITED") return { kind: "refused", message: error.message };
        throw error;
      }
      return oauthConsentView(oauthServer, params, mcpResource(baseUrl()));
    },
  };
  installBridge(bridge);

  /**
   * The actor a request's credential makes, by the authorizer; null when it is not valid (each face answers
   * UNAUTHENTICATED its own way). A token is checked under the API credential rate limit (throws RATE_LIMITED).
   */
  async function actorOf(req: IncomingMessage, credential: Credential): Promise<Actor | null> {
    try {
      return (await authorizer.principal(credential, clientAddress(req, trustProxy))).actor;
    } catch (error) {
      if (isDomainError(error) && error.code === "UNAUTHENTICATED") return null;
      throw error;
    }
  }

  /** A bearer token makes an agent (on every face); without one, the browser session cookie makes the person. */
  async function actorFor(req: IncomingMessage): Promise<Actor | null> {
    const token = bearerToken(req);
    if (token) return actorOf(req, { kind: "token", token });
    const userId = await sessionUserId(req.headers.cookie, authSecret, { secure: secureCookies });
    return userId ? actorOf(req, { kind: "person", userId }) : null;
  }

  const trpcHandler = createHTTPHandler({
    router: appRouter,
    basePath: "/api/trpc/",
    maxBodySize: MAX_REQUEST_BYTES,
    createContext: async ({ req }) => {
      try {
        return { db, clock, files, live, outbound, baseUrl: baseUrl(), actor: await actorFor(req), callerNow: () => actorFor(req) };
      } catch (error) {
        throw isDomainError(error) ? toTrpcError(error) : error;
      }
    },
    responseMeta({ errors }) {
      const limited = errors.map((e) => e.cause).find((c) => isDomainError(c) && c.code === "RATE_LIMITED");
      return limited ? { headers: { "retry-after": String(retryAfterSeconds(limited as DomainError)) } } : {};
    },
  });

  const mcpAllowedOrigins = options.mcpAllowedOrigins ?? [];
  const mcp = createMcpEndpoint(version, { site, allowedOrigins: mcpAllowedOrigins, redisUrl: options.redisUrl });
  const oauth = createOAuthEndpoints({
    db,
    server: oauthServer,
    site,
    baseUrl,
    sessionUserId: (req) => sessionUserId(req.headers.cookie, authSecret, { secure: secureCookies }),
    allowedOrigins: mcpAllowedOrigins,
    limits,
    clientAddress: (req) => clientAddress(req, trustProxy),
  });

  let nextHandler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | null = null;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?", 1)[0]!;
    if (path === "/api/mcp" || path.startsWith("/api/trpc/")) {
      // A declared length over the limit is refused before a byte of the body is read; a body sent without one is
      // read here up to the limit, so that both are refused alike.
      const declared = req.headers["content-length"];
      const withinLimit = declared === undefined ? await readUndeclaredBody(req) : Number(declared) <= MAX_REQUEST_BYTES;
      if (!withinLimit) {
        const tooLarge = requestTooLarge();
        sendJson(res, ERROR_FACES[tooLarge.code].http, { error: tooLarge.toPayload() }, { connection: "close" });
        return;
      }
    }
    if (path === "/api/mcp") {
      // A browser-based client's preflight carries no credentials: it is answered before any is asked for.
      if (req.method === "OPTIONS") return answerPreflight(req, res, mcpAllowedOrigins);
      const cors = corsHeaders(req, mcpAllowedOrigins);
      for (const [name, value] of Object.entries(cors)) res.setHeader(name, value);
      const token = bearerToken(req);
      // An OAuth access token is good for this endpoint's URL only (RFC 8707); anything else is an API token.
      const credential: Credential | null = !token
        ? null
        : token.startsWith(OAUTH_ACCESS_TOKEN_PREFIX)
          ? { kind: "oauth", token, resource: mcpResource(baseUrl()) }
          : { kind: "token", token };
      let actor: Actor | null = null;
      try {
        actor = credential ? await actorOf(req, credential) : null;
      } catch (error) {
        if (!isDomainError(error) || error.code !== "RATE_LIMITED") throw error;
        sendRateLimited(req, res, error);
        return;
      }
      if (!actor) {
        sendJson(
          res,
          401,
          {
            error: {
              code: "UNAUTHENTICATED",
              message: token
                ? "This bearer token is not valid here (unknown, expired, revoked, or issued for another resource). Refresh it or connect again."
                : "Connect with OAuth (this endpoint's WWW-Authenticate names its metadata), or send Authorization: Bearer <API token> (create one with `npx quire token create`).",
            },
          },
          { "www-authenticate": bearerChallenge(baseUrl(), token ? "invalid_token" : undefined) },
        );
        return;
      }
      await mcp.handle(req, res, { db, actor, clock, files, live });
      return;
    }
    if (oauth.serves(path)) return oauth.handle(req, res, path);
    if (isFileRoute(path)) {
      // A signed URL is the credential: bad or expired signatures count like invalid API tokens.
      const address = clientAddress(req, trustProxy);
      const refused = await limits.refuseIfExhausted("apiCredential", address).catch((error: unknown) => error);
      if (refused) {
        if (!isDomainError(refused)) throw refused;
        sendRateLimited(req, res, refused);
        return;
      }
      return handleFileRoute(req, res, fileContext, {
        async onRefusal(error) {
          if (error.code !== "SIGNATURE_INVALID" && error.code !== "LINK_EXPIRED") return undefined;
          return limits.countFailure("apiCredential", address).then(
            () => undefined,
            (limited: unknown) => (isDomainError(limited) ? limited : undefined),
          );
        },
      });
    }
    if (path.startsWith("/api/trpc/")) {
      // A browser session must come from our own pages; a bearer token cannot be forged cross-site.
      const bySession = !bearerToken(req) && (await sessionUserId(req.headers.cookie, authSecret, { secure: secureCookies })) !== null;
      const refusal = bySession ? csrfRefusal(req, site) : null;
      if (refusal) {
        sendJson(res, ERROR_FACES[refusal.code].http, { error: refusal });
        return;
      }
      trpcHandler(req, res);
      return;
    }
    if (path === "/api/unsubscribe" && req.method === "POST") {
      // The email's unsubscribe link (RFC 8058 one-click, or the unsubscribe page's button): the signed token is the credential.
      const token = new URL(req.url ?? "/", "http://quire.invalid").searchParams.get("token") ?? "";
      // The page's button (a browser) is answered with a page; a mail client's one-click POST with JSON.
      const fromPage = (req.headers.accept ?? "").includes("text/html");
      try {
        await unsubscribe(db, authSecret, token);
      } catch (error) {
        if (!isDomainError(error)) throw error;
        if (fromPage) res.writeHead(303, { location: "/unsubscribe?invalid=1" }).end();
        else sendJson(res, ERROR_FACES[error.code].http, { error: error.toPayload() });
        return;
      }
      if (fromPage) {
        res.writeHead(303, { location: "/unsubscribe?done=1" }).end();
        return;
      }
      sendJson(res, 200, { ok: true, email: "none" });
      return;
    }
    if (path === "/api/health") {
      const web = !options.next ? "disabled" : nextHandler ? "ready" : "starting";
      sendJson(res, 200, { ok: true, version, web, tools: Object.keys(toolsByName) });
      return;
    }
    if (nextHandler) {
      const address = clientAddress(req, trustProxy);
      if (path.startsWith("/share/")) {
        // Share-link guessing: once an address has used up its failures, its share pages answer 429 before any lookup.
        const refused = await limits.refuseIfExhausted("shareLink", address).catch((error: unknown) => error);
        if (refused) {
          if (!isDomainError(refused)) throw refused;
          sendRateLimited(req, res, refused);
          return;
        }
      }
      // The bridge methods the app calls (sign-in, share links) read the client address from this scope.
      const handler = nextHandler;
      await withClientAddress(address, () => handler(req, res));
      return;
    }
    sendJson(res, options.next ? 503 : ERROR_FACES.NOT_FOUND.http, {
      error: options.next
        ? { code: "INTERNAL", message: "The web app is still starting; retry in a moment." }
        : { code: "NOT_FOUND", message: `No route for ${path}.` },
    });
  }

  /**
   * The credential of a live-room upgrade: an API token (`token` or Authorization), a share link (`share`), else the
   * session cookie. It is checked at the door here, where its client address is known (a token under the API
   * credential rate limit; a share link for the room's document by the one share-link rule, a link that does not work
   * counted as on the share page); the room decides branch and section, and the principal again on every access change.
   */
  async function roomCredential(req: IncomingMessage, query: URLSearchParams, address: RoomAddress): Promise<Credential | null> {
    const client = clientAddress(req, trustProxy);
    const token = query.get("token") ?? bearerToken(req);
    if (token) {
      const credential: Credential = { kind: "token", token };
      await authorizer.principal(credential, client);
      return credential;
    }
    const share = query.get("share");
    if (share) {
      const credential: Credential = { kind: "share", token: share };
      await authorizer.document(credential, address.documentId, "read", client);
      return credential;
    }
    const userId = await sessionUserId(req.headers.cookie, authSecret, { secure: secureCookies });
    return userId ? { kind: "person", userId } : null;
  }

  /** Requests being handled: a close waits for them (a page render goes on after its socket is gone), so none meets a closed database. */
  const handling = new Set<Promise<void>>();
  const server = createServer((req, res) => {
    const handled = requestOrigins
      .run(requestOrigin(req, site), () => handle(req, res))
      .catch((error: unknown) => {
        console.error("[quire] request failed", error);
        if (!res.headersSent) sendJson(res, ERROR_FACES.INTERNAL.http, { error: { code: "INTERNAL", message: "Internal error." } });
        else res.end();
      })
      .finally(() => handling.delete(handled));
    handling.add(handled);
  });

  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://quire.invalid");
    const address = parseRoomPath(url.pathname);
    if (!address) {
      // Next.js (dev) upgrades its own paths; every other upgrade is refused.
      if (!url.pathname.startsWith("/_next/")) socket.end("HTTP/1.1 404 Not Found\r\nconnection: close\r\ncontent-length: 0\r\n\r\n");
      return;
    }
    socket.on("error", destroyOnError);
    // A page of another origin of this site (another port, a sibling subdomain) gets the session cookie sent with
    // its upgrade: only the site's own pages may open a room. Clients outside a browser send no Origin.
    const crossOrigin = foreignOriginRefusal(req, site);
    (crossOrigin ? Promise.reject(new DomainError(crossOrigin.code, crossOrigin.message)) : roomCredential(req, url.searchParams, address))
      .then(
        (credential) => rooms.upgrade(req, socket, head, credential, address),
        (error: unknown) => rooms.upgrade(req, socket, head, null, address, isDomainError(error) ? error : undefined),
      )
      .catch((error: unknown) => {
        console.error("[quire] collab upgrade failed", error);
        socket.destroy();
      });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "0.0.0.0", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://localhost:${port}`;
  ownUrl = url;

  if (options.next) {
    // Only a trusted proxy's X-Forwarded-Host/-Proto may decide next-auth's idea of the site's origin.
    exportNextEnvironment({ siteUrl: options.siteUrl ?? options.publicUrl ?? url, trustProxy });
    const { default: createNext } = await import("next");
    const app = createNext({ dev: options.next.dev, dir: options.next.dir, hostname: "localhost", port });
    await app.prepare();
    const handler = app.getRequestHandler();
    nextHandler = (req, res) => handler(req, res);
  }

  return {
    url,
    port,
    files,
    live,
    rooms,
    notificationEmail,
    webhookDeliveries,
    close: async () => {
      await notificationEmail?.stop();
      await webhookDeliveries.stop();
      await stopNotifyingHeadMoves();
      await stopSharingInbox?.();
      await stopSharingThreads?.();
      await rooms.close();
      await mcp.close();
      await bus?.close();
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      // Requests still being handled, and tool runs that outlive theirs (a render whose socket just closed, a
      // subscription's last read), finish before the services they use stop and the caller closes the database;
      // what hangs is not waited for past the deadline.
      await settledWithin(() => [...handling, ...workUnderWay(db)], CLOSE_WAITS_FOR_REQUESTS_MS);
      await stopFollowingAccessChanges();
      await stopSearchIndexer();
      rateLimitStore.close();
    },
  };
}
