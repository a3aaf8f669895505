/**
 * The live face's content rules and presence stamping, on the sync core
 * alone: a refused update never reaches a peer or storage, the typist's
 * client converges back through the repair, and what is accepted is stored.
 */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as awarenessProtocol from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import { describe, expect, it } from "vitest";
import * as Y from "yjs";
import { blockToY, sectionFromYDoc, sectionIntoYDoc } from "@/server/collab/codec";
import { type LiveConnection, LiveDoc, type PendingUpdate } from "@/server/collab/live-doc";
import { MAX_TEXT_BLOCK_CHARS } from "@/server/core/blocks";

const WRITER_ID = "0b7d3a52-1f7e-4d8e-9a51-5a3f9c2f4d10";
const OTHER_ID = "5d0c8f5e-8a43-4c1e-9d7b-1f2e3a4b5c6d";
const COMMENT = '<svc:comment id="c1">kept</svc:comment>';

interface TestConnection extends LiveConnection {
  received: Uint8Array[];
  refusals: string[];
  pauses: number;
  /** A client doc that takes in everything the server sends this connection. */
  client: Y.Doc;
}

function connection(userId: string, usableKeys: string[] = []): TestConnection {
  const client = new Y.Doc();
  const self: TestConnection = {
    received: [],
    refusals: [],
    pauses: 0,
    client,
    readOnly: false,
    agent: null,
    authorId: userId,
    droppedUpdates: 0,
    presence: { userId, name: `Name of ${userId.slice(0, 4)}` },
    typist: { userId, mayUseKey: (key) => usableKeys.includes(key) },
    send: (message) => {
      self.received.push(message);
      const decoder = decoding.createDecoder(message);
      if (decoding.readVarUint(decoder) !== 0) return;
      syncProtocol.readSyncMessage(decoder, encoding.createEncoder(), client, "server");
    },
    refused: (reason) => self.refusals.push(reason),
    pause: () => {
      self.pauses += 1;
    },
    resume: () => {
      self.pauses -= 1;
    },
  };
  return self;
}

function world(options: { maxPendingBytes?: number } = {}) {
  const seed = new Y.Doc();
  sectionIntoYDoc(seed, {
    name: "Plans",
    content: [
      { blockType: "text", text: `First ${COMMENT} block` },
      { blockType: "text", text: "Second block" },
    ],
  });
  const stored: PendingUpdate[] = [];
  const live = new LiveDoc(
    [Y.encodeStateAsUpdate(seed)],
    {
      store: async (updates) => {
        stored.push(...updates);
      },
    },
    { sectionRules: true, ...options },
  );
  const writer = connection(WRITER_ID, ["uploads/visible.png"]);
  const peer = connection(OTHER_ID);
  for (const each of [writer, peer]) {
    live.connect(each);
    Y.applyUpdate(each.client, Y.encodeStateAsUpdate(live.doc), "server");
  }
  return { live, writer, peer, stored };
}

/** Makes an edit in the writer's client doc and sends the update it made, as y-websocket does. */
function edit(live: LiveDoc, writer: TestConnection, change: (section: Y.Map<unknown>, doc: Y.Doc) => void): void {
  const updates: Uint8Array[] = [];
  const record = (update: Uint8Array, origin: unknown) => {
    if (origin !== "server") updates.push(update);
  };
  writer.client.on("update", record);
  writer.client.transact(() => change(writer.client.getMap("section"), writer.client));
  writer.client.off("update", record);
  for (const update of updates) {
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, 0);
    syncProtocol.writeUpdate(encoder, update);
    live.receive(writer, encoding.toUint8Array(encoder));
  }
}

const blocks = (section: Y.Map<unknown>) => section.get("blocks") as Y.Array<Y.Map<unknown>>;
const textOf = (section: Y.Map<unknown>, index: number) => blocks(section).get(index).get("text") as Y.Text;
const blockMap = (fields: Record<string, unknown>) => {
  const map = new Y.Map<unknown>();
  for (const [key, value] of Object.entries(fields)) map.set(key, value);
  return map;
};
const flush = () => new Promise((resolve) => setTimeout(resolve, 0));
const bytesOf = (messages: readonly Uint8Array[]) => Buffer.concat(messages.map((m) => Buffer.from(m))).toString("latin1");

