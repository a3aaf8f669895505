/** The sync core alone, with its storage hook in the test's hands: broadcast on arrival, stored behind it in batches, read-only dropped. */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as syncProtocol from "y-protocols/sync";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { type LiveConnection, LiveDoc, type PendingUpdate } from "@/server/collab/live-doc";
import { awarenessMessage } from "../helpers/awareness-message";

function connection(readOnly = false): LiveConnection & { received: Uint8Array[] } {
  const received: Uint8Array[] = [];
  const authorId = readOnly ? "reader" : "writer";
  return {
    received,
    readOnly,
    authorId,
    agent: null,
    droppedUpdates: 0,
    send: (m) => received.push(m),
    presence: { userId: authorId, name: authorId },
    typist: { userId: authorId, mayUseKey: () => false },
    refused: () => {},
    pause: () => {},
    resume: () => {},
  };
}

/** A y-websocket sync "update" message carrying one edit of a fresh doc. */
function updateMessage(text: string): Uint8Array {
  const doc = new Y.Doc();
  let update: Uint8Array = new Uint8Array();
  doc.on("update", (u: Uint8Array) => {
    update = u;
  });
  doc.getText("t").insert(0, text);
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, 0);
  syncProtocol.writeUpdate(encoder, update);
  return encoding.toUint8Array(encoder);
}

