/**
 * The presence relay answers as y-protocols' Awareness does (presence-relay.ts):
 * the same random sequences of updates, removals and quiet spells go to both,
 * and after every step they hold the same states at the same clocks, report
 * the same clients changed, and write the same removals.
 */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as prng from "lib0/prng";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as awarenessProtocol from "y-protocols/awareness";
import * as Y from "yjs";
import { PresenceRelay } from "@/server/collab/presence-relay";

const CLIENTS = [1, 2, 3, 4, 5];

/** An update's entries, by client id: its clock and its state's JSON text. */
function entriesOf(update: Uint8Array): Map<number, [number, string]> {
  const decoder = decoding.createDecoder(update);
  const entries = new Map<number, [number, string]>();
  const count = decoding.readVarUint(decoder);
  for (let i = 0; i < count; i++) {
    const clientId = decoding.readVarUint(decoder);
    entries.set(clientId, [decoding.readVarUint(decoder), decoding.readVarString(decoder)]);
  }
  return entries;
}

function randomUpdate(gen: prng.PRNG, clockOf: (clientId: number) => number): Uint8Array {
  const encoder = encoding.createEncoder();
  const ids = [...new Set(Array.from({ length: prng.int32(gen, 1, 3) }, () => prng.oneOf(gen, CLIENTS)))];
  encoding.writeVarUint(encoder, ids.length);
  for (const clientId of ids) {
    encoding.writeVarUint(encoder, clientId);
    encoding.writeVarUint(encoder, Math.max(0, clockOf(clientId) + prng.int32(gen, -1, 2)));
    const state = prng.bool(gen) && prng.bool(gen) ? null : { user: { name: `n${prng.int32(gen, 0, 3)}` }, at: prng.int32(gen, 0, 2) };
    encoding.writeVarString(encoder, JSON.stringify(state));
  }
  return encoding.toUint8Array(encoder);
}

describe("PresenceRelay against y-protocols' Awareness", () => {
  // y-protocols reads the clock through lib0's `getUnixTime`, bound to the real Date.now when it loads, so time is
  // not faked for it: a quiet spell moves its states' last updates back instead, which is the same to its timer.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`holds the same states, clocks and changes on seed ${seed}`, () => {
      const gen = prng.create(seed);
      const awareness = new awarenessProtocol.Awareness(new Y.Doc());
      awareness.setLocalState(null);
      const relay = new PresenceRelay();
      /** How far the relay's clock is ahead of the real one: the quiet spells so far. */
      let slept = 0;
      const now = () => Date.now() + slept;
      let reported: number[] = [];
      /** What the sequence went through, so a generator that stopped reaching a case fails the test. */
      const wasRemoved = new Set<number>();
      const seen = { ignored: 0, removedByUpdate: 0, backAfterRemoval: 0, removed: 0, timedOut: 0 };
      awareness.on("update", ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }) => {
        reported = [...added, ...updated, ...removed];
      });
      for (let step = 0; step < 300; step++) {
        reported = [];
        const roll = prng.int32(gen, 0, 9);
        if (roll < 7) {
          const update = randomUpdate(gen, (id) => awareness.meta.get(id)?.clock ?? 0);
          awarenessProtocol.applyAwarenessUpdate(awareness, update, "test");
          const change = relay.apply(update, now());
          const changed = change ? [...change.added, ...change.updated, ...change.removed] : [];
          expect(changed.sort()).toEqual(reported.sort());
          if (!change) seen.ignored += 1;
          seen.removedByUpdate += change?.removed.length ?? 0;
          seen.backAfterRemoval += change?.added.filter((id) => wasRemoved.has(id)).length ?? 0;
          for (const id of change?.removed ?? []) wasRemoved.add(id);
        } else if (roll < 9) {
          const ids = CLIENTS.filter(() => prng.bool(gen));
          awarenessProtocol.removeAwarenessStates(awareness, ids, "test");
          const removal = relay.remove(ids);
          seen.removed += removal?.removed.length ?? 0;
          for (const id of removal?.removed ?? []) wasRemoved.add(id);
          expect(removal?.removed ?? []).toEqual(reported);
          if (removal) expect(removal.update).toEqual(awarenessProtocol.encodeAwarenessUpdate(awareness, reported));
        } else {
          // A quiet spell: y-protocols' own timer removes what was not renewed; the relay is asked at the same moments.
          for (let tick = prng.int32(gen, 1, 12); tick > 0; tick--) {
            const spell = awarenessProtocol.outdatedTimeout / 10;
            for (const meta of awareness.meta.values()) meta.lastUpdated -= spell;
            slept += spell;
            vi.advanceTimersByTime(spell);
            const timedOut = relay.remove(relay.outdated(now()))?.removed ?? [];
            seen.timedOut += timedOut.length;
            for (const id of timedOut) wasRemoved.add(id);
          }
        }
        expect(relay.states()).toEqual(awareness.getStates());
        for (const id of CLIENTS) expect(relay.clockOf(id)).toBe(awareness.meta.get(id)?.clock ?? 0);
        const everyone = [...awareness.getStates().keys()];
        const all = relay.encodeAll();
        expect(all ? entriesOf(all) : new Map()).toEqual(
          everyone.length > 0 ? entriesOf(awarenessProtocol.encodeAwarenessUpdate(awareness, everyone)) : new Map(),
        );
      }
      for (const [what, count] of Object.entries(seen)) expect(count, what).toBeGreaterThan(0);
      awareness.destroy();
    });
  }
});
