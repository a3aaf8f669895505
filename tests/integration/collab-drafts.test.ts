/**
 * Drafts: commit and discard on tRPC and MCP, `read` with includeDraft, the
 * draft status of branches, a comment-new tag typed live becoming a stored
 * comment on commit, and the failure modes of Yjs servers — edits
 * lost on shutdown, a room unloaded while a save is pending, content
 * duplicated after a restart — across restarts and kill -9 of a real process.
 */
import { and, eq, sql } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { draftUpdates } from "@/db/schema";
import { encode } from "next-auth/jwt";
import { addUser, ensureAuthSecret, issueApiToken } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { splitCoAuthors } from "@/server/core/commit-messages";
import { sectionFromYDoc } from "@/server/collab/codec";
import { docFromStored } from "@/server/collab/drafts-engine";
import { findSectionDraft } from "@/server/store/drafts";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { connectLive, type LiveClient, roomName, upgradeStatus, waitFor } from "../helpers/collab";
import { startQuireProcess } from "../helpers/quire-process";

const text = (t: string) => ({ blockType: "text" as const, text: t });
const clients: LiveClient[] = [];
const track = (client: LiveClient) => {
  clients.push(client);
  return client;
};

afterAll(() => {
  for (const c of clients) c.close();
});

/** A test server with two people and one document of one section ("Plan": "Ship it") at `path`, made by the first. */
async function serverWithPlan(path: string, first: [email: string, name: string], second: [email: string, name: string]) {
  const server = await startTestServer();
  const owner = await server.createUser(...first);
  const member = await server.createUser(...second);
  const doc = await server.callTool("documents", owner.userId, {
    action: "create",
    path,
    sections: [{ name: "Plan", content: [text("Ship it")] }],
  });
  return { server, owner, member, documentId: doc.documentId, sectionId: doc.sectionIds[0]! };
}

/** Closes a describe block's live clients, then its server. */
async function closeServer(server: TestServer): Promise<void> {
  for (const c of clients.splice(0)) c.close();
  await server.close();
}

describe("agents named in a live commit's Co-authored-by lines", () => {
  let server: TestServer;
  let olivia: TestUser;
  let mo: TestUser;
  let documentId: string;
  let sectionId: string;

  beforeAll(async () => {
    ({
      server,
      owner: olivia,
      member: mo,
      documentId,
      sectionId,
    } = await serverWithPlan("drafts/agents", ["olivia@example.test", "Olivia Owner"], ["mo@example.test", "Mo Member"]));
  });
  afterAll(() => closeServer(server));

  test("an API token's live connection and an agent's comment on the draft are credited as '<agent> via <person>'; a person as themselves", async () => {
    const claude = await issueApiToken(server.db, { email: olivia.email, label: "Claude" }, new Date());
    const cursor = await issueApiToken(server.db, { email: olivia.email, label: "Cursor" }, new Date());
    const secret = await ensureAuthSecret(server.db, undefined);
    const moCookie = `${sessionCookieName(false)}=${await encode({ token: { sub: mo.userId }, secret })}`;
    const room = roomName(documentId, "main", sectionId);
    const agent = track(await connectLive(server.url, room, { token: claude.token }));
    const person = track(await connectLive(server.url, room, {}, { headers: { cookie: moCookie } }));
    agent.text().insert(agent.text().length, " today");
    await waitFor(() => person.text().toString() === "Ship it today");
    person.text().insert(0, "Please: ");
    await waitFor(() => agent.text().toString() === "Please: Ship it today");

    // Olivia's other agent comments on the draft's text over MCP: its anchor is an edit of the draft.
    const viaMcp = await server.mcpClient(cursor.token);
    await callMcp(viaMcp, "comments", {
      action: "post",
      documentId,
      branchName: "main",
      sectionId,
      blockIndex: 0,
      quote: "today",
      body: "Which day?",
    });
    await viaMcp.close();

    // Olivia commits in person (tRPC with her session): her agents are credited, she is not.
    const committed = (await server
      .trpcCaller(olivia)
      .documents({ action: "commit", documentId, branchName: "main", commitMessage: "Agreed" })) as {
      message: string;
      commitId: string;
    };
    const { body, coAuthors } = splitCoAuthors(committed.message);
    expect(body).toBe("Agreed");
    expect(coAuthors).toHaveLength(3);
    expect(coAuthors).toEqual(
      expect.arrayContaining([
        { name: "Claude via Olivia Owner", email: "olivia@example.test" },
        { name: "Cursor via Olivia Owner", email: "olivia@example.test" },
        { name: "Mo Member", email: "mo@example.test" },
      ]),
    );
    // The history carries the same message.
    const log = await server.callTool("documents", olivia.userId, { action: "log", documentId, branchName: "main" });
    expect(JSON.stringify(log)).toContain("Co-authored-by: Claude via Olivia Owner <olivia@example.test>");

    // Settled: the next commit credits only who edited since, and the committing agent never credits itself.
    agent.text().insert(0, "Now: ");
    await waitFor(() => person.text().toString().startsWith("Now: "));
    await new Promise((r) => setTimeout(r, 200));
    const byClaude = await server.mcpClient(claude.token);
    const again = await callMcp<{ message: string }>(byClaude, "documents", {
      action: "commit",
      documentId,
      branchName: "main",
      commitMessage: "Now",
    });
    await byClaude.close();
    expect(again.message).toBe("Now");
  });
});