function controlledStore() {
  const batches: PendingUpdate[][] = [];
  const releases: Array<() => void> = [];
  return {
    batches,
    release: () => releases.shift()?.(),
    store: (updates: readonly PendingUpdate[]) =>
      new Promise<void>((resolve) => {
        batches.push([...updates]);
        releases.push(resolve);
      }),
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("LiveDoc", () => {
  it("applies and broadcasts an update on arrival, stores it behind, and stores what arrives meanwhile as one batch", async () => {
    const storage = controlledStore();
    const durable: number[] = [];
    const live = new LiveDoc([], { store: storage.store, stored: (updates) => durable.push(updates.length) });
    const writer = connection();
    const peer = connection();
    live.connect(writer);
    live.connect(peer);
    const greeted = peer.received.length;
    live.receive(writer, updateMessage("a"));
    // Broadcast before any store was even asked for.
    expect(peer.received.length).toBe(greeted + 1);
    expect(live.doc.getText("t").length).toBe(1);
    await tick();
    live.receive(writer, updateMessage("b"));
    live.receive(writer, updateMessage("c"));
    expect(peer.received.length).toBe(greeted + 3);
    await tick();
    expect(storage.batches.map((b) => b.length)).toEqual([1]);
    expect(durable).toEqual([]);
    let settled = false;
    const settling = live.settled().then(() => {
      settled = true;
    });
    storage.release();
    await tick();
    expect(durable).toEqual([1]);
    expect(storage.batches.map((b) => b.length)).toEqual([1, 2]);
    expect(settled).toBe(false);
    storage.release();
    await settling;
    expect(durable).toEqual([1, 2]);
    expect(storage.batches.flat().every((u) => u.authorId === "writer")).toBe(true);
    // The writer never gets its own update back.
    expect(writer.received.length).toBe(1);
  });

  it("settles once what it had received is stored, not what arrives after, asking its store to hurry meanwhile", async () => {
    const storage = controlledStore();
    let hurried = 0;
    const live = new LiveDoc([], { store: storage.store, hurry: () => (hurried += 1) });
    const writer = connection();
    live.connect(writer);
    await live.settled();
    expect(hurried).toBe(0);
    live.receive(writer, updateMessage("a"));
    await tick();
    expect(hurried).toBe(0);
    let settled = false;
    const settling = live.settled().then(() => {
      settled = true;
    });
    expect(hurried).toBe(1);
    // Typing goes on: "b" arrives while "a" is being stored, and is stored in the next batch.
    live.receive(writer, updateMessage("b"));
    storage.release();
    await tick();
    expect(settled).toBe(true);
    expect(storage.batches.map((b) => b.length)).toEqual([1, 1]);
    // Someone waiting for "b" hurries its batch too.
    const second = live.settled();
    expect(hurried).toBe(2);
    storage.release();
    await settling;
    await second;
    // Nobody waits any more: the next batch is not hurried.
    live.receive(writer, updateMessage("c"));
    await tick();
    storage.release();
    await tick();
    expect(hurried).toBe(2);
  });

  it("applies an update the server stored itself at once and hands it on as durable, without storing it again", () => {
    const storage = controlledStore();
    const durable: string[] = [];
    const live = new LiveDoc([], { store: storage.store, stored: (updates) => durable.push(...updates.map((u) => String(u.origin))) });
    const peer = connection();
    live.connect(peer);
    const greeted = peer.received.length;
    const source = new Y.Doc();
    let update: Uint8Array = new Uint8Array();
    source.on("update", (u: Uint8Array) => {
      update = u;
    });
    source.getText("t").insert(0, "rebased");
    live.applyStored(update);
    expect(live.doc.getText("t").toString()).toBe("rebased");
    expect(peer.received.length).toBe(greeted + 1);
    expect(durable).toEqual(["server"]);
    expect(storage.batches).toEqual([]);
  });

  it("drops and counts a read-only connection's updates, storing and broadcasting nothing", async () => {
    const storage = controlledStore();
    const live = new LiveDoc([], { store: storage.store });
    const reader = connection(true);
    const peer = connection();
    live.connect(reader);
    live.connect(peer);
    const greeted = peer.received.length;
    live.receive(reader, updateMessage("vandal"));
    await live.settled();
    expect(reader.droppedUpdates).toBe(1);
    expect(storage.batches).toEqual([]);
    expect(peer.received.length).toBe(greeted);
    expect(live.doc.getText("t").length).toBe(0);
  });

  it("applies several updates handed over in one tick (another process's burst) without storing them again", async () => {
    const storage = controlledStore();
    const live = new LiveDoc([], { store: storage.store });
    const source = new Y.Doc();
    const updates: Uint8Array[] = [];
    source.on("update", (u: Uint8Array) => updates.push(u));
    for (const ch of "xyz") source.getText("t").insert(0, ch);
    for (const u of updates) live.applyRemote(u);
    await live.settled();
    expect(live.doc.getText("t").toString()).toBe("zyx");
    expect(storage.batches).toEqual([]);
  });

  it("tells its owner when a store fails and takes no more updates (the owner closes the room; clients hand their edits over again)", async () => {
    const failures: unknown[] = [];
    const live = new LiveDoc([], {
      store: () => Promise.reject(new Error("database down")),
      failed: (error) => failures.push(error),
    });
    const writer = connection();
    const peer = connection();
    live.connect(writer);
    live.connect(peer);
    const greeted = peer.received.length;
    live.receive(writer, updateMessage("kept by the clients"));
    await expect(live.settled()).rejects.toThrow("database down");
    expect(failures).toHaveLength(1);
    expect(peer.received.length).toBe(greeted + 1);
    live.receive(writer, updateMessage("after the failure"));
    expect(peer.received.length).toBe(greeted + 1);
  });
});

/** The document updates among the messages a connection received, applied to a doc of its own: what its client holds. */
function clientDocOf(received: readonly Uint8Array[]): Y.Doc {
  const doc = new Y.Doc();
  for (const message of received) {
    const decoder = decoding.createDecoder(message);
    if (decoding.readVarUint(decoder) !== 0) continue;
    const syncType = decoding.readVarUint(decoder);
    if (syncType === syncProtocol.messageYjsUpdate || syncType === syncProtocol.messageYjsSyncStep2)
      Y.applyUpdate(doc, decoding.readVarUint8Array(decoder));
  }
  return doc;
}

/** One writer's edits, each as the update its doc emitted. */
function editsOf(...texts: string[]): Uint8Array[] {
  const source = new Y.Doc();
  const updates: Uint8Array[] = [];
  source.on("update", (u: Uint8Array) => updates.push(u));
  for (const text of texts) source.getText("t").insert(source.getText("t").length, text);
  return updates;
}

describe("LiveDoc passing updates on", () => {
  it("passes an update on to the other connections, and one that changes nothing not at all", () => {
    let changes = 0;
    const live = new LiveDoc([], { store: () => Promise.resolve(), changed: () => changes++ });
    const writer = connection();
    const peer = connection();
    live.connect(writer);
    live.connect(peer);
    const greeted = peer.received.length;
    const message = updateMessage("a");
    live.receive(writer, message);
    expect(peer.received.length).toBe(greeted + 1);
    expect(changes).toBe(1);
    live.receive(writer, message);
    const [remote] = editsOf("b");
    live.applyRemote(remote!);
    live.applyRemote(remote!);
    expect(peer.received.length).toBe(greeted + 2);
    expect(writer.received.length).toBe(greeted + 1);
    expect(changes).toBe(2);
    expect(clientDocOf(peer.received).getText("t").toString()).toBe(live.doc.getText("t").toString());
  });

  it("brings its clients every edit when another process's updates arrive out of order, whichever way the gap is filled", () => {
    const [first, second, third, fourth] = editsOf("one ", "two ", "three ", "four");
    const fromStorage = new Y.Doc();
    for (const u of [first!, second!]) Y.applyUpdate(fromStorage, u);
    for (const fill of ["from storage", "from the bus"] as const) {
      const live = new LiveDoc([], { store: () => Promise.resolve() });
      const writer = connection();
      const peer = connection();
      live.connect(writer);
      live.connect(peer);
      live.applyRemote(first!);
      // Hangs on the second edit, which never came: the doc holds it pending, and its clients get it once it is placed.
      live.applyRemote(third!);
      expect(live.lacksEdits).toBe(true);
      // A connection types meanwhile: its edit, and only that, is new to the doc.
      const typed = updateMessage("typed ");
      live.receive(writer, typed);
      // A room catching up from storage applies the draft's whole state.
      if (fill === "from storage") live.applyRemote(Y.encodeStateAsUpdate(fromStorage));
      else live.applyRemote(second!);
      expect(live.lacksEdits).toBe(false);
      live.applyRemote(fourth!);
      const text = live.doc.getText("t").toString();
      expect(text).toContain("one two three four");
      expect(clientDocOf(peer.received).getText("t").toString()).toBe(text);
      // The writer's client holds its own edit and what it was sent.
      const writerHolds = clientDocOf([typed, ...writer.received]).getText("t");
      expect(writerHolds.toString()).toBe(text);
    }
  });
});

describe("LiveDoc presence", () => {
  it("passes a connection's stamped presence to every other connection and to other processes, not back to its sender", () => {
    const published: Uint8Array[] = [];
    const live = new LiveDoc([], { store: async () => {}, awarenessChanged: (update) => published.push(update) });
    const writer = connection();
    const peer = connection();
    live.connect(writer);
    live.connect(peer);
    const [writerGreeted, peerGreeted] = [writer.received.length, peer.received.length];
    live.receive(writer, awarenessMessage(4242, 1, { user: { name: "claimed", color: "#123456" } }));
    expect(writer.received.length).toBe(writerGreeted);
    expect(peer.received.length).toBe(peerGreeted + 1);
    expect(published).toHaveLength(1);
    expect(live.presence.states().get(4242)).toEqual({
      user: { userId: "writer", name: "writer", color: "#123456", colorLight: "#6b728033" },
    });
    // What the peer received is the stamped state, the same bytes other processes get.
    const sent = peer.received.at(-1)!;
    expect(Buffer.from(sent).includes(Buffer.from(published[0]!))).toBe(true);
  });

  it("tells a client back at the clock of its removal that it was removed, so it sends its state again at a newer clock", () => {
    const live = new LiveDoc([], { store: async () => {} });
    const first = connection();
    const peer = connection();
    live.connect(first);
    live.connect(peer);
    live.receive(first, awarenessMessage(77, 4, { user: { color: "#111111" } }));
    live.disconnect(first);
    // y-websocket reconnects with the state and clock it had: peers hold that clock as removed and would ignore it.
    const again = connection();
    live.connect(again);
    const before = { again: again.received.length, peer: peer.received.length };
    live.receive(again, awarenessMessage(77, 4, { user: { color: "#111111" } }));
    expect(live.presence.states().has(77)).toBe(false);
    expect(peer.received.length).toBe(before.peer);
    expect(again.received.slice(before.again)).toEqual([awarenessMessage(77, 4, null)]);
    // What y-protocols' Awareness does with that: a newer clock, and its state again.
    live.receive(again, awarenessMessage(77, 5, { user: { color: "#111111" } }));
    expect(live.presence.states().get(77)).toMatchObject({ user: { color: "#111111" } });
    expect(peer.received.length).toBe(before.peer + 1);
    live.destroy();
  });

  it("gives a client id back to the connection that brings it in again after a removal, and removes it when that one leaves", () => {
    const live = new LiveDoc([], { store: async () => {} });
    const first = connection();
    const peer = connection();
    live.connect(first);
    live.connect(peer);
    live.receive(first, awarenessMessage(77, 1, { user: { color: "#111111" } }));
    live.disconnect(first);
    expect(live.presence.states().has(77)).toBe(false);
    // The same browser reconnects (y-websocket keeps its client id) with its state at a newer clock.
    const again = connection();
    live.connect(again);
    live.receive(again, awarenessMessage(77, 2, { user: { color: "#222222" } }));
    expect(live.presence.states().get(77)).toMatchObject({ user: { color: "#222222" } });
    // Nobody else may speak for it now,
    const intruder = connection();
    live.connect(intruder);
    live.receive(intruder, awarenessMessage(77, 3, { user: { color: "#333333" } }));
    expect(live.presence.states().get(77)).toMatchObject({ user: { color: "#222222" } });
    // and it goes with the connection that brought it back (no cursor left behind for 30 s).
    const before = peer.received.length;
    live.disconnect(again);
    expect(live.presence.states().has(77)).toBe(false);
    expect(peer.received.length).toBe(before + 1);
    live.destroy();
  });
});
