/**
 * A room's presence as the server holds it: y-protocols awareness, kept as
 * its clocks and the states' JSON text, never parsed.
 *
 * y-protocols' `Awareness` parses every state it is given (`JSON.parse`),
 * compares it deeply with the last one, and stringifies every state again to
 * greet a connection. A server that only relays presence needs none of that:
 * a connection's states were stamped (presence.ts) on the way in, another
 * process's were stamped there, so the text is already what peers receive.
 * Applying presence, a connection's and another process's, was 9% of two
 * busy processes' CPU at 4,000 clients, 4% with the relay (bench/README.md,
 * "Scale-out"). The rules of which entry wins are
 * y-protocols' own (`applyAwarenessUpdate`): a newer clock, or a removal at
 * the same clock of a state that is present; a removal keeps the client's
 * clock, so an older update replayed later is still ignored; a state not
 * renewed within `outdatedTimeout` (30 s) is removed.
 * `tests/unit/presence-relay.test.ts` holds it to y-protocols' `Awareness`
 * on random sequences of updates, removals and quiet spells.
 */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import { outdatedTimeout } from "y-protocols/awareness";
import { encode } from "./encode";

/** JSON.stringify(null): a removed state on the wire. Stamped states are written by JSON.stringify, so nothing else means null. */
const REMOVED = "null";

interface Entry {
  clock: number;
  /** The state's JSON text; null once removed (the clock is kept). */
  state: string | null;
  /** Date.now() when an update of it was last taken. */
  lastUpdated: number;
}

/**
 * Client ids whose state an apply or a removal changed: `added` had none
 * before (or a removed one), `removed` has none now. `behind`: removed
 * clients the update brings back at a clock not newer than their removal's,
 * which were not taken (y-websocket reconnects with the clock it had, and
 * every peer would ignore that state too).
 */
export interface PresenceChange {
  added: number[];
  updated: number[];
  removed: number[];
  behind: number[];
}

export class PresenceRelay {
  private readonly entries = new Map<number, Entry>();

  /**
   * Takes an awareness update's entries that are newer than what is held;
   * null when it took none (the bytes need go nowhere). Throws on bytes that
   * are not an awareness update.
   */
  apply(update: Uint8Array, now = Date.now()): PresenceChange | null {
    const decoder = decoding.createDecoder(update);
    const change: PresenceChange = { added: [], updated: [], removed: [], behind: [] };
    const count = decoding.readVarUint(decoder);
    for (let i = 0; i < count; i++) {
      const clientId = decoding.readVarUint(decoder);
      const clock = decoding.readVarUint(decoder);
      const text = decoding.readVarString(decoder);
      const state = text === REMOVED ? null : text;
      const held = this.entries.get(clientId);
      const heldClock = held?.clock ?? 0;
      if (!(heldClock < clock || (heldClock === clock && state === null && held?.state != null))) {
        if (held?.state === null && state !== null) change.behind.push(clientId);
        continue;
      }
      // As y-protocols reports it: a removal of a client it has seen, even one already gone (peers then hear its newer clock).
      if (state === null) {
        if (held) change.removed.push(clientId);
      } else if (held?.state == null) change.added.push(clientId);
      else change.updated.push(clientId);
      this.entries.set(clientId, { clock, state, lastUpdated: now });
    }
    return change.added.length + change.updated.length + change.removed.length + change.behind.length > 0 ? change : null;
  }

  /** Removes clients' states (a connection left, or they went quiet): the ones that had one, and the update that tells peers; null when none had. */
  remove(clientIds: readonly number[]): { removed: number[]; update: Uint8Array } | null {
    const removed: number[] = [];
    for (const clientId of clientIds) {
      const held = this.entries.get(clientId);
      if (held?.state == null) continue;
      held.state = null;
      removed.push(clientId);
    }
    return removed.length > 0 ? { removed, update: this.encodeHeld(removed) } : null;
  }

  /** Clients whose state was not renewed within y-protocols' outdatedTimeout. */
  outdated(now = Date.now()): number[] {
    const ids: number[] = [];
    for (const [clientId, entry] of this.entries)
      if (entry.state !== null && now - entry.lastUpdated >= outdatedTimeout) ids.push(clientId);
    return ids;
  }

  /** Every present state as one update (a connection's greeting); null when nobody is present. */
  encodeAll(): Uint8Array | null {
    const present: number[] = [];
    for (const [clientId, entry] of this.entries) if (entry.state !== null) present.push(clientId);
    return present.length > 0 ? this.encodeHeld(present) : null;
  }

  /** The present states, parsed (for tests and diagnostics; the relay itself never parses them). */
  states(): Map<number, unknown> {
    const states = new Map<number, unknown>();
    for (const [clientId, entry] of this.entries) if (entry.state !== null) states.set(clientId, JSON.parse(entry.state));
    return states;
  }

  /** The clock held for a client (0 for one never seen), as y-protocols' meta keeps it. */
  clockOf(clientId: number): number {
    return this.entries.get(clientId)?.clock ?? 0;
  }

  /** What is held of these clients as the update y-protocols' encodeAwarenessUpdate writes: id, clock, state text ("null" when removed). */
  encodeHeld(clientIds: readonly number[]): Uint8Array {
    return encode((encoder) => {
      encoding.writeVarUint(encoder, clientIds.length);
      for (const clientId of clientIds) {
        const entry = this.entries.get(clientId);
        encoding.writeVarUint(encoder, clientId);
        encoding.writeVarUint(encoder, entry?.clock ?? 0);
        encoding.writeVarString(encoder, entry?.state ?? REMOVED);
      }
    });
  }
}
