/**
 * One client's socket in a room, and what the rooms do to it: hold it while
 * its access is decided again (nothing sent, nothing read), pause reading it
 * (holds, the doc's backpressure and its message rate share one count), and
 * close it for good with an application close code.
 */
import type { WebSocket } from "ws";
import type { AgentIdentity } from "@/db/schema-agents";
import type { Credential } from "@/server/access/authorize";
import type { Actor } from "@/server/access/actor";
import type { DocumentAccess } from "@/server/access/documents";
import { MAX_LIVE_MESSAGES_PER_SECOND } from "@/server/core/limits";
import type { DraftKey } from "@/server/store/drafts";
import type { LiveConnection } from "./live-doc";
import type { Typist } from "./live-rules";
import type { PresenceIdentity } from "./presence";
import { sendInTurn } from "./turn-writes";

export interface RoomAddress extends DraftKey {
  /** null: the branch's outline room. */
  sectionId: string | null;
}

/** WebSocket close codes (4000-4999 are the application's). */
export const CLOSE_CONTENT_REFUSED = 4400;
export const CLOSE_ACCESS_LOST = 4403;
export const CLOSE_SECTION_GONE = 4404;
/** The branch was deleted (`documents` action `delete_branch`). */
export const CLOSE_BRANCH_GONE = 4410;
export const CLOSE_INTERNAL = 4500;
/** A WebSocket close reason is at most 123 bytes of UTF-8. */
const MAX_CLOSE_REASON_BYTES = 123;

/** A connection's storage keys before its room decides them: none (shared, never written: a decision replaces it). */
const NO_KEYS: ReadonlySet<string> = new Set();

/**
 * A class, not an object literal of arrow functions: a room holds thousands of
 * these, and each per-connection closure costs its context and, under tsx
 * (which keeps function names by defining `name` on every named closure), a
 * property table of its own: about 1.9 KB per connection in all.
 */
export class RoomConnection implements LiveConnection, Typist {
  readonly authorId: string | null;
  readOnly = true;
  droppedUpdates = 0;
  /** Storage keys this principal sees in the document: the ones its live edits may put into a block. */
  usableKeys: ReadonlySet<string> = NO_KEYS;
  /**
   * Decisions on this connection's access under way (an access change, a
   * head move): while any is, nothing is sent to it (what would be is kept)
   * and nothing read from it, so no byte of a change crosses before the
   * decision it depends on.
   */
  holds = 0;
  /** What was kept for it while held (null while nothing is: an idle connection holds no array). */
  heldMessages: Uint8Array[] | null = null;
  /** Reasons its messages are not being read (holds, the doc's backpressure, its rate): read again when none is left. It starts paused, until its room reads it. */
  readPauses = 1;
  /** The current second of its messages (performance.now()) and how many it sent in it. */
  secondStartedAt = 0;
  messagesThisSecond = 0;
  /** Closed for good (closeNow): nothing more is sent to it. */
  closed = false;

  /** The agent the author connected through (an API token, an OAuth client): credited on the live commit; null for the person. */
  readonly agent: AgentIdentity | null;

  constructor(
    readonly socket: WebSocket,
    /** What it was admitted with: resolved again whenever its access is decided again. */
    readonly credential: Credential,
    readonly actor: Actor | null,
    public access: DocumentAccess,
    readonly address: RoomAddress,
    readonly presence: PresenceIdentity,
  ) {
    this.authorId = actor?.userId ?? null;
    this.agent = actor?.agent ?? null;
  }

  /** The connection is its own typist: its user, and the storage keys it was last decided to see. */
  get typist(): Typist {
    return this;
  }

  get userId(): string | null {
    return this.authorId;
  }

  mayUseKey(key: string): boolean {
    return this.usableKeys.has(key);
  }

  send(message: Uint8Array): void {
    if (this.closed) return;
    if (this.holds > 0) {
      if (this.heldMessages) this.heldMessages.push(message);
      else this.heldMessages = [message];
    } else if (this.socket.readyState === this.socket.OPEN) sendInTurn(this.socket, message);
  }

  /** The repair was sent before this: the client converges, then hears why (and what it sent meanwhile is not taken in). */
  refused(reason: string): void {
    closeNow(this, CLOSE_CONTENT_REFUSED, closeReason(`content refused: ${reason}`));
  }

  pause(): void {
    pauseReading(this);
  }

  resume(): void {
    resumeReading(this);
  }
}

export function pauseReading(connection: RoomConnection): void {
  if (connection.readPauses === 0) connection.socket.pause();
  connection.readPauses += 1;
}

export function resumeReading(connection: RoomConnection): void {
  connection.readPauses -= 1;
  if (connection.readPauses === 0) connection.socket.resume();
}

/** Holds connections (see RoomConnection.holds); returns them, for `release`. */
export function hold(connections: RoomConnection[]): RoomConnection[] {
  for (const connection of connections) {
    if (connection.holds === 0) pauseReading(connection);
    connection.holds += 1;
  }
  return connections;
}

/** Ends holds: a connection no decision holds any more gets what was kept for it (if it is still open) and is read again. */
export function release(connections: readonly RoomConnection[]): void {
  for (const connection of connections) {
    connection.holds -= 1;
    if (connection.holds > 0) continue;
    const kept = connection.heldMessages;
    connection.heldMessages = null;
    for (const message of kept ?? []) connection.send(message);
    resumeReading(connection);
  }
}

/**
 * Counts a message against its connection's second. One sending more than
 * MAX_LIVE_MESSAGES_PER_SECOND is not read again until its second is over:
 * what it sends waits in TCP and is taken in later, in order (nothing is
 * dropped), and one flooding client cannot take the process's time from the
 * others. True when this message made it wait.
 */
export function throttle(connection: RoomConnection): boolean {
  const now = performance.now();
  if (now - connection.secondStartedAt >= 1_000) {
    connection.secondStartedAt = now;
    connection.messagesThisSecond = 0;
  }
  connection.messagesThisSecond += 1;
  if (connection.messagesThisSecond !== MAX_LIVE_MESSAGES_PER_SECOND) return false;
  pauseReading(connection);
  setTimeout(() => resumeReading(connection), 1_000 - (now - connection.secondStartedAt)).unref();
  return true;
}

/** A connection that may no longer see what it is connected to: what was held for it is dropped, and nothing more is sent. */
export function closeNow(connection: RoomConnection, code: number, reason: string): void {
  connection.heldMessages = null;
  connection.closed = true;
  // What it sent meanwhile (waiting unread in its socket) is not taken in.
  connection.readOnly = true;
  connection.socket.removeAllListeners("message");
  connection.socket.close(code, reason);
}

/** A close reason cut to what the protocol allows (123 bytes), at a character boundary. */
export function closeReason(reason: string): string {
  let cut = reason;
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES) cut = cut.slice(0, -1);
  return cut;
}
