/**
 * The `upload_url` tool, and the transport-free halves of Quire's file routes.
 *
 * Flow: `upload_url` records a pending upload and returns a signed, one-use
 * URL on Quire itself; the client PUTs the bytes there (`receiveUpload`); a
 * `storage` content block may then name the key. `read` hands out short-lived
 * signed download URLs (`downloadLinks`), which `openDownload` honours only
 * while the user may still read the document.
 */
import { randomUUID } from "node:crypto";
import type { Readable } from "node:stream";
import { z } from "zod";
import type { Database } from "@/db/client";
import { type Block, storageKeysOf } from "@/server/core/blocks";
import { DomainError, isDomainError, notFound } from "@/server/core/errors";
import { isInlineMediaType, mediaTypeEssence, UPLOAD_MEDIA_TYPES, uploadMediaType } from "@/server/core/media-types";
import { assertStorageKey, type ObjectStore, payloadTooLarge } from "@/server/storage/object-store";
import {
  DOWNLOAD_URL_TTL_MS,
  type DownloadHolder,
  type DownloadTarget,
  type FileLinks,
  holderId,
  type LinkCheck,
  UPLOAD_URL_TTL_MS,
} from "@/server/storage/links";
import {
  claimUpload,
  completedUploadOfDocumentWorkspace,
  completeUpload,
  getUpload,
  insertUpload,
  releaseUpload,
} from "@/server/store/uploads";
import { getMembership } from "@/server/store/accounts";
import { CommitGraph } from "@/server/store/commits";
import { loadSections, loadTree } from "@/server/store/objects";
import { type DocumentAccess, openDocument, requireWritingCredential, sectionRules } from "@/server/access/documents";
import type { ActionContext, Actor } from "./context";
import { shareLinkHolderAccess } from "@/server/access/authorize";
import { storageKeysVisibleIn } from "@/server/access/sections";
import { defineTool } from "./tool";

/** The byteSize column is a 4-byte integer. */
export const MAX_STORABLE_BYTES = 2_147_483_647;

const allowedList = UPLOAD_MEDIA_TYPES.map((t) => t.mediaType).join(", ");
/** The accepted types as agents are told them: by file extension (the full media types would cost every session ~600 bytes). */
const allowedExtensions = UPLOAD_MEDIA_TYPES.map((t) => t.extension.slice(1)).join(" ");

export const uploadUrlInput = z.strictObject({
  filename: z
    .string()
    .min(1)
    .max(255)
    .refine((name) => !/[/\\\u0000-\u001f\u007f]/.test(name), "must be a plain file name: no '/', '\\' or control characters")
    .refine((name) => name !== "." && name !== "..", "must be a file name, not '.' or '..'")
    .describe("File name, e.g. report.pdf."),
  mediaType: z
    .string()
    .max(255)
    .refine(
      (type) => uploadMediaType(type) !== undefined,
      `is not an accepted upload type; accepted: ${allowedList} (SVG is refused: convert it to PNG)`,
    )
    .transform(mediaTypeEssence)
    .describe(`The PUT's exact Content-Type; accepted: the types of ${allowedExtensions}.`),
  size: z.number().int().min(1).max(MAX_STORABLE_BYTES).optional().describe("Size in bytes, if known (the PUT must match)."),
});

export const uploadUrlTool = defineTool({
  name: "upload_url",
  description: [
    "A one-use URL to upload a file for a storage content block: PUT the bytes to uploadUrl with the returned headers within the hour,",
    'then use `key` in a block, e.g. {blockType: "image", type: "storage", mediaType, key}.',
  ].join(" "),
  input: uploadUrlInput,
  readOnly: false,
  async handle(ctx: ActionContext, input) {
    const maxBytes = Math.min(ctx.files.maxUploadBytes, MAX_STORABLE_BYTES);
    if (input.size !== undefined && input.size > maxBytes) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `Invalid parameters: size: ${input.size} bytes is over this instance's upload limit of ${maxBytes} bytes.`,
        {
          issues: [{ path: "size", message: `must be at most ${maxBytes}` }],
          maxBytes,
        },
      );
    }
    requireWritingCredential(ctx.actor, "upload files");
    const info = uploadMediaType(input.mediaType)!;
    const now = ctx.clock();
    // Whole seconds: the URL carries its expiry in seconds and the row must agree with it.
    const expiresAt = new Date(Math.floor((now.getTime() + UPLOAD_URL_TTL_MS) / 1000) * 1000);
    // Generated, never derived from the filename: <workspace>/<uuid><extension of the media type>.
    const key = `${ctx.actor.workspaceId}/${randomUUID()}${info.extension}`;
    await insertUpload(ctx.db, {
      key,
      workspaceId: ctx.actor.workspaceId,
      filename: input.filename,
      mediaType: info.mediaType,
      byteSize: input.size ?? null,
      createdBy: ctx.actor.userId,
      createdAt: now,
      expiresAt,
    });
    return {
      uploadUrl: ctx.files.uploadUrl(key, expiresAt),
      key,
      method: "PUT" as const,
      headers: { "content-type": info.mediaType },
      expiresAt: expiresAt.toISOString(),
      maxBytes: input.size ?? maxBytes,
    };
  },
});

