/** Content addressing: sha256 over the RFC 8785 canonical JSON of a value. */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";

export function canonicalHash(value: unknown): string {
  const canonical = canonicalize(value);
  if (canonical === undefined) throw new TypeError("value cannot be canonicalized");
  return createHash("sha256").update(canonical).digest("hex");
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
