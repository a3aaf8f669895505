"use server";

/**
 * Accepting an invite. Server actions, not tRPC: a visitor signing up has no
 * session yet. The token comes from the page's URL and goes to the bridge as
 * it came: the server checks it again (its shape, expired, revoked, used,
 * email) on every attempt, and the new account's zod schema judges the
 * sign-up fields.
 */
import { runAsUser, settle } from "@/app/_lib/action-result";
import { getBridge, type QuireBridge } from "@/server/bridge";

/** The signed-in user joins the workspace. */
export async function joinWithInvite(token: string) {
  return runAsUser("join with invite", (userId) => getBridge().acceptInvite(token, userId));
}

/** A visitor creates an account through the invite; the page signs them in next. */
export async function signUpWithInvite(token: string, input: Parameters<QuireBridge["acceptInviteAsNewUser"]>[1]) {
  return settle("sign up with invite", () => getBridge().acceptInviteAsNewUser(token, input));
}
