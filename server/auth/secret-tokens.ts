/**
 * Bearer secrets (API tokens, share links, invites): 256 random bits, shown
 * once, stored only as a sha256 hash. A fast hash is enough for secrets this
 * long; a leaked table gives nothing usable.
 */
import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/server/core/hashing";

export const newSecretToken = (prefix = ""): string => prefix + randomBytes(32).toString("base64url");

export const hashSecretToken = (token: string): string => sha256Hex(token);

/**
 * Whether `token` has the shape newSecretToken makes (`prefix`, then 43
 * base64url characters): anything else names no secret and is refused before
 * any lookup.
 */
export const hasSecretTokenShape = (token: string, prefix = ""): boolean =>
  token.startsWith(prefix) && /^[A-Za-z0-9_-]{43}$/.test(token.slice(prefix.length));
