/** Reads the next-auth session cookie outside Next (tRPC over the custom server, later the collab upgrade). */
import { decode } from "next-auth/jwt";

const SESSION_COOKIES = ["__Secure-next-auth.session-token", "next-auth.session-token"];

function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) cookies.set(part.slice(0, eq).trim(), decodeURIComponent(part.slice(eq + 1).trim()));
  }
  return cookies;
}

/** The signed-in user's id, or null when there is no valid session cookie. */
export async function sessionUserId(cookieHeader: string | undefined, secret: string): Promise<string | null> {
  if (!cookieHeader) return null;
  const cookies = parseCookies(cookieHeader);
  for (const name of SESSION_COOKIES) {
    const token = cookies.get(name);
    if (!token) continue;
    try {
      const payload = await decode({ token, secret });
      if (payload && typeof payload.sub === "string") return payload.sub;
    } catch {
      return null;
    }
  }
  return null;
}