describe("content rules on arrival", () => {
  it("accepts ordinary typing: broadcast, stored, credited", async () => {
    const { live, writer, peer, stored } = world();
    edit(live, writer, (section) => textOf(section, 1).insert(0, "Typed. "));
    await flush();
    expect(sectionFromYDoc(live.doc).content[1]).toEqual({ blockType: "text", text: "Typed. Second block" });
    expect(sectionFromYDoc(peer.client).content[1]).toEqual({ blockType: "text", text: "Typed. Second block" });
    expect(stored.map((u) => u.authorId)).toEqual([WRITER_ID]);
    expect(writer.refusals).toEqual([]);
  });

  it("accepts handling a block: an image's alt text and caption set, the block moved (a copy in its new place), removed and put back", async () => {
    const { live, writer, peer } = world();
    const image = { blockType: "image", type: "storage", mediaType: "image/png", key: "uploads/visible.png" } as const;
    edit(live, writer, (section) => blocks(section).push([blockToY(image)]));
    edit(live, writer, (section) => {
      blocks(section).get(2).set("alt", "A blue dot");
      blocks(section).get(2).set("caption", "The smallest photo");
    });
    const described = { ...image, alt: "A blue dot", caption: "The smallest photo" };
    edit(live, writer, (section) => {
      blocks(section).delete(2, 1);
      blocks(section).insert(0, [blockToY(described)]);
    });
    await flush();
    expect(writer.refusals).toEqual([]);
    expect(sectionFromYDoc(peer.client).content.map((b) => b.blockType)).toEqual(["image", "text", "text"]);
    expect(sectionFromYDoc(live.doc).content[0]).toEqual(described);
    // Removed, then put back by Undo: the same key, no longer in the section, is still one the typist may use.
    edit(live, writer, (section) => blocks(section).delete(0, 1));
    edit(live, writer, (section) => blocks(section).insert(0, [blockToY(described)]));
    await flush();
    expect(writer.refusals).toEqual([]);
    expect(sectionFromYDoc(live.doc).content[0]).toEqual(described);
  });

  const refusedEdits: Array<[string, (section: Y.Map<unknown>, doc: Y.Doc) => void, RegExp]> = [
    [
      "an image caption past its limit",
      (section) =>
        blocks(section).push([
          blockMap({ blockType: "image", type: "url", mediaType: "image/png", url: "https://x.test/a.png", caption: "c".repeat(2_001) }),
        ]),
      /caption/,
    ],
    ["a NUL character", (section) => textOf(section, 1).insert(0, "bad\u0000byte"), /^block 2 holds a NUL/],
    [
      "typing in two blocks at once, a NUL in the second",
      (section) => {
        textOf(section, 0).insert(0, "Fine. ");
        textOf(section, 1).insert(0, "bad\u0000byte");
      },
      /^block 2 holds a NUL/,
    ],
    ["a text block past its limit", (section) => textOf(section, 1).insert(0, "x".repeat(MAX_TEXT_BLOCK_CHARS)), /^block 2 is longer than/],
    ["a 400-character name", (section) => (section.get("name") as Y.Text).insert(0, "n".repeat(400)), /name/],
    ["a line break in the name", (section) => (section.get("name") as Y.Text).insert(2, "\n"), /name/],
    ["an unknown block type", (section) => blocks(section).push([blockMap({ blockType: "script", src: "x" })]), /block 3/],
    [
      "a CSV block whose headers is a string",
      (section) =>
        blocks(section).push([
          blockMap({
            blockType: "csv",
            type: "storage",
            mediaType: "text/csv",
            key: "uploads/visible.png",
            filename: "a.csv",
            headers: "a,b",
            rowCount: 1,
          }),
        ]),
      /headers/,
    ],
    [
      "a javascript: image URL",
      (section) =>
        blocks(section).push([blockMap({ blockType: "image", type: "url", mediaType: "image/png", url: "javascript:alert(1)" })]),
      /block 3/,
    ],
    [
      "a storage key the typist cannot see",
      (section) =>
        blocks(section).push([blockMap({ blockType: "image", type: "storage", mediaType: "image/png", key: "uploads/secret.png" })]),
      /storage key/,
    ],
    [
      "a new comment credited to someone else",
      (section) => textOf(section, 1).insert(0, `<svc:comment-new body="Say this" author="${OTHER_ID}">x</svc:comment-new>`),
      /author/,
    ],
    [
      "a new comment with no author",
      (section) => textOf(section, 1).insert(0, '<svc:comment-new body="Say this">x</svc:comment-new>'),
      /author/,
    ],
    ["an existing comment's markup removed", (section) => textOf(section, 0).delete(6, COMMENT.length), /comment/],
    [
      "a comment id that is not the section's",
      (section) => textOf(section, 1).insert(0, '<svc:comment id="c9">x</svc:comment>'),
      /comment/,
    ],
    ["unbalanced comment markup", (section) => textOf(section, 1).insert(0, '<svc:comment-new body="b">open'), /comment markup/],
    ["another key on the section", (section) => section.set("script", "alert(1)"), /only its name and its blocks/],
    [
      "an embed in a text block",
      (section) => textOf(section, 1).insertEmbed(0, { src: "http://tracker.example/x" }),
      /^block 2 may hold only characters/,
    ],
    ["a shared map inside the name", (section) => (section.get("name") as Y.Text).insertEmbed(0, new Y.Map()), /only characters/],
    ["a block that is not a map", (section) => blocks(section).push(["plain" as unknown as Y.Map<unknown>]), /shared map/],
    [
      "a block removed and a bad one added in one change",
      (section) => {
        blocks(section).delete(1, 1);
        blocks(section).push([blockMap({ blockType: "csv", headers: "x" })]);
      },
      /block 2/,
    ],
  ];

  for (const [what, change, reason] of refusedEdits) {
    it(`refuses ${what}: undone for the typist, never seen by a peer, never stored as sent`, async () => {
      const { live, writer, peer, stored } = world();
      const before = sectionFromYDoc(live.doc);
      const peerBytesBefore = peer.received.length;
      edit(live, writer, change);
      await flush();
      expect(writer.refusals).toHaveLength(1);
      expect(writer.refusals[0]).toMatch(reason);
      expect(sectionFromYDoc(live.doc)).toEqual(before);
      // The typist's client took the repair and is back where the server is.
      expect(sectionFromYDoc(writer.client)).toEqual(before);
      expect(sectionFromYDoc(peer.client)).toEqual(before);
      const peerBytes = bytesOf(peer.received.slice(peerBytesBefore));
      expect(peerBytes).not.toContain("\u0000byte");
      expect(peerBytes).not.toContain("javascript:");
      expect(peerBytes).not.toContain("Say this");
      expect(stored.every((u) => u.origin === "server" && u.authorId === null)).toBe(true);
      // Typing goes on afterwards.
      edit(live, writer, (section) => textOf(section, 0).insert(0, "Then. "));
      expect(sectionFromYDoc(peer.client).content[0]).toEqual({ blockType: "text", text: `Then. First ${COMMENT} block` });
      expect(sectionFromYDoc(writer.client)).toEqual(sectionFromYDoc(live.doc));
    });
  }

  it("refuses a write to another root unapplied", () => {
    const { live, writer, peer } = world();
    const peerBytesBefore = peer.received.length;
    edit(live, writer, (_section, doc) => doc.getText("elsewhere").insert(0, "junk"));
    expect(writer.refusals).toEqual(["an edit may only change the section"]);
    expect(live.doc.share.has("elsewhere")).toBe(false);
    expect(peer.received.length).toBe(peerBytesBefore);
  });

  it("lets a person pass through an empty name (refused only at commit)", () => {
    const { live, writer } = world();
    edit(live, writer, (section) => (section.get("name") as Y.Text).delete(0, "Plans".length));
    edit(live, writer, (section) => (section.get("name") as Y.Text).insert(0, "Roadmap"));
    expect(writer.refusals).toEqual([]);
    expect(sectionFromYDoc(live.doc).name).toBe("Roadmap");
  });

  it("accepts a comment the typist signs, a key it can see, and text moved around an existing comment", () => {
    const { live, writer } = world();
    edit(live, writer, (section) => textOf(section, 1).insert(0, `<svc:comment-new body="Mine" author="${WRITER_ID}">x</svc:comment-new>`));
    edit(live, writer, (section) =>
      blocks(section).push([blockMap({ blockType: "image", type: "storage", mediaType: "image/png", key: "uploads/visible.png" })]),
    );
    edit(live, writer, (section) => textOf(section, 0).insert(0, "Before "));
    expect(writer.refusals).toEqual([]);
    expect(sectionFromYDoc(live.doc).content).toHaveLength(3);
  });

  it("a block a server change left with broken markup still takes typing, and refuses a new comment until it is mended", () => {
    const { live, writer } = world();
    // A server-side change (a revert meeting a comment typed at the same place) leaves half a tag behind.
    const server = new Y.Doc();
    Y.applyUpdate(server, Y.encodeStateAsUpdate(live.doc));
    const updates: Uint8Array[] = [];
    server.on("update", (update: Uint8Array) => updates.push(update));
    textOf(server.getMap("section"), 1).insert(0, '<svc:comment-new body="half"');
    textOf(server.getMap("section"), 1).insert(0, "<svc:comment-new>");
    for (const update of updates) live.applyStored(update);
    edit(live, writer, (section) => textOf(section, 1).insert(textOf(section, 1).length, " typed on"));
    expect(writer.refusals).toEqual([]);
    edit(live, writer, (section) =>
      textOf(section, 1).insert(textOf(section, 1).length, `<svc:comment-new body="b" author="${WRITER_ID}">x</svc:comment-new>`),
    );
    expect(writer.refusals).toEqual(["a new comment needs well-formed comment markup around it"]);
  });

  it("pauses connections while too much waits to be stored, and resumes them once stored", async () => {
    const { live, writer, peer } = world({ maxPendingBytes: 1_000 });
    edit(live, writer, (section) => textOf(section, 1).insert(0, "y".repeat(2_000)));
    expect(writer.pauses).toBe(1);
    expect(peer.pauses).toBe(1);
    await live.settled();
    expect(writer.pauses).toBe(0);
    expect(peer.pauses).toBe(0);
  });
});

