/**
 * Object storage for uploaded files: the bytes behind `storage` content
 * blocks. Two implementations: a folder on local disk (the default, under
 * <QUIRE_DATA_DIR>/uploads) and any S3-compatible bucket. Keys are generated
 * by Quire (`<workspaceId>/<uuid>.<ext>`), yet every implementation still
 * validates them, so a key can never name anything outside the store.
 */
import { createHash } from "node:crypto";
import { Transform, type Readable, type TransformCallback } from "node:stream";
import { DomainError } from "@/server/core/errors";

export interface StoredObject {
  byteSize: number;
  /** Hex sha256 of the stored bytes. */
  sha256: string;
}

export interface PutOptions {
  /** The body may have at most this many bytes; past it the put fails with PAYLOAD_TOO_LARGE and nothing is stored. */
  maxBytes: number;
  contentType: string;
}

export interface ObjectStore {
  readonly kind: "local" | "s3";
  /** Streams `body` under `key`, replacing nothing half-way: on any failure no object is left at `key`. */
  put(key: string, body: Readable, options: PutOptions): Promise<StoredObject>;
  /** The object's bytes, or null when there is no object at `key`. */
  get(key: string): Promise<{ body: Readable; byteSize: number } | null>;
  /** Removes the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
}

export const MAX_KEY_LENGTH = 512;
const KEY_CHARS = /^[A-Za-z0-9._/-]+$/;

/** Why `key` is not a safe storage key, or null when it is one. */
export function storageKeyProblem(key: string): string | null {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) return `must be 1-${MAX_KEY_LENGTH} characters`;
  if (!KEY_CHARS.test(key)) return "may contain only letters, digits, '.', '_', '-' and '/'";
  if (key.startsWith("/")) return "must not start with '/'";
  const segments = key.split("/");
  if (segments.some((s) => s === "" || s === "." || s === "..")) return "must not contain empty, '.' or '..' path segments";
  return null;
}

/** Throws VALIDATION_FAILED unless `key` is a safe storage key. */
export function assertStorageKey(key: string): void {
  const problem = storageKeyProblem(key);
  if (problem) {
    throw new DomainError("VALIDATION_FAILED", `${JSON.stringify(key.slice(0, 100))} is not a storage key: it ${problem}.`, {
      issues: [{ path: "key", message: problem }],
    });
  }
}

export function payloadTooLarge(maxBytes: number): DomainError {
  return new DomainError(
    "PAYLOAD_TOO_LARGE",
    `The file is larger than the ${maxBytes}-byte limit of this upload. Upload a smaller file (or request a new upload URL with the right \`size\`).`,
    { maxBytes },
  );
}

/** A pass-through that counts and hashes the bytes, failing with PAYLOAD_TOO_LARGE past `maxBytes`. */
export class MeteredStream extends Transform {
  byteSize = 0;
  private readonly hash = createHash("sha256");

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.byteSize += chunk.length;
    if (this.byteSize > this.maxBytes) {
      callback(payloadTooLarge(this.maxBytes));
      return;
    }
    this.hash.update(chunk);
    callback(null, chunk);
  }

  /** The hex digest; call once, after the stream has ended. */
  digest(): string {
    return this.hash.digest("hex");
  }
}
