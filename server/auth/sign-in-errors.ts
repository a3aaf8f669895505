/**
 * How a refused sign-in travels through next-auth: the credentials provider
 * can only fail with an error message, which next-auth puts in the `error`
 * parameter of the URL it answers with. A rate-limited attempt becomes
 * `RATE_LIMITED:<seconds>`; the auth route turns that answer into HTTP 429
 * with Retry-After, and the sign-in page into a sentence. Pure: the sign-in
 * form (a client component) imports it too.
 */
import { tooManyAttemptsMessage } from "@/server/core/errors";

const PREFIX = "RATE_LIMITED:";

export const rateLimitedSignInError = (retryAfterSeconds: number): string => `${PREFIX}${Math.max(1, Math.ceil(retryAfterSeconds))}`;

/** The seconds to wait, when `error` is a rate-limited sign-in; else null. */
export function rateLimitedSignInWait(error: string | null | undefined): number | null {
  if (!error?.startsWith(PREFIX)) return null;
  const seconds = Number(error.slice(PREFIX.length));
  return Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : 60;
}

/** The sentence for a next-auth sign-in error code. */
export function signInErrorMessage(error: string): string {
  const wait = rateLimitedSignInWait(error);
  if (wait !== null) return tooManyAttemptsMessage(wait);
  if (error === "CredentialsSignin") return "Wrong email or password.";
  if (error === "SessionRequired") return "Please sign in to continue.";
  return "Sign-in failed. Please try again.";
}
