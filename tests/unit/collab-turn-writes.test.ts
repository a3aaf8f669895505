/** A socket's writes in one turn go out together (turn-writes.ts), and its client receives exactly what the plain path sends. */
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import { coalesceWrites, flushTurnWrites, sendInTurn } from "@/server/collab/turn-writes";

const MESSAGES = [Uint8Array.of(0, 2, 1, 7), Uint8Array.of(1, 3, 1, 2, 3), Uint8Array.of(0, 2, 2, 8, 9)];

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server socket and its client (receiving every message); `coalesce` registers the socket's stream as the upgrade does. */
async function pair(coalesce: boolean): Promise<{ server: WebSocket; stream: Duplex; received: Promise<Uint8Array[]> }> {
  const wss = new WebSocketServer({ port: 0, perMessageDeflate: false });
  servers.push(wss);
  await new Promise<void>((resolve) => wss.once("listening", resolve));
  const accepted = new Promise<{ server: WebSocket; stream: Duplex }>((resolve) =>
    wss.once("connection", (server, request) => {
      if (coalesce) coalesceWrites(server, request.socket);
      resolve({ server, stream: request.socket });
    }),
  );
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const received = new Promise<Uint8Array[]>((resolve) => {
    const messages: Uint8Array[] = [];
    client.on("message", (data: Buffer) => {
      messages.push(new Uint8Array(data));
      if (messages.length === MESSAGES.length) resolve(messages);
    });
  });
  await new Promise((resolve) => client.once("open", resolve));
  return { ...(await accepted), received };
}

/** Counts the system-level writes a stream makes from now on. */
function countWrites(stream: Duplex): () => number {
  let writes = 0;
  const writable = stream as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
  for (const method of ["_write", "_writev"] as const) {
    const original = writable[method];
    writable[method] = (...args: unknown[]) => {
      writes += 1;
      return original.apply(stream, args);
    };
  }
  return () => writes;
}

/** Sends every message in one turn; returns the system-level writes the socket made for them. */
function sendAll(server: WebSocket, stream: Duplex): Promise<number> {
  const writes = countWrites(stream);
  for (const message of MESSAGES) sendInTurn(server, message);
  return new Promise((resolve) => setImmediate(() => resolve(writes())));
}

describe("writes coalesced per turn", () => {
  it("sends one turn's messages to a socket in one write, the same bytes in the same order as the plain path", async () => {
    const coalesced = await pair(true);
    expect(await sendAll(coalesced.server, coalesced.stream)).toBe(1);
    expect(coalesced.stream.writableCorked).toBe(0);
    const plain = await pair(false);
    expect(await sendAll(plain.server, plain.stream)).toBe(MESSAGES.length);
    expect(await coalesced.received).toEqual(MESSAGES);
    expect(await plain.received).toEqual(MESSAGES);
  });
});

describe("writes flushed within a turn", () => {
  it("sends what was written so far when flushed, and coalesces what follows in the same turn", async () => {
    const coalesced = await pair(true);
    const writes = countWrites(coalesced.stream);
    sendInTurn(coalesced.server, MESSAGES[0]!);
    flushTurnWrites();
    expect(writes()).toBe(1);
    sendInTurn(coalesced.server, MESSAGES[1]!);
    sendInTurn(coalesced.server, MESSAGES[2]!);
    expect(writes()).toBe(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes()).toBe(2);
    expect(await coalesced.received).toEqual(MESSAGES);
  });
});
