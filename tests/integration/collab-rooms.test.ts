/**
 * Live rooms with real y-websocket providers: convergence, authentication at
 * the upgrade, read-only principals, hidden sections at the byte level, and
 * API writes reaching open editors while they type.
 */
import type { IncomingMessage } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { encode } from "next-auth/jwt";
import { ensureAuthSecret, issueApiToken } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { revokeApiToken } from "@/server/store/api-tokens";
import { connectLive, type LiveClient, roomName, upgradeStatus, waitFor } from "../helpers/collab";
import { mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

const SECRET_NAME = "Acquisition target";
const SECRET_TEXT = "We are buying Initech";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let documentId: string;
let publicId: string;
let secretId: string;
let aiHiddenId: string;
const clients: LiveClient[] = [];

const text = (t: string) => ({ blockType: "text", text: t });
const asOwner = <T = Record<string, unknown>>(tool: "documents" | "sections" | "merge_requests", args: Record<string, unknown>) =>
  server.callToolAsSent(tool, owner.userId, args) as Promise<T>;

/** A document of these sections that only its owner and the member (who may edit it) see; its id and its sections' ids. */
async function memberOnlyDocument(path: string, sections: Array<{ name: string; content: unknown[] }>) {
  const created = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", { action: "create", path, sections });
  await asOwner("documents", {
    action: "set_permissions",
    documentId: created.documentId,
    defaultPermission: "none",
    grants: [{ userId: member.userId, permission: "edit" }],
  });
  return created;
}

/** Section overrides change on a branch and reach main by a merge request, as they must. */
const setOverrides = (sectionId: string, overrides: Parameters<typeof mergeSectionOverrides>[3]) =>
  mergeSectionOverrides(server, owner.userId, { documentId, sectionId }, overrides);
async function live(room: string, params: Record<string, string>, options?: Parameters<typeof connectLive>[3]) {
  const client = await connectLive(server.url, room, params, options);
  clients.push(client);
  return client;
}

/** The close code the server closes the client's socket with (it stops reconnecting); says so when it is still open 5 s on. */
function closedByServer(client: LiveClient): Promise<number | string> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve("still open 5 s later"), 5_000);
    client.provider.on("connection-close", (event: { code: number } | null) => {
      clearTimeout(timer);
      client.provider.shouldConnect = false;
      resolve(event?.code ?? 0);
    });
  });
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  const doc = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
    action: "create",
    path: "live/plans",
    sections: [
      { name: "Public", content: [text("Everyone may read this")] },
      { name: SECRET_NAME, content: [text(SECRET_TEXT)] },
      { name: "Model notes", content: [text("Not for the AI")] },
    ],
  });
  documentId = doc.documentId;
  [publicId, secretId, aiHiddenId] = doc.sectionIds as [string, string, string];
  await setOverrides(secretId, { defaultPermission: "none" });
  await setOverrides(aiHiddenId, { aiAccess: "none" });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await server.close();
});