describe("commit and discard", () => {
  let server: TestServer;
  let owner: TestUser;
  let member: TestUser;
  let documentId: string;
  let sectionId: string;

  beforeAll(async () => {
    ({ server, owner, member, documentId, sectionId } = await serverWithPlan(
      "drafts/plan",
      ["owner@example.test", "Olive Owner"],
      ["member@example.test", "Mo Member"],
    ));
  });
  afterAll(() => closeServer(server));

  test("an empty draft commits nothing and says so", async () => {
    const result = await server.trpcCaller(owner).documents({ action: "commit", documentId, branchName: "main" });
    expect(result).toMatchObject({ changed: false });
    expect((result as { message: string }).message).toMatch(/Nothing to commit/);
  });

  test("live edits are the draft: read with includeDraft, uncommitted changes and who is connected; commit credits every editor", async () => {
    const a = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token }));
    const b = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: member.token }));
    a.text().insert(a.text().length, " today");
    await waitFor(() => b.text().toString() === "Ship it today");
    b.text().insert(0, "Please: ");
    await waitFor(() => a.text().toString() === "Please: Ship it today");

    const head = await server.callTool("read", owner.userId, { documentId });
    expect(head.sections[0]!.content).toEqual([text("Ship it")]);
    const draft = await server.callTool("read", owner.userId, { documentId, includeDraft: true });
    expect(draft.sections[0]!.content).toEqual([text("Please: Ship it today")]);
    const branches = await server.callTool("documents", owner.userId, { action: "list_branches", documentId });
    expect(branches.branches[0]!.draft.uncommittedChanges).toBe(true);
    expect(branches.branches[0]!.draft.editorIds).toEqual([owner.userId, member.userId].sort());
    expect([...branches.branches[0]!.draft.connectedUserIds].sort()).toEqual([owner.userId, member.userId].sort());
    // Another document's draft, open but untouched, has no edits and no editors of this one.
    const other = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "drafts/quiet",
      sections: [{ name: "Quiet", content: [text("Nothing here")] }],
    });
    const watcher = track(await connectLive(server.url, roomName(other.documentId, "main", other.sectionIds[0]!), { token: owner.token }));
    await waitFor(() => watcher.text().toString() === "Nothing here");
    const quiet = await server.callTool("documents", owner.userId, { action: "list_branches", documentId: other.documentId });
    expect(quiet.branches[0]!.draft).toMatchObject({ uncommittedChanges: false, editorIds: [] });

    const mcp = await server.mcpClient(owner.token);
    const committed = await callMcp<{ changed: boolean; message: string; commitId: string; coAuthorIds: string[] }>(mcp, "documents", {
      action: "commit",
      documentId,
      branchName: "main",
      commitMessage: "Say please",
    });
    await mcp.close();
    expect(committed.changed).toBe(true);
    // Both connected with their API tokens ("test"), so both edited as agents: the member's is credited through its
    // token, the owner's is the one committing.
    expect(committed.message).toBe("Say please\n\nCo-authored-by: test via Mo Member <member@example.test>");
    expect(committed.coAuthorIds).toEqual([member.userId]);
    const after = await server.callTool("read", owner.userId, { documentId });
    expect(after.headCommitId).toBe(committed.commitId);
    expect(after.sections[0]!.content).toEqual([text("Please: Ship it today")]);
    const got = await server.callTool("documents", owner.userId, { action: "get", documentId });
    expect(got.draft.uncommittedChanges).toBe(false);
    expect(got.draft.editorIds).toEqual([]);
    // The editors keep their text: nothing was applied twice.
    await new Promise((r) => setTimeout(r, 100));
    expect(a.text().toString()).toBe("Please: Ship it today");
    expect(await server.trpcCaller(owner).documents({ action: "commit", documentId, branchName: "main" })).toMatchObject({
      changed: false,
    });
  });

  test("text typed live just before committed text like it survives a revert that removes the committed text (live fuzzer seed 773894)", async () => {
    const doc = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "drafts/resembling",
      sections: [{ name: "Log", content: [text("Intro rest")] }],
    });
    const room = roomName(doc.documentId, "main", doc.sectionIds[0]!);
    const editor = track(await connectLive(server.url, room, { token: owner.token }));
    await waitFor(() => editor.text().toString() === "Intro rest");
    editor.text().insert("Intro ".length, " typed ⟦m-20⟧ ");
    const mcp = await server.mcpClient(owner.token);
    try {
      await callMcp(mcp, "documents", { action: "commit", documentId: doc.documentId, branchName: "main", commitMessage: "Marker 20" });
      // Typed before the committed marker, and not committed: the draft's own.
      editor.text().insert("Intro ".length, " typed ⟦m-27⟧ ");
      // In the draft (the room has it) before the revert is asked for.
      const inDraft = async () =>
        JSON.stringify(
          (await server.callTool("read", owner.userId, { documentId: doc.documentId, includeDraft: true })).sections[0]!.content,
        ).includes("⟦m-27⟧");
      await waitFor(inDraft, 5_000, "the typed marker reaching the draft");
      await callMcp(mcp, "documents", { action: "revert", documentId: doc.documentId, branchName: "main", commitId: doc.commitId });
    } finally {
      await mcp.close();
    }
    // Before, the typed marker was taken for the committed one's start, and the revert removed most of it.
    await waitFor(() => !editor.text().toString().includes("⟦m-20⟧"));
    expect(editor.text().toString()).toBe("Intro  typed ⟦m-27⟧ rest");
    const draft = await server.callTool("read", owner.userId, { documentId: doc.documentId, includeDraft: true });
    expect(draft.sections[0]!.content).toEqual([text("Intro  typed ⟦m-27⟧ rest")]);
  });

  test("discard resets the draft to the head for every open editor", async () => {
    const a = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token }));
    const b = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: member.token }));
    a.text().insert(0, "DRAFT ");
    await waitFor(() => b.text().toString().startsWith("DRAFT "));
    const discarded = await server.trpcCaller(member).documents({ action: "discard", documentId, branchName: "main" });
    expect(discarded).toMatchObject({ discardedSections: 1 });
    await waitFor(() => a.text().toString() === "Please: Ship it today" && b.text().toString() === "Please: Ship it today");
    const draft = await server.callTool("read", owner.userId, { documentId, includeDraft: true });
    expect(draft.sections[0]!.content).toEqual([text("Please: Ship it today")]);
  });

  test("when a section's last editor leaves, its log is compacted into its state, and nothing changes for the next editor", async () => {
    for (const c of clients.splice(0)) c.close();
    const editor = await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token });
    editor.text().insert(0, "compact me: ");
    const watcher = await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token });
    await waitFor(() => watcher.text().toString().startsWith("compact me: "));
    const expected = watcher.text().toString();
    editor.close();
    watcher.close();
    // Compacted: the log is empty and its state alone holds the typing. (An empty log alone may only mean the typing is
    // not stored yet: it is stored within the storing line's spacing, after the watcher saw it.)
    const compacted = async () => {
      const stored = await findSectionDraft(server.db, { documentId, branchName: "main", sectionId });
      const logRows = await server.db.$count(
        draftUpdates,
        and(eq(draftUpdates.documentId, documentId), eq(draftUpdates.sectionId, sectionId)),
      );
      return (
        logRows === 0 &&
        stored !== undefined &&
        JSON.stringify(sectionFromYDoc(docFromStored(stored)).content[0]) === JSON.stringify(text(expected))
      );
    };
    await expect.poll(compacted, { timeout: 5_000, interval: 10 }).toBe(true);
    const again = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token }));
    expect(again.text().toString()).toBe(expected);
    await server.trpcCaller(owner).documents({ action: "discard", documentId, branchName: "main" });
  });

  test("a draft whose room was closed takes in a commit made meanwhile when it opens again", async () => {
    for (const c of clients.splice(0)) c.close();
    const head = await server.callTool("read", owner.userId, { documentId });
    const committedText = (head.sections[0]!.content[0] as { text: string }).text;
    const editor = await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token });
    editor.text().insert(0, "DRAFT: ");
    const watcher = await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token });
    await waitFor(() => watcher.text().toString().startsWith("DRAFT: "));
    editor.close();
    watcher.close();
    await new Promise((r) => setTimeout(r, 100));
    await server.callTool("sections", owner.userId, {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text(`${committedText} (committed while closed)`)],
    });
    const reopened = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token }));
    expect(reopened.text().toString()).toBe(`DRAFT: ${committedText} (committed while closed)`);
    await server.trpcCaller(owner).documents({ action: "discard", documentId, branchName: "main" });
    await waitFor(() => reopened.text().toString() === `${committedText} (committed while closed)`);
  });

  test("a reader may not commit or discard", async () => {
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, defaultPermission: "read" });
    const reader = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: owner.token }));
    reader.text().insert(0, "x");
    await new Promise((r) => setTimeout(r, 100));
    await expect(server.trpcCaller(member).documents({ action: "discard", documentId, branchName: "main" })).rejects.toThrow(/read/);
    await expect(server.trpcCaller(member).documents({ action: "commit", documentId, branchName: "main" })).rejects.toThrow(
      /not allowed|read/,
    );
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, defaultPermission: "edit" });
  });

  test("a comment-new tag typed into the draft becomes a stored comment on commit, credited to its typist (not the committer), and the draft gets its anchor", async () => {
    const a = track(await connectLive(server.url, roomName(documentId, "main", sectionId), { token: member.token }));
    const before = a.text().toString();
    const typed = `<svc:comment-new body="Too &quot;soon&quot;?" mentions="${owner.userId}" author="${member.userId}">${before}</svc:comment-new>`;
    a.text().delete(0, before.length);
    a.text().insert(0, typed);
    // The edit goes over the socket and the commit does not, so wait until the server's draft holds the edit itself:
    // "uncommitted changes" is already true here (the test before left an edit), and on the embedded database a call
    // made in this process runs without the event loop ever reading the socket.
    await expect
      .poll(async () => (await server.callTool("read", owner.userId, { documentId, includeDraft: true })).sections[0]!.content)
      .toEqual([text(typed)]);

    const committed = await server.trpcCaller(owner).documents({ action: "commit", documentId, branchName: "main" });
    expect(committed).toMatchObject({ changed: true });
    const read = await server.callTool("read", owner.userId, { documentId });
    const [comment] = read.sections[0]!.comments;
    expect(comment).toMatchObject({
      body: 'Too "soon"?',
      authorId: member.userId,
      authorName: "Mo Member",
      mentions: [owner.userId],
      branchName: "main",
    });
    expect(read.sections[0]!.content).toEqual([text(`<svc:comment id="${comment!.commentId}">${before}</svc:comment>`)]);
    await waitFor(() => a.text().toString() === `<svc:comment id="${comment!.commentId}">${before}</svc:comment>`);
  });
});