/**
 * Signed download URLs for the storage blocks of one section's content, by
 * storage key, valid for 15 minutes from `now`, bound to their holder (a user
 * as person or agent, or a share link), `documentId` and the commit the
 * content was read at. `read` returns them beside the blocks (the blocks
 * themselves stay untouched, so content hashes do not change).
 */
export function signedDownloads(
  links: { files: FileLinks; now: Date; holder: DownloadHolder; documentId: string },
  commitId: string,
  content: readonly Block[],
): Record<string, string> {
  const keys = [...new Set(storageKeysOf(content))];
  if (keys.length === 0) return {};
  const expiresAt = new Date(links.now.getTime() + DOWNLOAD_URL_TTL_MS);
  return Object.fromEntries(
    keys.map((key) => [key, links.files.downloadUrl({ key, documentId: links.documentId, commitId, ...links.holder, expiresAt })]),
  );
}

/** `signedDownloads` for the acting user, as the person or their agent. */
export const downloadLinks = (
  ctx: Pick<ActionContext, "actor" | "clock" | "files">,
  documentId: string,
  commitId: string,
  content: readonly Block[],
): Record<string, string> =>
  signedDownloads(
    { files: ctx.files, now: ctx.clock(), holder: { userId: ctx.actor.userId, principal: ctx.actor.principal }, documentId },
    commitId,
    content,
  );

/** What the file routes need: no actor (a signed link is the credential), but the store and the links. */
export interface FileTransferContext {
  db: Database;
  clock: () => Date;
  files: FileLinks;
  store: ObjectStore;
}

function refuseLink(result: LinkCheck, what: "upload" | "download"): void {
  if (result === "valid") return;
  const again = what === "upload" ? "Call `upload_url` again for a fresh URL." : "Call `read` again for a fresh download URL.";
  if (result === "expired") throw new DomainError("LINK_EXPIRED", `This ${what} URL has expired. ${again}`);
  throw new DomainError(
    "SIGNATURE_INVALID",
    `This ${what} URL is not valid: its signature does not match. Use the URL exactly as Quire returned it. ${again}`,
  );
}

export interface ReceivedUpload {
  key: string;
  filename: string;
  mediaType: string;
  byteSize: number;
  sha256: string;
}

/**
 * Accepts the bytes of a pending upload (the PUT of an `upload_url` URL).
 * Checks in order: key shape, signature and expiry, that the upload exists and
 * is unused, the Content-Type, then the size while streaming. The upload is
 * claimed atomically first, so of two racing PUTs one wins and the other gets
 * UPLOAD_ALREADY_USED; a failed PUT stores nothing and leaves the URL usable.
 */
export async function receiveUpload(
  ctx: FileTransferContext,
  request: {
    key: string;
    expires: string | null;
    signature: string | null;
    contentType: string | undefined;
    contentLength: number | undefined;
    body: Readable;
  },
): Promise<ReceivedUpload> {
  const { key } = request;
  assertStorageKey(key);
  refuseLink(ctx.files.checkUpload({ key, expires: request.expires, signature: request.signature, now: ctx.clock() }), "upload");
  const pending = await getUpload(ctx.db, key);
  if (!pending) throw notFound("Upload", key, "Call `upload_url` to get an upload URL.");
  if (pending.completedAt) {
    throw new DomainError(
      "UPLOAD_ALREADY_USED",
      `Upload ${key} has already received its file; an upload URL works once. Call \`upload_url\` again to upload another file.`,
      { key },
    );
  }
  const sent = request.contentType ? mediaTypeEssence(request.contentType) : "";
  if (sent !== pending.mediaType) {
    throw new DomainError(
      "UNSUPPORTED_MEDIA_TYPE",
      `This upload expects Content-Type ${pending.mediaType} (as requested from \`upload_url\`), not ${sent ? JSON.stringify(sent) : "none"}. Send the headers \`upload_url\` returned.`,
      { expected: pending.mediaType, received: sent || null },
    );
  }
  const declared = pending.byteSize;
  const maxBytes = Math.min(ctx.files.maxUploadBytes, MAX_STORABLE_BYTES, declared ?? Number.POSITIVE_INFINITY);
  if (request.contentLength !== undefined && request.contentLength > maxBytes) throw payloadTooLarge(maxBytes);

  const claimed = await claimUpload(ctx.db, key);
  if (!claimed) {
    throw new DomainError(
      "UPLOAD_ALREADY_USED",
      `Upload ${key} is already being received or has been received; an upload URL works once.`,
      { key },
    );
  }
  let stored = false;
  try {
    const result = await ctx.store.put(key, request.body, { maxBytes, contentType: pending.mediaType });
    stored = true;
    if (declared !== null && result.byteSize !== declared) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `The body has ${result.byteSize} bytes but \`upload_url\` was called with size ${declared}. Send the whole file (or request a new URL with the right size).`,
        { issues: [{ path: "size", message: "body size differs from the declared size" }], declared, received: result.byteSize },
      );
    }
    if (!(await completeUpload(ctx.db, key, { ...result, completedAt: ctx.clock() }))) {
      throw new DomainError("UPLOAD_ALREADY_USED", `Upload ${key} was completed by another request.`, { key });
    }
    return { key, filename: pending.filename, mediaType: pending.mediaType, byteSize: result.byteSize, sha256: result.sha256 };
  } catch (error) {
    if (stored) await ctx.store.delete(key).catch(() => {});
    await releaseUpload(ctx.db, key);
    throw error;
  }
}

