/**
 * Which addresses and URLs an outbound request may reach: the one rule the
 * outbound guard applies when a URL is registered and again on the address a
 * request actually connects to.
 */
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { DomainError } from "@/server/core/errors";

/** Address kinds a deployment may open up besides public unicast (QUIRE_OUTBOUND_ALLOW_PRIVATE). */
export const OUTBOUND_OPENINGS = ["loopback", "private"] as const;
export type OutboundOpening = (typeof OUTBOUND_OPENINGS)[number];

export interface OutboundSettings {
  /** Plain http:// allowed too (development, tests); otherwise https only. */
  allowHttp: boolean;
  /** Address kinds allowed besides public unicast; empty = public addresses only. */
  allow: readonly OutboundOpening[];
  /** Longest a request may take, start to last byte (default for every request). */
  timeoutMs: number;
  /** Largest response body read (default for every request). */
  maxResponseBytes: number;
}

export const DEFAULT_OUTBOUND_SETTINGS: OutboundSettings = {
  allowHttp: false,
  allow: [],
  timeoutMs: 10_000,
  maxResponseBytes: 1_048_576,
};

/**
 * The ranges each opening lets through, by ipaddr.js's range names. Link-local
 * (169.254.0.0/16, where clouds serve instance credentials), multicast,
 * unspecified, broadcast and the reserved ranges are never opened.
 */
const OPENED_RANGES: Record<OutboundOpening, readonly string[]> = {
  loopback: ["loopback"],
  private: ["private", "uniqueLocal", "carrierGradeNat"],
};

/**
 * The kind of an address, as ipaddr.js names its range; an IPv4-mapped IPv6
 * address (::ffff:127.0.0.1) is judged as the IPv4 address it carries, so
 * the mapping cannot smuggle a private address past the rule.
 */
export function addressRange(address: string): string {
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    return (parsed as ipaddr.IPv6).toIPv4Address().range();
  }
  return parsed.range();
}

/** Whether a request may connect to this IP address under these settings. */
export function addressAllowed(address: string, settings: Pick<OutboundSettings, "allow">): boolean {
  if (!ipaddr.isValid(address)) return false;
  const range = addressRange(address);
  return range === "unicast" || settings.allow.some((opening) => OPENED_RANGES[opening].includes(range));
}

export function refusedAddress(url: string, host: string, address: string): DomainError {
  return new DomainError(
    "OUTBOUND_REFUSED",
    `${host} resolves to ${address} (${ipaddr.isValid(address) ? addressRange(address) : "not an IP address"}), which Quire does not send requests to. Use a public address (an administrator can allow loopback or private addresses with QUIRE_OUTBOUND_ALLOW_PRIVATE).`,
    { url, reason: "address", address },
  );
}

/**
 * The URL parsed and its scheme checked: https, or http where the settings
 * allow it. The host without IPv6 brackets is returned for address checks.
 */
export function parseOutboundUrl(url: string, settings: Pick<OutboundSettings, "allowHttp">): { url: URL; host: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError("OUTBOUND_REFUSED", `${JSON.stringify(url)} is not a URL. Give an absolute https:// URL.`, {
      url,
      reason: "url",
    });
  }
  const schemeAllowed = parsed.protocol === "https:" || (parsed.protocol === "http:" && settings.allowHttp);
  if (!schemeAllowed) {
    throw new DomainError(
      "OUTBOUND_REFUSED",
      `Quire sends requests over https only; ${JSON.stringify(url)} is ${parsed.protocol.replace(":", "")}. Give an https:// URL.`,
      { url, reason: "scheme" },
    );
  }
  return { url: parsed, host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") };
}

/**
 * Checks a URL before it is stored (a webhook's endpoint, a client's
 * metadata document): its scheme, and every address its host resolves to
 * now. The request itself checks again on the address it connects to, as a
 * name may resolve elsewhere later.
 */
export async function checkOutboundUrl(url: string, settings: OutboundSettings): Promise<URL> {
  const { url: parsed, host } = parseOutboundUrl(url, settings);
  const addresses = isIP(host) ? [host] : await resolveAll(url, host);
  for (const address of addresses) {
    if (!addressAllowed(address, settings)) throw refusedAddress(url, host, address);
  }
  return parsed;
}

async function resolveAll(url: string, host: string): Promise<string[]> {
  try {
    return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    throw new DomainError("OUTBOUND_REFUSED", `${host} does not resolve to an address. Check the URL's host name.`, {
      url,
      reason: "unresolvable",
    });
  }
}