describe.skipIf(!testDatabaseUrl())("closing while clients reconnect", () => {
  test("the server closes: a socket that comes back while it waits for storage is refused, not admitted to keep it open", async () => {
    const { server, owner, documentId, sectionId } = await serverWithPlan(
      "plans/closing",
      ["olive@example.test", "Olive"],
      ["mo@example.test", "Mo"],
    );
    const room = roomName(documentId, "main", sectionId);
    const editors = await Promise.all(Array.from({ length: 3 }, () => connectLive(server.url, room, { token: owner.token })));
    const watcher = await connectLive(server.url, room, { token: owner.token });
    for (const client of [...editors, watcher]) track(client);
    // The draft log locked for a moment: the close waits to store what was typed, and the clients come back meanwhile.
    let unlock = () => {};
    const locked = new Promise<void>((resolve) => {
      void server.db.transaction(async (tx) => {
        await tx.execute(sql`lock table draft_updates in access exclusive mode`);
        resolve();
        await new Promise<void>((release) => {
          unlock = release;
        });
      });
    });
    await locked;
    for (const editor of editors) {
      // As a page does after a dropped socket, with no pause: every reconnect meets the close under way.
      editor.provider.maxBackoffTime = 0;
      editor.text().insert(0, "typed as it closes ");
    }
    await waitFor(() => watcher.text().toString().startsWith("typed as it closes ".repeat(3)), 5_000, "the typing at the watcher");
    const closed = server.close().then(() => "closed" as const);
    // Still listening while it waits for storage, and saying why it admits no one.
    const refused = await upgradeStatus(server.url, `${room}?token=${owner.token}`);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error.message).toMatch(/shutting down/);
    unlock();
    const deadline = new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 20_000).unref());
    expect(await Promise.race([closed, deadline])).toBe("closed");
    for (const client of clients.splice(0)) client.close();
  });
});

