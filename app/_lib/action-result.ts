/**
 * The result a form gets from the server: the value, or a DomainError turned
 * into a code and a message the form can show. Calls over tRPC answer it
 * through `toolCall` (app/_lib/tool-call.ts); the two server actions left
 * (setting up the owner, accepting an invite: people who are not members
 * yet, whom tRPC cannot serve) answer it through `settle` and `runAsUser`.
 */
import { getSessionUser } from "@/app/_lib/session";
import { isDomainError } from "@/server/core/errors";

export type ActionResult<T = undefined> = { ok: true; value: T } | { ok: false; code: string; message: string };

/**
 * Runs a bridge call. A DomainError becomes its code and message; anything
 * else is logged (as "[quire] <what> action failed") and shown as a generic
 * failure.
 */
export async function settle<T>(what: string, run: () => Promise<T>): Promise<ActionResult<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    if (isDomainError(error)) return { ok: false, code: error.code, message: error.message };
    console.error(`[quire] ${what} action failed`, error);
    return { ok: false, code: "INTERNAL", message: "Something went wrong. Please try again." };
  }
}

/** Runs a bridge call as the signed-in user (see `settle`). */
export async function runAsUser<T>(what: string, run: (userId: string) => Promise<T>): Promise<ActionResult<T>> {
  const user = await getSessionUser();
  if (!user) return { ok: false, code: "UNAUTHENTICATED", message: "Your session has ended. Sign in again." };
  return settle(what, () => run(user.id));
}
