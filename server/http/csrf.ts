/**
 * Which requests come from this site's own pages, and which were sent to one
 * of its own hosts: one rule for every face.
 *
 * - `isOwnOrigin` decides whether an Origin header is this site's: the Host
 *   the request came with, QUIRE_PUBLIC_URL's host, or a proxy's
 *   X-Forwarded-Host when the proxy is trusted (QUIRE_TRUST_PROXY=true;
 *   otherwise anyone could send it). tRPC's cookie-authenticated calls (below),
 *   the live rooms' WebSocket upgrade and MCP all ask it.
 * - `isOwnHost` decides whether the host a request was sent to is one this
 *   site answers to, against DNS rebinding (an attacker's name resolving to
 *   this server, so that Origin and Host agree on the attacker's name):
 *   QUIRE_PUBLIC_URL's host, a loopback name or address, or an IP address
 *   (an address names no one else). MCP asks it; tRPC and the rooms need not,
 *   since a browser sends this site's session cookie only to this site's names.
 *
 * The cross-site request forgery guard for browser calls to tRPC: a request
 * that authenticates with the session cookie (rather than a bearer token,
 * which no other site can make a browser send) must look like our own app's
 * fetch:
 *
 * - a POST must be `Content-Type: application/json` — the simple types a form
 *   or a no-CORS fetch can send (text/plain, urlencoded, multipart) are refused,
 *   and anything else would need a CORS preflight this server never grants;
 * - an Origin header, when present, must be this site's own (isOwnOrigin);
 * - Sec-Fetch-Site, when present, must not be `cross-site`.
 *
 * The session cookie itself stays SameSite=Lax (next-auth's default), so other
 * sites' subrequests do not carry it in the first place; other origins of the
 * same site (another port, a sibling subdomain) do get it sent, which is what
 * the Origin check is for.
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import type { ErrorPayload } from "@/server/core/errors";

/** What the site knows of its own address: QUIRE_PUBLIC_URL and QUIRE_TRUST_PROXY. */
export interface SiteAddress {
  publicUrl?: string;
  trustProxy?: boolean;
}

const first = (value: string | string[] | undefined): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.split(",")[0]?.trim();

/** The host (name or address, with its port if any; lowercased) of a URL, or null. */
function hostOf(url: string): string | null {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return null;
  }
}

/** The host the client addressed: a trusted proxy's X-Forwarded-Host, else the Host header. */
export function addressedHost(req: IncomingMessage, site: SiteAddress): string | undefined {
  return (site.trustProxy ? first(req.headers["x-forwarded-host"]) : undefined) ?? first(req.headers.host);
}

/** Whether `origin` (an Origin header's value) is this site's own. */
export function isOwnOrigin(req: IncomingMessage, origin: string, site: SiteAddress): boolean {
  const from = hostOf(origin);
  if (!from) return false;
  const own = [
    first(req.headers.host),
    site.trustProxy ? first(req.headers["x-forwarded-host"]) : undefined,
    site.publicUrl ? hostOf(site.publicUrl) : undefined,
  ];
  return own.some((host) => host?.toLowerCase() === from);
}

/** Whether the host a request was sent to is one this site answers to (see the top of this file). */
export function isOwnHost(req: IncomingMessage, site: SiteAddress): boolean {
  const addressed = addressedHost(req, site);
  if (!addressed) return false;
  let url: URL;
  try {
    url = new URL(`http://${addressed}`);
  } catch {
    return false;
  }
  if (site.publicUrl && url.host === hostOf(site.publicUrl)) return true;
  const name = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return name === "localhost" || name.endsWith(".localhost") || isIP(name) !== 0;
}

/** The refusal of a browser request whose Origin is present and not this site's own (tRPC, live rooms), or null. */
export function foreignOriginRefusal(req: IncomingMessage, site: SiteAddress): ErrorPayload | null {
  const origin = first(req.headers.origin);
  if (origin === undefined || isOwnOrigin(req, origin, site)) return null;
  return {
    code: "CSRF_REJECTED",
    message: `Requests from ${origin} may not use this site's session or open its live rooms; only the site's own pages may. Scripts call it without an Origin header, with an API token.`,
  };
}

/** Why a cookie-authenticated request is refused, or null when it may proceed. */
export function csrfRefusal(req: IncomingMessage, site: SiteAddress = {}): ErrorPayload | null {
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
  const foreign = foreignOriginRefusal(req, site);
  if (foreign) return foreign;
  if (first(req.headers["sec-fetch-site"]) === "cross-site") {
    return {
      code: "CSRF_REJECTED",
      message: "Cross-site requests may not use this site's session. Call the API with an API token instead.",
    };
  }
  return null;
}