describe.skipIf(!testDatabaseUrl())("durability: a real Quire process restarted, killed, unloaded mid-save", () => {
  let database: TestDatabase;
  let token: string;
  let documentId: string;
  let sectionId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    await addUser(database.db, { email: "owner@example.test", name: "Olive", password: "correct horse battery" }, new Date());
    ({ token } = await issueApiToken(database.db, { email: "owner@example.test", label: "t" }, new Date()));
  });
  afterAll(async () => {
    await database.close();
  });

  async function createDocument(url: string, content: string): Promise<void> {
    const response = await fetch(`${url}/api/trpc/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ action: "create", path: `durable/${Date.now()}`, sections: [{ name: "Log", content: [text(content)] }] }),
    });
    const body = (await response.json()) as { result: { data: { documentId: string; sectionIds: string[] } } };
    documentId = body.result.data.documentId;
    sectionId = body.result.data.sectionIds[0]!;
  }

  /** The text of the section's stored draft (state and log), as a server loading it would see it. */
  async function storedContent(): Promise<string | undefined> {
    const stored = await findSectionDraft(database.db, { documentId, branchName: "main", sectionId });
    if (!stored) return undefined;
    const doc = docFromStored(stored);
    const [block] = sectionFromYDoc(doc).content;
    doc.destroy();
    return block?.blockType === "text" ? block.text : undefined;
  }

  /** Types `keys` one at a time, each seen by a second client before the next. */
  async function typeSeen(writer: LiveClient, watcher: LiveClient, keys: string): Promise<void> {
    for (const key of keys) {
      writer.text().insert(writer.text().length, key);
      const expected = writer.text().toString();
      await waitFor(() => watcher.text().toString() === expected, 5_000, "the watcher's copy");
    }
  }

  test("kill -9 inside the durability window loses no edit the clients hold: they hand it over on reconnect; a restart applies no initial content again", async () => {
    let quire = await startQuireProcess({ databaseUrl: database.url! });
    const port = Number(new URL(quire.url).port);
    await createDocument(quire.url, "start:");
    const room = roomName(documentId, "main", sectionId);
    const writer = track(await connectLive(quire.url, room, { token }));
    const watcher = track(await connectLive(quire.url, room, { token }));
    await typeSeen(writer, watcher, "abcdefghij");
    // Stored behind the broadcast, within milliseconds.
    for (let tries = 0; (await storedContent()) !== "start:abcdefghij"; tries++) {
      if (tries > 200) throw new Error("the typing was not stored");
      await new Promise((r) => setTimeout(r, 10));
    }

    // Hold the durability window open: the draft log is locked, so what is typed now is broadcast but cannot be stored.
    const blocker = postgres(database.url!, { max: 1, onnotice: () => {} });
    await blocker.unsafe("begin");
    await blocker.unsafe("lock table draft_updates in access exclusive mode");
    await typeSeen(writer, watcher, "XYZ");
    await quire.stop("SIGKILL");
    // The killed server's store never happens: its statement waiting on the lock is cut off before the lock goes. Only
    // that one: the test's own pool must keep its connections (a terminated one fails the next query written to it).
    await blocker.unsafe(
      "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'",
    );
    await blocker.unsafe("rollback");
    await blocker.end();
    // What storage holds now: the typing from before the window, not the keystrokes typed inside it.
    expect(await storedContent()).toBe("start:abcdefghij");

    // The same address again: both providers reconnect by themselves and sync, handing over what the server lacks.
    quire = await startQuireProcess({ databaseUrl: database.url!, port });
    await waitFor(() => writer.provider.wsconnected && watcher.provider.wsconnected && writer.provider.synced, 10_000, "reconnection");
    writer.close();
    watcher.close();
    const reader = track(await connectLive(quire.url, room, { token }));
    await waitFor(() => reader.text().toString() === "start:abcdefghijXYZ", 5_000, "the handed-over edits");
    // Exactly once: the stored draft is loaded, the initial content is not applied to it again.
    expect(reader.text().toString().split("start:").length).toBe(2);
    reader.close();
    await quire.stop("SIGTERM");
    // Stored this time: a later server has them without any client.
    quire = await startQuireProcess({ databaseUrl: database.url! });
    const later = track(await connectLive(quire.url, room, { token }));
    expect(later.text().toString()).toBe("start:abcdefghijXYZ");
    later.close();
    await quire.stop("SIGTERM");
  });

  test("the last edits before a graceful shutdown are kept, and a room unloaded with a save pending keeps it", async () => {
    let quire = await startQuireProcess({ databaseUrl: database.url! });
    await createDocument(quire.url, "");
    const room = roomName(documentId, "main", sectionId);
    const writer = track(await connectLive(quire.url, room, { token }));
    // Typed and disconnected at once: the room unloads while the update is on its way into storage.
    writer.text().insert(0, "last words");
    await new Promise((r) => setTimeout(r, 20));
    writer.close();
    const late = track(await connectLive(quire.url, room, { token }));
    await waitFor(() => late.text().toString() === "last words", 2_000, "unloaded room's update");
    late.text().insert(late.text().length, "!");
    const watcher = track(await connectLive(quire.url, room, { token }));
    await waitFor(() => watcher.text().toString() === "last words!");
    // SIGTERM right after the acknowledgement: no debounce window to lose.
    await quire.stop("SIGTERM");
    late.close();
    watcher.close();
    quire = await startQuireProcess({ databaseUrl: database.url! });
    const reader = track(await connectLive(quire.url, room, { token }));
    expect(reader.text().toString()).toBe("last words!");
    reader.close();
    await quire.stop("SIGTERM");
  });
});
