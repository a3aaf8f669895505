/**
 * Reads the next-auth session cookie outside Next (tRPC over the custom
 * server, later the collab upgrade), and decides which cookie that is.
 *
 * When the public URL is https, next-auth is told to use secure cookies: the
 * session cookie is then `__Secure-next-auth.session-token` with the Secure
 * flag, and only that name is read. (A plain-named cookie could have been
 * planted over http by a sibling host; browsers refuse `__Secure-` cookies
 * that were not set over https.)
 */
import { decode } from "next-auth/jwt";

const SECURE_SESSION_COOKIE = "__Secure-next-auth.session-token";
const PLAIN_SESSION_COOKIE = "next-auth.session-token";

/** Whether browser sessions use secure cookies: the site's public URL is https. */
export const usesSecureCookies = (publicUrl: string | undefined): boolean => /^https:\/\//i.test(publicUrl ?? "");

export const sessionCookieName = (secure: boolean): string => (secure ? SECURE_SESSION_COOKIE : PLAIN_SESSION_COOKIE);

function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    try {
      cookies.set(part.slice(0, eq).trim(), decodeURIComponent(part.slice(eq + 1).trim()));
    } catch {
      // A malformed escape in someone else's cookie is not ours to fail on.
    }
  }
  return cookies;
}

/** The signed-in user's id, or null when there is no valid session cookie of the configured name. */
export async function sessionUserId(
  cookieHeader: string | undefined,
  secret: string,
  options: { secure: boolean },
): Promise<string | null> {
  if (!cookieHeader) return null;
  const token = parseCookies(cookieHeader).get(sessionCookieName(options.secure));
  if (!token) return null;
  try {
    const payload = await decode({ token, secret });
    return payload && typeof payload.sub === "string" ? payload.sub : null;
  } catch {
    return null;
  }
}