describe("who may connect", () => {
  test("an upgrade without a credential gets 401 before any Yjs byte", async () => {
    const refused = await upgradeStatus(server.url, roomName(documentId, "main", publicId));
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error.code).toBe("UNAUTHENTICATED");
    expect((await upgradeStatus(server.url, `${roomName(documentId, "main", publicId)}?token=quire_nonsense`)).status).toBe(401);
  });

  test("an API token as a query parameter or an Authorization header is accepted", async () => {
    expect((await upgradeStatus(server.url, `${roomName(documentId, "main", publicId)}?token=${owner.token}`)).status).toBe(101);
    expect(
      (await upgradeStatus(server.url, roomName(documentId, "main", publicId), { authorization: `Bearer ${owner.token}` })).status,
    ).toBe(101);
  });

  test("a section the principal may not see is refused like a missing one", async () => {
    const hidden = await upgradeStatus(server.url, `${roomName(documentId, "main", secretId)}?token=${member.token}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body).not.toContain(SECRET_NAME);
    const aiHidden = await upgradeStatus(server.url, `${roomName(documentId, "main", aiHiddenId)}?token=${owner.token}`);
    expect(aiHidden.status).toBe(404);
  });

  test("a branch the document does not have is refused, its outline and its sections alike", async () => {
    for (const room of [roomName(documentId, "no-such-branch"), roomName(documentId, "no-such-branch", publicId)]) {
      const missing = await upgradeStatus(server.url, `${room}?token=${owner.token}`);
      expect(missing.status).toBe(404);
      expect(JSON.parse(missing.body).error).toMatchObject({ code: "NOT_FOUND", message: expect.stringContaining("no-such-branch") });
    }
  });
});

describe("credentials and their revocation", () => {
  test("a browser session cookie makes the person, who edits", async () => {
    const secret = await ensureAuthSecret(server.db, undefined);
    const session = await encode({ token: { sub: owner.userId }, secret });
    const cookie = `${sessionCookieName(false)}=${session}`;
    const person = await live(roomName(documentId, "main", aiHiddenId), {}, { headers: { cookie } });
    const agent = await live(roomName(documentId, "main"), { token: owner.token });
    // The person sees the section hidden from agents; the owner's own token does not.
    expect(person.section().name).toBe("Model notes");
    expect(agent.doc.getArray("outline").toArray()).not.toContain(aiHiddenId);
    person.text().insert(0, "person: ");
    const other = await live(roomName(documentId, "main", aiHiddenId), {}, { headers: { cookie } });
    await waitFor(() => other.text().toString().startsWith("person: "));
  });

  test("a read share link connects read only, and revoking it closes the socket at once", async () => {
    const shared = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
      action: "create",
      path: "live/shared",
      sections: [{ name: "Shared", content: [text("shared")] }],
    });
    const link = (await asOwner("documents", { action: "create_share_link", documentId: shared.documentId, permission: "read" })) as {
      shareLinkId: string;
      path: string;
    };
    const share = link.path.split("/").at(-1)!;
    const room = roomName(shared.documentId, "main", shared.sectionIds[0]);
    const visitor = await live(room, { share });
    const writer = await live(room, { token: owner.token });
    visitor.text().insert(0, "VISITOR ");
    writer.text().insert(writer.text().length, "!");
    await waitFor(() => visitor.text().toString().endsWith("shared!"));
    await new Promise((r) => setTimeout(r, 100));
    expect(writer.text().toString()).toBe("shared!");
    const closed = closedByServer(visitor);
    await asOwner("documents", { action: "revoke_share_link", documentId: shared.documentId, shareLinkId: link.shareLinkId });
    expect(await closed).toBe(4403);
  });

  test("a revoked API token's socket is closed at once", async () => {
    const { token, tokenId } = await issueApiToken(server.db, { email: owner.email, label: "short-lived" }, new Date());
    const client = await live(roomName(documentId, "main"), { token });
    const closed = closedByServer(client);
    await revokeApiToken(server.db, tokenId, new Date());
    expect(await closed).toBe(4403);
  });
});

describe("editing together", () => {
  test("two clients converge, character by character", async () => {
    const a = await live(roomName(documentId, "main", publicId), { token: owner.token });
    const b = await live(roomName(documentId, "main", publicId), { token: owner.token });
    expect(a.section()).toEqual({ name: "Public", content: [text("Everyone may read this")] });
    a.text().insert(0, "A: ");
    b.text().insert(b.text().length, " (B)");
    await waitFor(() => a.text().toString() === b.text().toString() && a.text().toString().includes("(B)"));
    expect(a.text().toString()).toBe("A: Everyone may read this (B)");
  });

  test("a read-only principal's edits go nowhere and are counted", async () => {
    await asOwner("documents", { action: "set_permissions", documentId, defaultPermission: "read" });
    const reader = await live(roomName(documentId, "main", publicId), { token: member.token });
    const writer = await live(roomName(documentId, "main", publicId), { token: owner.token });
    const before = writer.text().toString();
    reader.text().insert(0, "VANDAL ");
    writer.text().insert(writer.text().length, "!");
    await waitFor(() => reader.text().toString().endsWith("!"));
    await new Promise((r) => setTimeout(r, 100));
    expect(writer.text().toString()).toBe(`${before}!`);
    reader.close();
    await waitFor(() => server.rooms.droppedUpdates > 0);
    await asOwner("documents", { action: "set_permissions", documentId, defaultPermission: "edit" });
  });
});

describe("hidden sections never leave the server", () => {
  test("no frame a member or a capped agent receives holds a hidden section's text, name or id", async () => {
    const ownerEditor = await live(roomName(documentId, "main", secretId), { token: owner.token }, {});
    const memberOutline = await live(roomName(documentId, "main"), { token: member.token });
    const memberPublic = await live(roomName(documentId, "main", publicId), { token: member.token });
    const agentOutline = await live(roomName(documentId, "main"), { token: owner.token });
    // The member's token makes an agent: the team override hides one section, aiAccess the other.
    expect(memberOutline.doc.getArray("outline").toArray()).toEqual([publicId]);
    expect(agentOutline.doc.getArray("outline").toArray()).toEqual([publicId, secretId]);
    ownerEditor.provider.awareness.setLocalStateField("user", { name: "Olive", typing: SECRET_TEXT });
    ownerEditor.text().insert(0, `${SECRET_TEXT} again: `);
    memberPublic.text().insert(0, "x");
    await waitFor(() => ownerEditor.provider.synced);
    await new Promise((r) => setTimeout(r, 200));
    for (const [who, client] of Object.entries({ memberOutline, memberPublic })) {
      const bytes = Buffer.concat(client.frames);
      expect([who, bytes.includes(SECRET_TEXT), bytes.includes(SECRET_NAME), bytes.includes(secretId), bytes.includes(aiHiddenId)]).toEqual(
        [who, false, false, false, false],
      );
      expect(bytes.includes(SECRET_TEXT)).toBe(false);
      expect(bytes.includes(SECRET_NAME)).toBe(false);
      expect(bytes.includes(secretId)).toBe(false);
    }
    // The owner's agent sees the team-hidden section (managers do) but not the one hidden from agents.
    expect(Buffer.concat(agentOutline.frames).includes(aiHiddenId)).toBe(false);
  });

  test("hiding a section while connected closes its room and takes it out of the outline at once", async () => {
    const outline = await live(roomName(documentId, "main"), { token: member.token });
    const editing = await live(roomName(documentId, "main", publicId), { token: member.token });
    let closed = 0;
    editing.provider.ws?.addEventListener("close", () => {
      closed += 1;
    });
    editing.provider.shouldConnect = false;
    await setOverrides(publicId, { defaultPermission: "none" });
    await waitFor(() => !outline.doc.getArray("outline").toArray().includes(publicId), 2_000, "outline update");
    await waitFor(() => closed > 0, 2_000, "section room closed");
    await setOverrides(publicId, { defaultPermission: null });
  });
});

describe("every writer is seen live", () => {
  test("an API write reaches an open provider while it types in the same text, and both survive", async () => {
    const fresh = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
      action: "create",
      path: "live/fresh",
      sections: [{ name: "Notes", content: [text("Public")] }],
    });
    const notesId = fresh.sectionIds[0]!;
    const editor = await live(roomName(fresh.documentId, "main", notesId), { token: owner.token }, {});
    const typed: Promise<void> = (async () => {
      for (let i = 0; i < 10; i++) {
        editor.text().insert(0, "k");
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await asOwner("sections", {
      action: "update",
      documentId: fresh.documentId,
      branchName: "main",
      sectionId: notesId,
      newContent: [text("Public, said the API")],
    });
    await waitFor(() => editor.text().toString().includes("said the API"), 1_000, `API write in the editor: ${editor.text().toString()}`);
    await typed;
    await waitFor(() => editor.text().toString().startsWith("kkkkkkkkkk"));
    expect(editor.text().toString()).toBe("kkkkkkkkkkPublic, said the API");
  });
});

describe("a room whose last connections leave as another arrives", () => {
  test("the arriving connection is in the room that follows the branch: a commit and an access change made next reach it", async () => {
    const handover = await memberOnlyDocument(
      "live/handover",
      Array.from({ length: 12 }, (_, i) => ({ name: `Part ${i + 1}`, content: [text(`Words of part ${i + 1}`)] })),
    );
    const rooms = handover.sectionIds.map((sectionId) => roomName(handover.documentId, "main", sectionId));
    const leaving = await Promise.all(rooms.map((room) => live(room, { token: owner.token })));
    // Each typed in just before leaving: their sections unload one after another on the branch's line, each once what it
    // received is stored and compacted, and the next connection arrives meanwhile.
    for (const client of leaving) client.text().insert(0, "typed ");
    for (const client of leaving) client.close();
    const arriving = await live(rooms[0]!, { token: member.token });
    await asOwner("sections", {
      action: "update",
      documentId: handover.documentId,
      branchName: "main",
      sectionId: handover.sectionIds[0],
      newContent: [text("Committed after the handover")],
    });
    await waitFor(
      () => arriving.text().toString().includes("Committed after the handover"),
      5_000,
      `the commit: ${arriving.text().toString()}`,
    );
    const closed = closedByServer(arriving);
    await asOwner("documents", {
      action: "set_permissions",
      documentId: handover.documentId,
      grants: [{ userId: member.userId, permission: null }],
    });
    expect(await closed).toBe(4403);
  });
});

describe("a connection being taken in while its room is decided again", () => {
  /**
   * Holds the branch's line (where a section connection's room opens) until `open` is called, and counts what queues on
   * it: a connection admitted meanwhile waits there, between its admission and joining the room.
   */
  function holdBranchLine(key: { documentId: string; branchName: string }) {
    const { queue } = server.rooms;
    const run = queue.run;
    let queued = 0;
    queue.run = <T>(on: typeof key, work: () => Promise<T>): Promise<T> => {
      if (on.documentId === key.documentId && on.branchName === key.branchName) queued += 1;
      return run.call(queue, on, work) as Promise<T>;
    };
    let open!: () => void;
    void queue.run(key, () => new Promise<void>((resolve) => (open = resolve)));
    return {
      queuedBehind: () => queued - 1,
      open: () => {
        queue.run = run;
        open();
      },
    };
  }

  const sectionText = (client: LiveClient) => client.doc.getMap("section").get("blocks");

  test("an access removal made while a connection waits to join reaches it: closed with 4403, before any content", async () => {
    const waiting = await memberOnlyDocument("live/waiting-room", [{ name: "Only for members", content: [text("Members only")] }]);
    const line = holdBranchLine({ documentId: waiting.documentId, branchName: "main" });
    const arriving = await live(roomName(waiting.documentId, "main", waiting.sectionIds[0]!), { token: member.token }, { sync: false });
    // Admitted (the upgrade is accepted) and waiting on the line for its section to open.
    await waitFor(() => line.queuedBehind() === 1, 5_000, "the connection on the branch's line");
    const closed = closedByServer(arriving);
    await asOwner("documents", {
      action: "set_permissions",
      documentId: waiting.documentId,
      grants: [{ userId: member.userId, permission: null }],
    });
    line.open();
    expect(await closed).toBe(4403);
    expect(sectionText(arriving)).toBeUndefined();
    // The section it opened is not left loaded with nobody in it.
    const section = { documentId: waiting.documentId, branchName: "main", sectionId: waiting.sectionIds[0]! };
    await waitFor(() => server.rooms.openSection(section) === undefined, 5_000, "the empty section room unloaded");
  });

  test("a branch deleted while a connection waits to join closes it with 4410, not into a room nothing follows", async () => {
    const doomed = await memberOnlyDocument("live/doomed-branch", [{ name: "Short-lived", content: [text("On a branch about to go")] }]);
    await asOwner("documents", { action: "create_branch", documentId: doomed.documentId, branchName: "doomed" });
    const line = holdBranchLine({ documentId: doomed.documentId, branchName: "doomed" });
    const deleted = asOwner("documents", { action: "delete_branch", documentId: doomed.documentId, branchName: "doomed" });
    await waitFor(() => line.queuedBehind() === 1, 5_000, "the deletion on the branch's line");
    const arriving = await live(roomName(doomed.documentId, "doomed", doomed.sectionIds[0]!), { token: member.token }, { sync: false });
    // Admitted while the branch still existed, its section queued to open behind the deletion.
    await waitFor(() => line.queuedBehind() === 2, 5_000, "the connection on the branch's line");
    const closed = closedByServer(arriving);
    line.open();
    await deleted;
    expect(await closed).toBe(4410);
    expect(sectionText(arriving)).toBeUndefined();
  });
});

describe("what an open connection keeps", () => {
  test("nothing of its upgrade request: the request (its headers, its URL) is collected while the client stays connected", async () => {
    const requests: Array<WeakRef<IncomingMessage>> = [];
    const upgrade = server.rooms.upgrade;
    server.rooms.upgrade = (request, ...rest) => {
      requests.push(new WeakRef(request));
      return upgrade.call(server.rooms, request, ...rest);
    };
    let client: LiveClient;
    try {
      client = await live(roomName(documentId, "main", publicId), { token: owner.token });
    } finally {
      server.rooms.upgrade = upgrade;
    }
    // It is open and in use: an edit goes through, after which nothing of the upgrade is under way any more.
    const other = await live(roomName(documentId, "main", publicId), { token: owner.token });
    client.text().insert(0, "Still here. ");
    await waitFor(() => other.text().toString().startsWith("Still here. "));
    expect(requests).toHaveLength(1);
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    // A WeakRef's target lives at least until the job that made or read it is over: collect from fresh macrotasks.
    for (let i = 0; i < 5 && requests[0]!.deref() !== undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      gc();
    }
    expect(requests[0]!.deref()).toBeUndefined();
    expect(client.provider.wsconnected).toBe(true);
  });
});
