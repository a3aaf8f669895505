/**
 * The live face checks everything it is sent, through the faces where each
 * gap showed: stock y-websocket providers and raw sockets, an MCP SDK client
 * that validates every result against the tool's output schema.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import WebSocket from "ws";
import * as Y from "yjs";
import { MAX_LIVE_MESSAGE_BYTES, MAX_LIVE_MESSAGES_PER_SECOND, MAX_ROOM_PENDING_BYTES } from "@/server/core/limits";
import { forgetPresenceOfThoseGone } from "@/app/documents/[documentId]/live/live-room";
import { awarenessMessage } from "../helpers/awareness-message";
import { blockMap, connectLive, corruptDraft, type LiveClient, roomName, waitFor } from "../helpers/collab";
import { testDatabaseUrl } from "../helpers/database";
import { callMcp, callMcpError, mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let agentOfOwner: Client;
let agentOfMember: Client;
const clients: LiveClient[] = [];

const text = (t: string) => ({ blockType: "text", text: t });
const asOwner = <T = Record<string, unknown>>(tool: "documents" | "sections" | "merge_requests", args: Record<string, unknown>) =>
  server.callToolAsSent(tool, owner.userId, args) as Promise<T>;

async function live(room: string, params: Record<string, string>): Promise<LiveClient> {
  const client = await connectLive(server.url, room, params);
  clients.push(client);
  return client;
}

/** The close code and reason of the next time the server closes this client's socket. */
function nextClose(client: LiveClient): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => {
    const listener = (event: { code: number; reason: string } | null) => {
      client.provider.off("connection-close", listener);
      resolve({ code: event?.code ?? 0, reason: event?.reason ?? "" });
    };
    client.provider.on("connection-close", listener);
  });
}

const received = (client: LiveClient) => Buffer.concat(client.frames).toString("latin1");

async function newDocument(path: string, sections: Array<{ name: string; content: unknown[] }>) {
  return asOwner<{ documentId: string; sectionIds: string[] }>("documents", { action: "create", path, sections });
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  agentOfOwner = await server.mcpClient(owner.token);
  agentOfMember = await server.mcpClient(member.token);
  // The SDK validates each result against the output schema it listed.
  await agentOfOwner.listTools();
  await agentOfMember.listTools();
});

afterAll(async () => {
  for (const c of clients) c.close();
  await agentOfOwner.close();
  await agentOfMember.close();
  await server.close();
});