export interface OpenedDownload {
  body: Readable;
  byteSize: number;
  mediaType: string;
  filename: string;
  sha256: string | null;
  /** Images and PDF are shown inline; everything else downloads as an attachment. */
  inline: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The link's holder's access to its document now: the user's (as person or agent), or a live share link's
 * visitor's. Null when they have none any more; NOT_FOUND when they may not read the document.
 */
async function holderAccess(db: Database, target: DownloadTarget, now: Date): Promise<DocumentAccess | null> {
  if (target.principal === "share") return shareLinkHolderAccess(db, target.shareLinkId, target.documentId, now);
  const membership = await getMembership(db, target.userId);
  if (!membership) return null;
  // Reading asks only who the person is and whether an agent holds the link, not which agent.
  const actor: Actor = {
    userId: target.userId,
    workspaceId: membership.workspaceId,
    role: membership.role,
    principal: target.principal,
    agent: null,
  };
  return openDocument(db, actor, target.documentId, "read");
}

/**
 * Whether the link's holder may still see a block holding `key` in
 * document `documentId` at commit `commitId`: the document must be readable
 * and some section visible to them at that commit must reference the key.
 */
async function keyVisibleAt(db: Database, target: DownloadTarget, now: Date): Promise<boolean> {
  try {
    const access = await holderAccess(db, target, now);
    if (!access) return false;
    const commit = await new CommitGraph(db, target.documentId).get(target.commitId);
    const rules = await sectionRules(db, access, null);
    const keys = await storageKeysVisibleIn(rules, await loadTree(db, commit.treeHash), (hashes) => loadSections(db, hashes));
    return keys.has(target.key);
  } catch (error) {
    if (isDomainError(error) && error.code === "NOT_FOUND") return false;
    throw error;
  }
}

/**
 * Opens an uploaded file for a signed download URL: the signature binds key,
 * document, commit, holder (user or share link) and principal; the holder
 * (a user as that principal, or the link's visitor while the link lives) must
 * still see a block holding the key in that document at that commit, and the
 * upload must belong to the document's workspace. Anything the holder may not
 * see is NOT_FOUND.
 */
export async function openDownload(
  ctx: FileTransferContext,
  request: {
    key: string;
    documentId: string | null;
    commitId: string | null;
    userId: string | null;
    shareLinkId: string | null;
    principal: string | null;
    expires: string | null;
    signature: string | null;
  },
): Promise<OpenedDownload> {
  const { key } = request;
  assertStorageKey(key);
  const place = { key, documentId: request.documentId ?? "", commitId: request.commitId ?? "" };
  // Anything but "agent" or "share" is signed and checked as "person", so an altered `as` fails the signature.
  const target: DownloadTarget =
    request.principal === "share"
      ? { ...place, shareLinkId: request.shareLinkId ?? "", principal: "share" }
      : { ...place, userId: request.userId ?? "", principal: request.principal === "agent" ? "agent" : "person" };
  refuseLink(ctx.files.checkDownload({ ...target, expires: request.expires, signature: request.signature, now: ctx.clock() }), "download");
  const missing = () => notFound("File", key, "Call `read` again: the file or your access to it is gone.");
  if (!UUID.test(target.documentId) || !UUID.test(target.commitId) || !UUID.test(holderId(target))) throw missing();
  if (!(await keyVisibleAt(ctx.db, target, ctx.clock()))) throw missing();
  const upload = await completedUploadOfDocumentWorkspace(ctx.db, key, target.documentId);
  if (!upload) throw missing();
  const object = await ctx.store.get(key);
  if (!object) {
    console.error(`[quire] upload ${key} is recorded as complete but its object is missing from the store`);
    throw missing();
  }
  return {
    body: object.body,
    byteSize: upload.byteSize ?? object.byteSize,
    mediaType: upload.mediaType,
    filename: upload.filename,
    sha256: upload.sha256,
    inline: isInlineMediaType(upload.mediaType),
  };
}
