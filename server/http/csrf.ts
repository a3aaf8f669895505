/**
 * Cross-site request forgery guard for browser calls to tRPC. A request that
 * authenticates with the session cookie (rather than a bearer token, which no
 * other site can make a browser send) must look like our own app's fetch:
 *
 * - a POST must be `Content-Type: application/json` — the simple types a form
 *   or a no-CORS fetch can send (text/plain, urlencoded, multipart) are refused,
 *   and anything else would need a CORS preflight this server never grants;
 * - an Origin header, when present, must be this server's own (the Host the
 *   request came with, or QUIRE_PUBLIC_URL; X-Forwarded-Host only when the
 *   proxy is trusted, QUIRE_TRUST_PROXY=true — otherwise anyone could send it);
 * - Sec-Fetch-Site, when present, must not be `cross-site`.
 *
 * The session cookie itself stays SameSite=Lax (next-auth's default), so other
 * sites' subrequests do not carry it in the first place.
 */
import type { IncomingMessage } from "node:http";
import type { ErrorPayload } from "@/server/core/errors";

const first = (value: string | string[] | undefined): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.split(",")[0]?.trim();

function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

/** Why a cookie-authenticated request is refused, or null when it may proceed. */
export function csrfRefusal(req: IncomingMessage, options: { publicUrl?: string; trustProxy?: boolean } = {}): ErrorPayload | null {
  const method = (req.method ?? "GET").toUpperCase();
  if (method === "POST") {
    const contentType = (req.headers["content-type"] ?? "").split(";", 1)[0]!.trim().toLowerCase();
    if (contentType !== "application/json") {
      return {
        code: "CSRF_REJECTED",
        message:
          "Browser-session requests to /api/trpc must send Content-Type: application/json. Scripts should use an API token instead of a cookie.",
      };
    }
  }
  const origin = first(req.headers.origin);
  if (origin !== undefined) {
    const allowed = new Set(
      [
        first(req.headers.host),
        options.trustProxy ? first(req.headers["x-forwarded-host"]) : undefined,
        options.publicUrl ? hostOf(options.publicUrl) : undefined,
      ]
        .filter((h): h is string => Boolean(h))
        .map((h) => h.toLowerCase()),
    );
    const from = hostOf(origin);
    if (!from || !allowed.has(from)) {
      return {
        code: "CSRF_REJECTED",
        message: `Requests from ${origin} may not use this site's session. Call the API with an API token instead.`,
      };
    }
  }
  if (first(req.headers["sec-fetch-site"]) === "cross-site") {
    return {
      code: "CSRF_REJECTED",
      message: "Cross-site requests may not use this site's session. Call the API with an API token instead.",
    };
  }
  return null;
}