describe("content the sections tool refuses never enters the draft", () => {
  const bad: Array<[string, (doc: Y.Doc) => void, RegExp]> = [
    ["a typed NUL character", (doc) => textOf(doc).insert(0, "nul\u0000here"), /NUL/],
    ["a text block past 1,000,000 characters", (doc) => textOf(doc).insert(0, "x".repeat(1_200_000)), /longer than/],
    ["a 400-character name", (doc) => nameOf(doc).insert(0, "n".repeat(400)), /name/],
    ["an unknown block type", (doc) => blocksOf(doc).push([blockMap({ blockType: "marquee" })]), /block 2/],
    [
      "a CSV block whose headers is a string",
      (doc) =>
        blocksOf(doc).push([
          blockMap({ blockType: "csv", type: "storage", mediaType: "text/csv", key: "k", filename: "a.csv", headers: "a", rowCount: 1 }),
        ]),
      /headers/,
    ],
    [
      "a javascript: image URL",
      (doc) => blocksOf(doc).push([blockMap({ blockType: "image", type: "url", mediaType: "image/png", url: "javascript:alert(1)" })]),
      /url|URL/,
    ],
    [
      "a new comment in the owner's name",
      (doc) => textOf(doc).insert(0, `<svc:comment-new body="Approve it" author="${owner.userId}">x</svc:comment-new>`),
      /author/,
    ],
    [
      "a storage key the typist may not use",
      (doc) =>
        blocksOf(doc).push([
          blockMap({ blockType: "file", type: "storage", mediaType: "application/pdf", key: "uploads/of-someone-else", filename: "f.pdf" }),
        ]),
      /storage key/,
    ],
  ];

  test("each is undone for its typist, closed with 4400 and its reason, never seen by a peer; commit and read stay whole", async () => {
    const created = await newDocument("live-face/content", [{ name: "Plan", content: [text("Start")] }]);
    const room = roomName(created.documentId, "main", created.sectionIds[0]);
    const watcher = await live(room, { token: owner.token });
    for (const [what, change, reason] of bad) {
      const typist = await live(room, { token: member.token });
      const closed = nextClose(typist);
      typist.doc.transact(() => change(typist.doc));
      const { code, reason: said } = await closed;
      expect(code, what).toBe(4400);
      expect(said, what).toMatch(reason);
      // The repair reached the typist before the close: its doc is the section again.
      expect(typist.section(), what).toEqual({ name: "Plan", content: [text("Start")] });
      typist.provider.shouldConnect = false;
      typist.close();
    }
    const seen = received(watcher);
    for (const leaked of ["nul\u0000here", "marquee", "javascript:", "Approve it", "of-someone-else", "n".repeat(400)])
      expect(seen).not.toContain(leaked);
    expect(watcher.section()).toEqual({ name: "Plan", content: [text("Start")] });

    // Typing goes on; the draft reads and commits through the validated faces.
    watcher.text().insert(5, " here");
    await waitFor(() => watcher.text().toString() === "Start here");
    await expect
      .poll(async () => {
        const read = await callMcp<{ sections: Array<{ content: unknown[] }> }>(agentOfMember, "read", {
          documentId: created.documentId,
          includeDraft: true,
        });
        return read.sections[0]!.content;
      })
      .toEqual([text("Start here")]);
    const committed = await callMcp(agentOfOwner, "documents", { action: "commit", documentId: created.documentId, branchName: "main" });
    expect(committed).toMatchObject({ changed: true });
  });

  test("a name emptied in the draft is refused at commit with a message naming the section, and nothing is committed", async () => {
    const created = await newDocument("live-face/empty-name", [{ name: "Title", content: [text("Body")] }]);
    const editor = await live(roomName(created.documentId, "main", created.sectionIds[0]), { token: owner.token });
    nameOf(editor.doc).delete(0, "Title".length);
    await expect
      .poll(
        async () =>
          (await asOwner<{ draft: { uncommittedChanges: boolean } }>("documents", { action: "get", documentId: created.documentId })).draft
            .uncommittedChanges,
      )
      .toBe(true);
    const refused = await callMcpError(agentOfOwner, "documents", { action: "commit", documentId: created.documentId, branchName: "main" });
    expect(refused.code).toBe("VALIDATION_FAILED");
    expect(refused.message).toContain(created.sectionIds[0]);
    // `read` of the draft still answers inside its output schema (the client validated it).
    const read = await callMcp<{ sections: Array<{ name: string }> }>(agentOfOwner, "read", {
      documentId: created.documentId,
      includeDraft: true,
    });
    expect(read.sections[0]!.name).toBe("");
    const log = await callMcp<{ commits: unknown[] }>(agentOfOwner, "documents", { action: "log", documentId: created.documentId });
    expect(log.commits).toHaveLength(1);
  });
});

