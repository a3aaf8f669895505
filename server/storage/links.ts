/**
 * Signed links to Quire's own upload and download routes. A link carries its
 * expiry and an HMAC-SHA256 signature made with a key derived from the
 * instance auth secret, so any instance on the same database can check it and
 * no link can be forged or altered (key, document, commit, holder, principal or expiry).
 *
 *   upload:   <base>/api/uploads/<key>?expires=<unix s>&signature=<sig>
 *   download: <base>/api/files/<key>?document=<id>&commit=<id>&user=<id>&as=<person|agent>&expires=<unix s>&signature=<sig>
 *             <base>/api/files/<key>?document=<id>&commit=<id>&link=<share link id>&as=share&expires=<unix s>&signature=<sig>
 *
 * Pure apart from HMAC: no I/O, no clock (callers pass times in).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

/** How long an upload URL from `upload_url` works. */
export const UPLOAD_URL_TTL_MS = 60 * 60 * 1000;
/** How long a download URL handed out by `read` works. */
export const DOWNLOAD_URL_TTL_MS = 15 * 60 * 1000;

/** A signing key for file links only, derived from the instance auth secret (never used raw). */
export function fileLinkKey(authSecret: string): Buffer {
  return createHmac("sha256", authSecret).update("quire/file-links/v1").digest();
}

const unixSeconds = (at: Date) => Math.floor(at.getTime() / 1000);

function mac(key: Buffer, parts: readonly string[]): string {
  return createHmac("sha256", key).update(parts.join("\n")).digest("base64url");
}

const uploadParts = (key: string, expires: number) => ["upload", key, String(expires)];
/**
 * Whom a download link was handed to: a user, as the person or as their agent (an API token: an agent's link is
 * re-checked under `aiAccess`), or the visitors of a share link (re-checked as the link's visitor, while the link lives).
 */
export type DownloadHolder = { userId: string; principal: "person" | "agent" } | { shareLinkId: string; principal: "share" };

/** What a download link is for: one file, as a block of one document at one commit, for one holder. */
export type DownloadTarget = { key: string; documentId: string; commitId: string } & DownloadHolder;

/** The id of the user or share link a link was handed to. */
export const holderId = (holder: DownloadHolder): string => (holder.principal === "share" ? holder.shareLinkId : holder.userId);

// The principal is signed beside the holder's id, so a user's link and a share link's never stand for each other.
const downloadParts = (target: DownloadTarget, expires: number) => [
  "download/v2",
  target.key,
  target.documentId,
  target.commitId,
  holderId(target),
  target.principal,
  String(expires),
];

const trimBase = (baseUrl: string) => baseUrl.replace(/\/+$/, "");

/** The URL a client PUTs the bytes of upload `key` to, valid until `expiresAt` (rounded down to the second). */
export function signUploadUrl(input: { baseUrl: string; signingKey: Buffer; key: string; expiresAt: Date }): string {
  const expires = unixSeconds(input.expiresAt);
  const query = new URLSearchParams({ expires: String(expires), signature: mac(input.signingKey, uploadParts(input.key, expires)) });
  return `${trimBase(input.baseUrl)}/api/uploads/${input.key}?${query}`;
}

/**
 * The URL from which the holder (a user, or a share link's visitors) may fetch
 * upload `key` as a block of document `documentId` at commit `commitId` until
 * `expiresAt`. The download route re-checks that the holder may still see a
 * block holding the key there before it serves a byte.
 */
export function signDownloadUrl(input: DownloadTarget & { baseUrl: string; signingKey: Buffer; expiresAt: Date }): string {
  const expires = unixSeconds(input.expiresAt);
  const query = new URLSearchParams({
    document: input.documentId,
    commit: input.commitId,
    ...(input.principal === "share" ? { link: input.shareLinkId } : { user: input.userId }),
    as: input.principal,
    expires: String(expires),
    signature: mac(input.signingKey, downloadParts(input, expires)),
  });
  return `${trimBase(input.baseUrl)}/api/files/${input.key}?${query}`;
}

export type LinkCheck = "valid" | "invalid" | "expired";

function check(signingKey: Buffer, parts: readonly string[], expires: string | null, signature: string | null, now: Date): LinkCheck {
  if (!expires || !/^\d{1,12}$/.test(expires) || !signature) return "invalid";
  const expected = Buffer.from(mac(signingKey, parts));
  const given = Buffer.from(signature);
  // Signature first (timing-safe), so an altered expiry reads as a bad signature, not as "expired".
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "invalid";
  return Number(expires) * 1000 <= now.getTime() ? "expired" : "valid";
}

export function checkUploadLink(input: {
  signingKey: Buffer;
  key: string;
  expires: string | null;
  signature: string | null;
  now: Date;
}): LinkCheck {
  return check(input.signingKey, uploadParts(input.key, Number(input.expires)), input.expires, input.signature, input.now);
}

export function checkDownloadLink(
  input: DownloadTarget & { signingKey: Buffer; expires: string | null; signature: string | null; now: Date },
): LinkCheck {
  return check(input.signingKey, downloadParts(input, Number(input.expires)), input.expires, input.signature, input.now);
}

/**
 * What actions get (as `ctx.files`) to hand out file links, without knowing
 * the secret, the host name or HTTP.
 */
export interface FileLinks {
  /** The largest upload accepted, in bytes (QUIRE_MAX_UPLOAD_BYTES). */
  readonly maxUploadBytes: number;
  uploadUrl(key: string, expiresAt: Date): string;
  downloadUrl(input: DownloadTarget & { expiresAt: Date }): string;
  checkUpload(input: { key: string; expires: string | null; signature: string | null; now: Date }): LinkCheck;
  checkDownload(input: DownloadTarget & { expires: string | null; signature: string | null; now: Date }): LinkCheck;
}

export const DEFAULT_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;

/**
 * File links for one instance. `baseUrl` is a function because a server
 * learns its own URL (port 0 → real port) only once it listens.
 */
export function createFileLinks(options: { authSecret: string; baseUrl: string | (() => string); maxUploadBytes?: number }): FileLinks {
  const signingKey = fileLinkKey(options.authSecret);
  const base = typeof options.baseUrl === "function" ? options.baseUrl : () => options.baseUrl as string;
  return {
    maxUploadBytes: options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES,
    uploadUrl: (key, expiresAt) => signUploadUrl({ baseUrl: base(), signingKey, key, expiresAt }),
    downloadUrl: (input) => signDownloadUrl({ baseUrl: base(), signingKey, ...input }),
    checkUpload: (input) => checkUploadLink({ signingKey, ...input }),
    checkDownload: (input) => checkDownloadLink({ signingKey, ...input }),
  };
}
