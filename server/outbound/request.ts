/**
 * The one way Quire makes an outbound HTTP request (webhook deliveries, OAuth
 * client metadata documents). Every request goes through the same checks:
 * the scheme (https outside development), the address actually connected to
 * (checked inside the connection's own DNS lookup, so a name cannot resolve
 * to a public address when checked and a private one when connected: no DNS
 * rebinding), no redirects followed (a 3xx is the answer), and a size and a
 * total time limit on the response.
 */
import { type LookupAddress, type LookupOneOptions, lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { DomainError } from "@/server/core/errors";
import { addressAllowed, type OutboundSettings, parseOutboundUrl, refusedAddress } from "@/server/outbound/addresses";

export interface OutboundRequest {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  /** Overrides the settings' time limit for this request. */
  timeoutMs?: number;
  /** Overrides the settings' response size limit for this request. */
  maxResponseBytes?: number;
}

export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The address the request connected to. */
  address: string;
}

/**
 * Sends one request and reads its whole response. Refusals are
 * OUTBOUND_REFUSED (nothing was sent); a request that fails on the way (no
 * connection, too slow, too large) is OUTBOUND_FAILED with a `reason`.
 */
export async function outboundRequest(request: OutboundRequest, settings: OutboundSettings): Promise<OutboundResponse> {
  const { url, host } = parseOutboundUrl(request.url, settings);
  if (isIP(host) && !addressAllowed(host, settings)) throw refusedAddress(request.url, host, host);
  const timeoutMs = request.timeoutMs ?? settings.timeoutMs;
  const maxBytes = request.maxResponseBytes ?? settings.maxResponseBytes;
  const failed = (reason: string, message: string) => new DomainError("OUTBOUND_FAILED", message, { url: request.url, reason });

  // Every address a name resolves to must be allowed, not only the first:
  // the connection may try each of them (happy eyeballs).
  const guardedLookup = ((hostname: string, options: LookupOneOptions, callback: (...args: unknown[]) => void) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error);
      const refused = addresses.find((entry) => !addressAllowed(entry.address, settings));
      if (refused) return callback(refusedAddress(request.url, hostname, refused.address));
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(failed("network", `${hostname} resolves to no address.`));
      callback(null, first.address, first.family);
    });
  }) as unknown as LookupFunction;

  return new Promise<OutboundResponse>((resolve, reject) => {
    const transport = url.protocol === "https:" ? https : http;
    const req = transport.request(url, {
      method: request.method ?? "GET",
      headers: { "user-agent": "Quire", ...request.headers },
      lookup: guardedLookup,
      // A fresh connection each time: a pooled socket would skip the lookup.
      agent: false,
    });
    const deadline = setTimeout(() => req.destroy(failed("timeout", `${url.host} did not answer within ${timeoutMs} ms.`)), timeoutMs);
    req.on("error", (error) => {
      clearTimeout(deadline);
      reject(
        error instanceof DomainError
          ? error
          : failed("network", `Could not reach ${url.host}: ${(error as NodeJS.ErrnoException).code ?? error.message}.`),
      );
    });
    req.on("response", (res) => {
      const address = res.socket.remoteAddress ?? "";
      const chunks: Buffer[] = [];
      let received = 0;
      const tooLarge = () => failed("too_large", `${url.host} answered with more than ${maxBytes} bytes.`);
      if (Number(res.headers["content-length"] ?? 0) > maxBytes) {
        req.destroy(tooLarge());
        return;
      }
      res.on("data", (chunk: Buffer) => {
        received += chunk.length;
        if (received > maxBytes) req.destroy(tooLarge());
        else chunks.push(chunk);
      });
      res.on("end", () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), address });
      });
      res.on("error", () => {
        // The request's own error handler reports why (destroyed with a coded error above).
      });
    });
    req.end(request.body);
  });
}
