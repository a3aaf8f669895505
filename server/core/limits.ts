/**
 * The one bound on a request body, on every face (MCP, tRPC). It is the MCP
 * SDK's own limit (DEFAULT_MAX_REQUEST_BODY_SIZE), so both faces refuse the
 * same bodies; the largest values the schemas advertise (a text block, a
 * base64 image) fit inside it with room for the rest of the call.
 */
import { DomainError } from "./errors";

export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

export const MAX_REQUEST_DESCRIPTION = "4 MiB";

/**
 * The largest message a live connection may send (a Yjs update or presence):
 * the request limit of the other faces, so a paste the sections tool takes
 * fits in one update. A client past it is closed with 1009 (Message Too Big).
 */
export const MAX_LIVE_MESSAGE_BYTES = MAX_REQUEST_BYTES;

/**
 * Bytes of a section room's updates that may wait to be stored: past it, the
 * room stops reading its connections (they wait in TCP) until storage caught
 * up to half of it. Memory per room stays bounded whatever clients send.
 */
export const MAX_ROOM_PENDING_BYTES = 4 * MAX_LIVE_MESSAGE_BYTES;

/**
 * Messages (updates and presence) a live connection may send in a second
 * before the room stops reading it for the rest of that second. A person
 * typing fast with a moving caret sends a few dozen; a reconnecting client a
 * handful; this leaves an order of magnitude to spare.
 */
export const MAX_LIVE_MESSAGES_PER_SECOND = 500;

export function requestTooLarge(): DomainError {
  return new DomainError(
    "PAYLOAD_TOO_LARGE",
    `The request body is larger than ${MAX_REQUEST_DESCRIPTION}, the limit for every call. Split the change into several calls, or upload large files with \`upload_url\` and reference them as storage blocks.`,
    { limitBytes: MAX_REQUEST_BYTES },
  );
}

/** Unicode PostgreSQL and canonical JSON cannot store: NUL, and UTF-16 surrogates that are not paired. */
export const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether a string holds something no face may store (every face refuses it,
 * so no write can fail on it later): what UNSTORABLE matches, asked of the
 * engine's own scans. The live rules ask it of a block at every keystroke,
 * where the regex's lookbehind cost a quarter of judging one.
 */
export const isUnstorable = (text: string): boolean => text.includes("\u0000") || !text.isWellFormed();
