/**
 * Bearer secrets (API tokens, share links, invites): 256 random bits, shown
 * once, stored only as a sha256 hash. A fast hash is enough for secrets this
 * long; a leaked table gives nothing usable.
 */
import { randomBytes } from "node:crypto";
import { sha256Hex } from "@/server/core/hashing";

export const newSecretToken = (prefix = ""): string => prefix + randomBytes(32).toString("base64url");

export const hashSecretToken = (token: string): string => sha256Hex(token);
