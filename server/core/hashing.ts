/** Content addressing: sha256 over the RFC 8785 canonical JSON of a value. */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export function canonicalHash(value: unknown): string {
  return canonicalJsonAndHash(value).hash;
}

/** The canonical JSON of a value (RFC 8785): the same text for equal values, whatever order their keys were set in. */
export function canonicalJson(value: unknown): string {
  const json = canonicalize(value);
  if (json === undefined) throw new TypeError("value cannot be canonicalized");
  return json;
}

/** The canonical JSON of a value and its hash. */
export function canonicalJsonAndHash(value: unknown): { json: string; hash: string } {
  const json = canonicalJson(value);
  return { json, hash: createHash("sha256").update(json).digest("hex") };
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