describe("a draft stored before the live face checked what it is sent", () => {
  test("read answers it inside its output schema (a section the schema refuses as its head version), and commit refuses it naming the section", async () => {
    const created = await newDocument("live-face/stored-before", [
      { name: "Figures", content: [text("Before the table.")] },
      { name: "Notes", content: [text("Notes stay.")] },
    ]);
    const { documentId } = created;
    const [figuresId, notesId] = created.sectionIds as [string, string];
    const at = (sectionId: string) => ({ documentId, branchName: "main", sectionId, authorId: owner.userId });
    // The block: a CSV block whose headers is a string.
    await corruptDraft(server.db, at(figuresId), (section) =>
      (section.get("blocks") as Y.Array<Y.Map<unknown>>).push([
        blockMap({ blockType: "csv", type: "storage", mediaType: "text/csv", key: "k", filename: "q.csv", headers: "a,b", rowCount: 2 }),
      ]),
    );
    await corruptDraft(server.db, at(notesId), (section) =>
      ((section.get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text).insert(0, "Drafted. "),
    );
    // The SDK client validates the answer against read's output schema: one bad section no longer fails the whole read.
    const read = await callMcp<{ sections: Array<{ content: unknown[] }> }>(agentOfOwner, "read", { documentId, includeDraft: true });
    expect(read.sections.map((s) => s.content)).toEqual([[text("Before the table.")], [text("Drafted. Notes stay.")]]);
    const refused = await callMcpError(agentOfOwner, "documents", { action: "commit", documentId, branchName: "main" });
    expect(refused.code).toBe("VALIDATION_FAILED");
    expect(refused.message).toContain(figuresId);
    const log = await callMcp<{ commits: unknown[] }>(agentOfOwner, "documents", { action: "log", documentId });
    expect(log.commits).toHaveLength(1);
  });
});

describe("message size", () => {
  test(`a message over ${MAX_LIVE_MESSAGE_BYTES} bytes is closed with 1009 before it is stored, and the room goes on`, async () => {
    const created = await newDocument("live-face/size", [{ name: "Big", content: [text("small")] }]);
    const room = roomName(created.documentId, "main", created.sectionIds[0]);
    const socket = new WebSocket(`${server.url.replace(/^http/, "ws")}/collab/${room}?token=${member.token}`);
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    // A sync-update header then 80 MB: the server refuses it from the frame header, without buffering it.
    socket.send(Buffer.concat([Buffer.from([0, 2]), Buffer.alloc(80 * 1024 * 1024, 120)]));
    expect(await closed).toBe(1009);
    const editor = await live(room, { token: owner.token });
    expect(editor.text().toString()).toBe("small");
  });
});

describe("updates waiting to be stored", () => {
  test.skipIf(!testDatabaseUrl())(
    `a room with over ${MAX_ROOM_PENDING_BYTES} bytes not yet stored stops reading its sockets until storage catches up, and loses nothing`,
    async () => {
      const created = await newDocument("live-face/pending", [{ name: "Bulk", content: [text("start")] }]);
      const room = roomName(created.documentId, "main", created.sectionIds[0]);
      const writer = await live(room, { token: member.token });
      const watcher = await live(room, { token: owner.token });
      // Storage stalls: the draft log is locked, so what arrives is broadcast but cannot be stored.
      const blocker = postgres(server.database.url!, { max: 1, onnotice: () => {} });
      await blocker.unsafe("begin");
      await blocker.unsafe("lock table draft_updates in access exclusive mode");
      try {
        // Six blocks of 1,000,000 three-byte characters: six messages of ~3 MB (each under the message limit), 18 MB in all.
        for (let i = 0; i < 6; i++) {
          writer.doc.transact(() => blocksOf(writer.doc).push([blockMap({ blockType: "text", text: new Y.Text("€".repeat(1_000_000)) })]));
        }
        await waitFor(() => blocksOf(watcher.doc).length === 7, 60_000, "the six big blocks at the watcher");
        // Past the limit the room reads nothing more from its sockets: the next keystroke waits in TCP.
        writer.text().insert(0, "AFTER ");
        await new Promise((r) => setTimeout(r, 1_000));
        expect(watcher.text().toString()).toBe("start");
      } finally {
        await blocker.unsafe("rollback");
        await blocker.end();
      }
      // Stored, the room reads again: the keystroke arrives, and everything is in the draft.
      await waitFor(() => watcher.text().toString() === "AFTER start", 60_000, "the keystroke after storage caught up");
      await expect
        .poll(
          async () =>
            (
              await callMcp<{ sections: Array<{ content: Array<{ text: string }> }> }>(agentOfOwner, "read", {
                documentId: created.documentId,
                includeDraft: true,
              })
            ).sections[0]!.content.map((block) => block.text.length),
          { timeout: 30_000 },
        )
        .toEqual([11, ...new Array(6).fill(1_000_000)]);
    },
    180_000,
  );
});

describe("message rate", () => {
  test(`a client sending more than ${MAX_LIVE_MESSAGES_PER_SECOND} messages a second is slowed, not cut off: every one is taken in, in order`, async () => {
    const created = await newDocument("live-face/rate", [{ name: "Fast", content: [text("")] }]);
    const room = roomName(created.documentId, "main", created.sectionIds[0]);
    const flooder = await live(room, { token: member.token });
    const watcher = await live(room, { token: owner.token });
    const { rooms } = server;
    const throttledBefore = rooms.throttledConnections;
    // One message per keystroke, sent in one burst by the stock provider.
    const burst = 3 * MAX_LIVE_MESSAGES_PER_SECOND;
    for (let i = 0; i < burst; i++) flooder.text().insert(i, String(i % 10));
    await waitFor(() => watcher.text().length === burst, 20_000, `the burst at the watcher: ${watcher.text().length}`);
    expect(watcher.text().toString()).toBe(flooder.text().toString());
    expect(rooms.throttledConnections).toBeGreaterThan(throttledBefore);
  });
});

describe("access decided before content", () => {
  test("a hide and a change in one commit: the connected member is closed and never receives the new text or name", async () => {
    const created = await newDocument("live-face/hide", [{ name: "Open", content: [text("Public so far")] }]);
    const [sectionId] = created.sectionIds as [string];
    await asOwner("documents", { action: "create_branch", documentId: created.documentId, branchName: "review" });
    const watching = await live(roomName(created.documentId, "review", sectionId), { token: member.token });
    const outline = await live(roomName(created.documentId, "review"), { token: member.token });
    const closed = nextClose(watching);
    watching.provider.shouldConnect = false;
    await asOwner("sections", {
      action: "update",
      documentId: created.documentId,
      branchName: "review",
      sectionId,
      newName: "Acquisition of Initech",
      defaultPermission: "none",
      newContent: [text("We offer 40 million")],
    });
    expect((await closed).code).toBe(4403);
    await waitFor(() => !outline.doc.getArray("outline").toArray().includes(sectionId), 5_000, "outline without the section");
    // Give any straggling frame time to arrive.
    await new Promise((r) => setTimeout(r, 200));
    for (const client of [watching, outline]) {
      expect(received(client)).not.toContain("40 million");
      expect(received(client)).not.toContain("Initech");
    }
  });

  test("hiding a section on the default branch closes its rooms on a branch made before the hiding", async () => {
    const created = await newDocument("live-face/hide-elsewhere", [{ name: "Board", content: [text("board notes")] }]);
    const [sectionId] = created.sectionIds as [string];
    await asOwner("documents", { action: "create_branch", documentId: created.documentId, branchName: "older" });
    const onOlder = await live(roomName(created.documentId, "older", sectionId), { token: member.token });
    const closed = nextClose(onOlder);
    onOlder.provider.shouldConnect = false;
    await mergeSectionOverrides(server, owner.userId, { documentId: created.documentId, sectionId }, { defaultPermission: "none" });
    expect((await closed).code).toBe(4403);
  });

  test("after a grant is revoked, the member's next keystroke is dropped and nothing more reaches a member who lost the document", async () => {
    const created = await newDocument("live-face/revoke", [{ name: "Notes", content: [text("Shared notes")] }]);
    const { documentId } = created;
    const room = roomName(documentId, "main", created.sectionIds[0]);
    await asOwner("documents", {
      action: "set_permissions",
      documentId,
      defaultPermission: "none",
      grants: [{ userId: member.userId, permission: "edit" }],
    });
    const memberEditor = await live(room, { token: member.token });
    const ownerEditor = await live(room, { token: owner.token });
    memberEditor.text().insert(0, "before ");
    await waitFor(() => ownerEditor.text().toString().startsWith("before "));

    await asOwner("documents", { action: "set_permissions", documentId, grants: [{ userId: member.userId, permission: null }] });
    // Both sent the moment the revoke returned.
    memberEditor.text().insert(0, "LATE-MEMBER ");
    ownerEditor.text().insert(0, "LATE-OWNER ");
    await new Promise((r) => setTimeout(r, 300));
    expect(ownerEditor.text().toString()).not.toContain("LATE-MEMBER");
    expect(received(memberEditor)).not.toContain("LATE-OWNER");
  });
});

describe("presence is the connection's own", () => {
  test("a share-link visitor cannot show as the owner, and a colour cannot carry CSS", async () => {
    const created = await newDocument("live-face/presence", [{ name: "Shared", content: [text("hello")] }]);
    const link = await asOwner<{ path: string }>("documents", {
      action: "create_share_link",
      documentId: created.documentId,
      permission: "read",
    });
    const room = roomName(created.documentId, "main", created.sectionIds[0]);
    const visitor = await live(room, { share: link.path.split("/").at(-1)! });
    const ownerView = await live(room, { token: owner.token });
    visitor.provider.awareness.setLocalStateField("user", {
      userId: owner.userId,
      name: "Olive Owner",
      color: "red; background-image:url(http://127.0.0.1:9/track)",
      colorLight: "#ffeeaa",
    });
    await waitFor(
      () =>
        [...ownerView.provider.awareness.getStates().values()].some(
          (s) => (s.user as { colorLight?: string } | undefined)?.colorLight === "#ffeeaa",
        ),
      5_000,
      "the visitor's presence",
    );
    const shown = [...ownerView.provider.awareness.getStates().values()].find(
      (s) => (s.user as { colorLight?: string } | undefined)?.colorLight === "#ffeeaa",
    )!.user as Record<string, unknown>;
    expect(shown).toEqual({ userId: null, name: "Guest (share link)", color: "#6b7280", colorLight: "#ffeeaa" });
    expect(received(ownerView)).not.toContain("url(");
  });
});

describe("presence across a reconnect (stock y-websocket providers)", () => {
  const presentIn = (client: LiveClient, clientId: number) => client.provider.awareness.getStates().has(clientId);

  test("a client back after a dropped socket shows again at once, is its connection's alone, and goes when that connection goes", async () => {
    const created = await newDocument("live-face/reconnect", [{ name: "Busy", content: [text("hello")] }]);
    const room = roomName(created.documentId, "main", created.sectionIds[0]);
    const traveller = await live(room, { token: member.token });
    const watcher = await live(room, { token: owner.token });
    const id = traveller.doc.clientID;
    traveller.provider.awareness.setLocalStateField("user", { color: "#118844" });
    await waitFor(() => presentIn(watcher, id), 5_000, "the traveller's presence");

    // The network drops: the server removes the traveller's presence, and y-websocket reconnects with its client id
    // and its state at the clock it had (not newer than the removal's).
    traveller.provider.ws!.close();
    await waitFor(() => !presentIn(watcher, id), 5_000, "the removal");
    await waitFor(() => traveller.provider.wsconnected, 5_000, "the reconnect");
    // y-websocket renews presence 15 s after its last change: seeing it well before then means the server took the return.
    await waitFor(() => presentIn(watcher, id), 5_000, "the traveller's presence back");
    expect(watcher.provider.awareness.getStates().get(id)).toMatchObject({ user: { userId: member.userId, color: "#118844" } });

    // Nobody else may speak for the returned client id, whatever clock it claims.
    const intruder = await live(room, { token: owner.token });
    const forged = awarenessMessage(id, 1_000, { user: { color: "#ff0000" } });
    intruder.provider.ws!.send(forged);
    await new Promise((r) => setTimeout(r, 300));
    expect(watcher.provider.awareness.getStates().get(id)).toMatchObject({ user: { color: "#118844" } });

    // The watcher's own socket drops: the editor forgets the clocks of those the disconnect removed (as the browser page
    // does), so the server's greeting brings the traveller back at once rather than at its next renewal.
    watcher.provider.on("status", ({ status }: { status: string }) => {
      if (status === "disconnected") forgetPresenceOfThoseGone(watcher.provider.awareness);
    });
    watcher.provider.ws!.close();
    await waitFor(() => !presentIn(watcher, id), 5_000, "the watcher's disconnect");
    await waitFor(() => presentIn(watcher, id), 5_000, "the traveller's presence after the watcher's reconnect");

    // It goes with the connection that brought it back, at once (not after y-protocols' 30 s).
    traveller.provider.ws!.close();
    traveller.provider.shouldConnect = false;
    await waitFor(() => !presentIn(watcher, id), 5_000, "the removal after the return");
  });
});

describe("commit and discard act on what the caller may edit", () => {
  test("a member's discard and commit leave the owner's live edits in a section hidden from the member", async () => {
    const created = await newDocument("live-face/discard", [
      { name: "Open", content: [text("open text")] },
      { name: "Board only", content: [text("board text")] },
    ]);
    const { documentId } = created;
    const [openId, hiddenId] = created.sectionIds as [string, string];
    await mergeSectionOverrides(server, owner.userId, { documentId, sectionId: hiddenId }, { defaultPermission: "none" });
    const ownerHidden = await live(roomName(documentId, "main", hiddenId), { token: owner.token });
    const memberOpen = await live(roomName(documentId, "main", openId), { token: member.token });
    ownerHidden.text().insert(0, "OWNER-LIVE ");
    memberOpen.text().insert(0, "member typed ");
    await expect
      .poll(async () => {
        const read = await callMcp<{ sections: Array<{ sectionId: string; content: Array<{ text: string }> }> }>(agentOfOwner, "read", {
          documentId,
          includeDraft: true,
        });
        return read.sections.map((s) => s.content[0]!.text);
      })
      .toEqual(["member typed open text", "OWNER-LIVE board text"]);

    const discarded = await callMcp<{ discardedSections: number }>(agentOfMember, "documents", {
      action: "discard",
      documentId,
      branchName: "main",
    });
    expect(discarded.discardedSections).toBe(1);
    await waitFor(() => memberOpen.text().toString() === "open text");
    expect(ownerHidden.text().toString()).toBe("OWNER-LIVE board text");

    memberOpen.text().insert(0, "again ");
    await waitFor(() => memberOpen.text().toString() === "again open text");
    await expect
      .poll(
        async () =>
          (await callMcp<{ draft: { uncommittedChanges: boolean } }>(agentOfMember, "documents", { action: "get", documentId })).draft,
      )
      .toMatchObject({ uncommittedChanges: true });
    const committed = await callMcp<{ changed: boolean; message: string }>(agentOfMember, "documents", {
      action: "commit",
      documentId,
      branchName: "main",
    });
    expect(committed.changed).toBe(true);
    expect(committed.message).not.toContain("Board only");
    const afterCommit = await callMcp<{ sections: Array<{ content: Array<{ text: string }> }> }>(agentOfOwner, "read", { documentId });
    expect(afterCommit.sections.map((s) => s.content[0]!.text)).toEqual(["again open text", "board text"]);
    // The owner's edits are still in the draft, still uncommitted, for someone who may commit them.
    const draft = await callMcp<{ sections: Array<{ content: Array<{ text: string }> }> }>(agentOfOwner, "read", {
      documentId,
      includeDraft: true,
    });
    expect(draft.sections[1]!.content[0]!.text).toBe("OWNER-LIVE board text");
    expect(
      (await callMcp<{ draft: { uncommittedChanges: boolean } }>(agentOfOwner, "documents", { action: "get", documentId })).draft
        .uncommittedChanges,
    ).toBe(true);
  });
});

const sectionOf = (doc: Y.Doc) => doc.getMap("section");
const nameOf = (doc: Y.Doc) => sectionOf(doc).get("name") as Y.Text;
const blocksOf = (doc: Y.Doc) => sectionOf(doc).get("blocks") as Y.Array<Y.Map<unknown>>;
const textOf = (doc: Y.Doc) => blocksOf(doc).get(0).get("text") as Y.Text;
