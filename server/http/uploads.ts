/**
 * HTTP adapter of the file routes; the logic lives in server/actions/upload-url.ts.
 *
 *   PUT  /api/uploads/<key>?expires=…&signature=…                  body = the file's bytes
 *   GET  /api/files/<key>?document=…&commit=…&user=…|link=…&as=…&expires=…&signature=…  (HEAD too)
 *
 * A signed URL is the credential: no session or token is needed. Errors are
 * JSON { error: { code, message, details? } } with the status of their code.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { PassThrough, type Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type FileTransferContext, openDownload, receiveUpload } from "@/server/actions/upload-url";
import { DomainError, ERROR_FACES, isDomainError, retryAfterSeconds } from "@/server/core/errors";
import { sendJson } from "./send-json";

const UPLOADS = "/api/uploads/";
const FILES = "/api/files/";

/** Whether a request path belongs to the file routes. */
export const isFileRoute = (path: string): boolean => path.startsWith(UPLOADS) || path.startsWith(FILES);

function sendError(req: IncomingMessage, res: ServerResponse, error: DomainError, headers: Record<string, string> = {}): void {
  const status = ERROR_FACES[error.code].http;
  const unread = !req.complete;
  const retry: Record<string, string> = error.code === "RATE_LIMITED" ? { "retry-after": String(retryAfterSeconds(error)) } : {};
  sendJson(
    res,
    status,
    { error: error.toPayload() },
    { "cache-control": "no-store", ...(unread ? { connection: "close" } : {}), ...retry, ...headers },
  );
  if (unread) {
    // Discard what is left of the body so the client reads this answer, but do not wait on a sender that never stops.
    req.unpipe();
    req.resume();
    const timer = setTimeout(() => req.destroy(), 5_000);
    timer.unref();
    req.once("end", () => clearTimeout(timer));
  }
}

/** The request body as a stream the store may destroy without tearing down the connection (so a 413 still reaches the client). */
function detachedBody(req: IncomingMessage): Readable {
  const body = new PassThrough();
  req.on("error", (error) => body.destroy(error));
  req.on("close", () => {
    if (!req.complete) body.destroy(new Error("the client aborted the upload"));
  });
  req.pipe(body);
  return body;
}

/** RFC 6266 Content-Disposition with an ASCII fallback and the UTF-8 name. */
function contentDisposition(kind: "inline" | "attachment", filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * Served files are user content on Quire's own origin: never sniffed, never
 * scripted (CSP sandbox; PDF viewers need the page unsandboxed, but still get
 * no script or network access), never framed by other sites.
 */
function contentSecurityPolicy(mediaType: string): string {
  const base = "default-src 'none'; img-src 'self' data:; media-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'self'";
  return mediaType === "application/pdf" ? `${base}; object-src 'self'` : `${base}; sandbox`;
}

async function handleUpload(req: IncomingMessage, res: ServerResponse, ctx: FileTransferContext, key: string, query: URLSearchParams) {
  if (req.method !== "PUT") {
    sendError(req, res, new DomainError("VALIDATION_FAILED", "Upload URLs take PUT with the file's bytes as the body."), { allow: "PUT" });
    return;
  }
  const lengthHeader = req.headers["content-length"];
  const contentLength = lengthHeader !== undefined && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
  const received = await receiveUpload(ctx, {
    key,
    expires: query.get("expires"),
    signature: query.get("signature"),
    contentType: req.headers["content-type"],
    contentLength,
    body: detachedBody(req),
  });
  sendJson(res, 200, received, { "cache-control": "no-store" });
}

async function handleDownload(req: IncomingMessage, res: ServerResponse, ctx: FileTransferContext, key: string, query: URLSearchParams) {
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendError(req, res, new DomainError("VALIDATION_FAILED", "Download URLs take GET (or HEAD)."), { allow: "GET, HEAD" });
    return;
  }
  const file = await openDownload(ctx, {
    key,
    documentId: query.get("document"),
    commitId: query.get("commit"),
    userId: query.get("user"),
    shareLinkId: query.get("link"),
    principal: query.get("as"),
    expires: query.get("expires"),
    signature: query.get("signature"),
  });
  const expires = Number(query.get("expires"));
  const maxAge = Math.max(0, Math.min(900, Math.floor(expires - ctx.clock().getTime() / 1000)));
  res.writeHead(200, {
    "content-type": file.mediaType,
    "content-length": String(file.byteSize),
    "content-disposition": contentDisposition(file.inline ? "inline" : "attachment", file.filename),
    "x-content-type-options": "nosniff",
    "content-security-policy": contentSecurityPolicy(file.mediaType),
    "referrer-policy": "no-referrer",
    "cache-control": `private, max-age=${maxAge}`,
    ...(file.sha256 ? { etag: `"${file.sha256}"` } : {}),
  });
  if (req.method === "HEAD") {
    file.body.destroy();
    res.end();
    return;
  }
  await pipeline(file.body, res);
}

/**
 * Serves PUT /api/uploads/<key> and GET /api/files/<key>. `onRefusal` sees
 * every refusal before it is sent and may answer with another error instead
 * (the rate limits count refused signatures there).
 */
export async function handleFileRoute(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: FileTransferContext,
  options: { onRefusal?: (error: DomainError) => Promise<DomainError | undefined> } = {},
): Promise<void> {
  // The raw path, not a URL-normalised one: "a/../b" must reach key validation as written, and be refused there.
  const [rawPath = "", rawQuery = ""] = (req.url ?? "").split("?", 2);
  const query = new URLSearchParams(rawQuery);
  try {
    if (rawPath.startsWith(UPLOADS)) await handleUpload(req, res, ctx, rawPath.slice(UPLOADS.length), query);
    else await handleDownload(req, res, ctx, rawPath.slice(FILES.length), query);
  } catch (error) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (!isDomainError(error)) console.error("[quire] file route failed", error);
    const refusal = isDomainError(error) ? error : new DomainError("INTERNAL", "Quire hit an internal error; nothing was stored. Retry.");
    sendError(req, res, (await options.onRefusal?.(refusal)) ?? refusal);
  }
}
