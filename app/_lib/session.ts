/**
 * Who is signed in, for server components. Pages call `requireUser(path)`
 * with their own path and query so a signed-out visitor comes back to the
 * same place after signing in.
 */
import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { connection } from "next/server";
import { authOptions } from "./next-auth-options";

export interface SessionUser {
  id: string;
  name: string;
  email: string;
}

export async function getSessionUser(): Promise<SessionUser | null> {
  // A page that asks who is signed in is rendered per request, never prerendered at build time
  // (the auth options reach the server's bridge, which exists only in the running server).
  await connection();
  const session = await getServerSession(authOptions);
  const user = session?.user;
  if (!user?.id) return null;
  return { id: user.id, name: user.name ?? user.email ?? "Signed in", email: user.email ?? "" };
}

/** The signed-in user, or a redirect to /signin that returns to `callbackPath`. */
export async function requireUser(callbackPath: string): Promise<SessionUser> {
  const user = await getSessionUser();
  if (!user) redirect(signInPath(callbackPath));
  return user;
}

export async function requireUserId(callbackPath: string): Promise<string> {
  return (await requireUser(callbackPath)).id;
}

export function signInPath(callbackPath: string): string {
  const target = safeCallbackPath(callbackPath);
  return target === "/" ? "/signin" : `/signin?callbackUrl=${encodeURIComponent(target)}`;
}

/**
 * Only same-site paths are allowed as a post-sign-in destination: anything
 * else (absolute URLs, protocol-relative `//host`, backslash tricks, the
 * sign-in page itself) falls back to the home page.
 */
export function safeCallbackPath(raw: string | null | undefined): string {
  if (!raw) return "/";
  let candidate = raw;
  // next-auth may hand back an absolute URL on our own origin; keep only its path.
  if (/^https?:\/\//i.test(candidate)) {
    try {
      const url = new URL(candidate);
      candidate = `${url.pathname}${url.search}${url.hash}`;
    } catch {
      return "/";
    }
  }
  if (!candidate.startsWith("/") || candidate.startsWith("//") || candidate.includes("\\")) return "/";
  if (/[\u0000-\u001f]/.test(candidate)) return "/";
  if (candidate === "/signin" || candidate.startsWith("/signin?") || candidate.startsWith("/api/auth")) return "/";
  return candidate;
}
