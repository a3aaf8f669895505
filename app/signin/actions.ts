"use server";

import { getBridge } from "@/server/bridge";
import { isDomainError } from "@/server/core/errors";

export type CreateOwnerResult =
  | { ok: true; email: string }
  | { ok: false; code?: string; message: string; field?: "name" | "email" | "password" };

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MIN_PASSWORD_LENGTH = 8;

/**
 * Creates the first (owner) account of a fresh instance. The bridge refuses
 * with ALREADY_INITIALIZED once any account exists, so this action cannot be
 * used to add accounts later, whatever the caller posts.
 */
export async function createOwnerAccount(input: unknown): Promise<CreateOwnerResult> {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const name = typeof fields.name === "string" ? fields.name.trim() : "";
  const email = typeof fields.email === "string" ? fields.email.trim() : "";
  const password = typeof fields.password === "string" ? fields.password : "";

  if (!name || name.length > 200) return { ok: false, field: "name", message: "Enter your name (up to 200 characters)." };
  if (!EMAIL_PATTERN.test(email) || email.length > 320) return { ok: false, field: "email", message: "Enter a valid email address." };
  if (password.length < MIN_PASSWORD_LENGTH) {
    return { ok: false, field: "password", message: `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.` };
  }
  if (password.length > 1024) return { ok: false, field: "password", message: "The password must be at most 1024 characters long." };

  try {
    const user = await getBridge().createOwner({ name, email, password });
    return { ok: true, email: user.email };
  } catch (error) {
    if (isDomainError(error)) return { ok: false, code: error.code, message: error.message };
    console.error("createOwner failed", error);
    return { ok: false, message: "The account could not be created. Check the server log and try again." };
  }
}
