/**
 * A connection's socket writes within one turn of the event loop go out as
 * one system call. A keystroke reaches a peer as two messages (the update,
 * then its author's cursor), and a frame from another process carries both
 * too; `ws` writes each message with a `writev` of its own, and on this
 * loopback-heavy deployment those calls were a fifth of a process's time
 * per edit (bench/README.md, "Scale-out"). The first write of a turn corks
 * the socket; the corks come off when the turn's synchronous work and its
 * microtasks are done (`process.nextTick`), so the bytes are the same, in
 * the same order, only written together and at most that turn later.
 */
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";

/** Each WebSocket's underlying stream (what the upgrade handed to `ws`). */
const streams = new WeakMap<WebSocket, Duplex>();
/** Streams corked in this turn, uncorked when it ends. */
let corked: Duplex[] = [];

/** Makes a WebSocket's writes by `sendInTurn` coalesce per turn: `stream` is the socket its upgrade was handed. */
export function coalesceWrites(socket: WebSocket, stream: Duplex): void {
  streams.set(socket, stream);
}

/** Sends a message on an open WebSocket; with coalescing, it leaves with the turn's other writes to that socket. */
export function sendInTurn(socket: WebSocket, message: Uint8Array): void {
  const stream = streams.get(socket);
  if (stream && !stream.writableCorked) {
    stream.cork();
    if (corked.length === 0) process.nextTick(flushTurnWrites);
    corked.push(stream);
  }
  socket.send(message);
}

/**
 * Sends what this turn has written so far now: a frame from another process
 * carries many rooms' messages, and one room's peers need not wait for the
 * rest of the frame to be applied.
 */
export function flushTurnWrites(): void {
  const streamsOfTurn = corked;
  corked = [];
  for (const stream of streamsOfTurn) stream.uncork();
}
