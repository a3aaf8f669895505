/**
 * Who is asking, for rate limits: the socket's peer address, or, when Quire
 * runs behind a proxy it is told to trust (QUIRE_TRUST_PROXY=true), the first
 * address of X-Forwarded-For. Without that setting the header is ignored, so
 * a client cannot choose its own address.
 *
 * Requests handed to the Next.js app carry their address in an async-local
 * scope, so the bridge methods the app calls (sign-in, share links) know it
 * without trusting anything the request says.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type DomainError, ERROR_FACES, retryAfterSeconds } from "@/server/core/errors";
import { sendJson } from "./send-json";

const first = (value: string | string[] | undefined): string | undefined => {
  const text = Array.isArray(value) ? value[0] : value;
  const head = text?.split(",", 1)[0]?.trim();
  return head ? head : undefined;
};

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is the IPv4 address it maps. */
const normalized = (address: string): string => address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, "").toLowerCase();

export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? first(req.headers["x-forwarded-for"]) : undefined;
  const address = forwarded ?? req.socket.remoteAddress;
  return address ? normalized(address).slice(0, 100) : "unknown";
}

const requestScope = new AsyncLocalStorage<{ address: string }>();

/** Runs `handler` with `address` as the current request's client address. */
export const withClientAddress = <T>(address: string, handler: () => T): T => requestScope.run({ address }, handler);

/** The client address of the request being handled (see withClientAddress), or "unknown" outside one. */
export const currentClientAddress = (): string => requestScope.getStore()?.address ?? "unknown";

/** Answers 429 with Retry-After: the error as JSON, or as a short page for a browser navigating (Accept: text/html). */
export function sendRateLimited(req: IncomingMessage, res: ServerResponse, error: DomainError): void {
  const headers = { "retry-after": String(retryAfterSeconds(error)), "cache-control": "no-store" };
  if (!(req.headers.accept ?? "").includes("text/html")) {
    sendJson(res, ERROR_FACES[error.code].http, { error: error.toPayload() }, headers);
    return;
  }
  const page = `<!doctype html><meta charset="utf-8"><title>Too many attempts</title><p>${error.message}</p>\n`;
  res.writeHead(ERROR_FACES[error.code].http, {
    ...headers,
    "content-type": "text/html; charset=utf-8",
    "content-length": String(Buffer.byteLength(page)),
  });
  res.end(page);
}
