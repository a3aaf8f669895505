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
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}