describe("presence", () => {
  function presenceOf(live: LiveDoc, clientId: number): Record<string, unknown> | undefined {
    return live.presence.states().get(clientId) as Record<string, unknown> | undefined;
  }

  function sendPresence(live: LiveDoc, from: TestConnection, clientId: number, state: unknown): void {
    const doc = new Y.Doc();
    doc.clientID = clientId;
    const awareness = new awarenessProtocol.Awareness(doc);
    awareness.setLocalState(state as Record<string, unknown>);
    const encoder = encoding.createEncoder();
    encoding.writeVarUint(encoder, 1);
    encoding.writeVarUint8Array(encoder, awarenessProtocol.encodeAwarenessUpdate(awareness, [clientId]));
    live.receive(from, encoding.toUint8Array(encoder));
    awareness.destroy();
  }

  it("stamps who the connection is and passes on only colours and a cursor", () => {
    const { live, writer } = world();
    sendPresence(live, writer, 101, {
      user: {
        userId: OTHER_ID,
        name: "The Owner",
        color: "red; background-image:url(http://tracker.example/x)",
        colorLight: "hsl(210 62% 38% / 0.2)",
      },
      cursor: { anchor: { type: { client: 1, clock: 2 }, tname: null, item: { client: 3, clock: 4 }, assoc: 0 }, head: { assoc: 0 } },
      extra: "x".repeat(10_000),
    });
    expect(presenceOf(live, 101)).toEqual({
      user: { userId: WRITER_ID, name: "Name of 0b7d", color: "#6b7280", colorLight: "hsl(210 62% 38% / 0.2)" },
      cursor: { anchor: { type: { client: 1, clock: 2 }, tname: null, item: { client: 3, clock: 4 }, assoc: 0 }, head: { assoc: 0 } },
    });
  });

  it("drops a connection's claim on another connection's client id", () => {
    const { live, writer, peer } = world();
    sendPresence(live, peer, 202, { user: { color: "#112233" } });
    sendPresence(live, writer, 202, { user: { color: "#445566" } });
    expect(presenceOf(live, 202)?.user).toMatchObject({ userId: OTHER_ID, color: "#112233" });
  });
});
