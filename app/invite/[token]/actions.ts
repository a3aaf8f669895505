"use server";

/**
 * Accepting an invite. The token comes from the page's URL; the server checks
 * it again (expired, revoked, used, email) on every attempt.
 */
import { getSessionUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { isDomainError } from "@/server/core/errors";

export type InviteActionResult =
  | { ok: true; email?: string }
  | { ok: false; code: string; message: string; field?: "name" | "email" | "password" };

function failure(error: unknown): InviteActionResult {
  if (isDomainError(error)) {
    const issues = (error.details?.issues ?? []) as Array<{ path?: string }>;
    const field = issues
      .map((i) => i.path)
      .find((p): p is "name" | "email" | "password" => p === "name" || p === "email" || p === "password");
    return { ok: false, code: error.code, message: error.message, ...(field ? { field } : {}) };
  }
  console.error("[quire] accepting an invite failed", error);
  return { ok: false, code: "INTERNAL", message: "Something went wrong. Please try again." };
}

/** The signed-in user joins the workspace. */
export async function joinWithInvite(token: unknown): Promise<InviteActionResult> {
  const user = await getSessionUser();
  if (!user) return { ok: false, code: "UNAUTHENTICATED", message: "Your session has ended. Sign in again, then open the link." };
  try {
    await getBridge().acceptInvite(typeof token === "string" ? token : "", user.id);
    return { ok: true };
  } catch (error) {
    return failure(error);
  }
}

/** A visitor creates an account through the invite; the page signs them in next. */
export async function signUpWithInvite(token: unknown, input: unknown): Promise<InviteActionResult> {
  const fields = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const text = (key: string) => (typeof fields[key] === "string" ? (fields[key] as string) : "");
  try {
    const user = await getBridge().acceptInviteAsNewUser(typeof token === "string" ? token : "", {
      name: text("name"),
      email: text("email"),
      password: text("password"),
    });
    return { ok: true, email: user.email };
  } catch (error) {
    return failure(error);
  }
}
