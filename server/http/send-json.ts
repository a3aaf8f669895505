/** Writes a whole JSON response. */
import type { ServerResponse } from "node:http";

/**
 * Sends `body` as JSON with its Content-Length, so the response goes out as
 * one piece rather than chunked (one socket write on the hot MCP path).
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

/** Sends already serialized JSON. */
export function sendJsonText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  // Encoded once: its length and the bytes sent come from the same pass over a possibly large text.
  const body = Buffer.from(text, "utf8");
  res.writeHead(status, { "content-type": "application/json", "content-length": String(body.length), ...headers });
  res.end(body);
}
