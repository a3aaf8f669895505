/**
 * The live drafts service as the browser's draft status uses it: the
 * `documents` `draft_status` action (exact access: a section hidden from the
 * caller is never named; editors and connected people by name) and
 * `onDraftChanged`, which fires for an edit made on another process (Redis)
 * in a room open here.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connectLive, type LiveClient, roomName, waitFor } from "../helpers/collab";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { type QuireProcess, startQuireProcess } from "../helpers/quire-process";
import { callMcp, mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

const REDIS_URL = "redis://127.0.0.1:6379";
const SECRET_NAME = "Acquisition target";

let database: TestDatabase;
let server: TestServer;
let other: QuireProcess;
let owner: TestUser;
let member: TestUser;
let documentId: string;
let publicId: string;
let secretId: string;
const clients: LiveClient[] = [];

const text = (t: string) => ({ blockType: "text" as const, text: t });

async function live(url: string, room: string, token: string): Promise<LiveClient> {
  const client = await connectLive(url, room, { token });
  clients.push(client);
  return client;
}

const draftStatus = (userId: string) => server.callTool("documents", userId, { action: "draft_status", documentId, branchName: "main" });

beforeAll(async () => {
  database = await createTestDatabase();
  server = await startTestServer({ database, redisUrl: REDIS_URL });
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  const created = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "live/status",
    sections: [
      { name: "Public", content: [text("Everyone reads this")] },
      { name: SECRET_NAME, content: [text("We are buying Initech")] },
    ],
  });
  documentId = created.documentId;
  [publicId, secretId] = created.sectionIds as [string, string];
  await mergeSectionOverrides(server, owner.userId, { documentId, sectionId: secretId }, { defaultPermission: "none" });
  other = await startQuireProcess({ databaseUrl: database.url!, redisUrl: REDIS_URL });
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await other?.stop("SIGTERM");
  await server?.close();
  await database?.close();
});

describe.skipIf(!testDatabaseUrl())("draft status", () => {
  test("names only the changed sections the caller sees, and the editors and connected people by name", async () => {
    const secret = await live(server.url, roomName(documentId, "main", secretId), owner.token);
    const shared = await live(server.url, roomName(documentId, "main", publicId), member.token);
    secret.text().insert(0, "Draft: ");
    shared.text().insert(0, "Edited: ");

    // The owner (a manager) sees both changed sections, in the document's order.
    let asOwner = await draftStatus(owner.userId);
    for (const deadline = Date.now() + 5_000; asOwner.changedSections.length < 2 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      asOwner = await draftStatus(owner.userId);
    }
    expect(asOwner.changedSections).toEqual([
      { sectionId: publicId, name: "Public" },
      { sectionId: secretId, name: SECRET_NAME },
    ]);

    const asMember = await draftStatus(member.userId);
    expect(asMember.uncommittedChanges).toBe(true);
    expect(asMember.changedSections).toEqual([{ sectionId: publicId, name: "Public" }]);
    expect(JSON.stringify(asMember)).not.toContain(secretId);
    expect(JSON.stringify(asMember)).not.toContain(SECRET_NAME);
    const byName = (people: Array<{ userId: string; name: string }>) => [...people].sort((a, b) => a.name.localeCompare(b.name));
    expect(byName(asMember.editors)).toEqual([
      { userId: member.userId, name: "Mo Member" },
      { userId: owner.userId, name: "Olive Owner" },
    ]);
    expect(byName(asMember.connected)).toEqual([
      { userId: member.userId, name: "Mo Member" },
      { userId: owner.userId, name: "Olive Owner" },
    ]);
    const { branches } = await server.callTool("documents", owner.userId, { action: "list_branches", documentId });
    expect(asMember.headCommitId).toBe(branches.find((b) => b.name === "main")!.headCommitId);

    // A commit leaves nothing uncommitted.
    await server.callTool("documents", owner.userId, { action: "commit", documentId, branchName: "main" });
    const after = await draftStatus(member.userId);
    expect(after).toMatchObject({ uncommittedChanges: false, editors: [], changedSections: [] });
    expect(after.headCommitId).not.toBe(asMember.headCommitId);
  }, 30_000);

  test("edits undone back to the committed text leave nothing uncommitted, and nobody named as its editor", async () => {
    const client = await live(server.url, roomName(documentId, "main", publicId), owner.token);
    const statusUntil = async (wanted: boolean) => {
      let status = await draftStatus(owner.userId);
      for (const deadline = Date.now() + 5_000; status.uncommittedChanges !== wanted && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        status = await draftStatus(owner.userId);
      }
      return status;
    };
    client.text().insert(0, "Typo ");
    expect(await statusUntil(true)).toMatchObject({ uncommittedChanges: true, changedSections: [{ sectionId: publicId, name: "Public" }] });
    client.text().delete(0, "Typo ".length);
    expect(await statusUntil(false)).toMatchObject({ uncommittedChanges: false, editors: [], changedSections: [] });
  }, 30_000);

  test("documents get and list_branches over MCP say what draft_status says: a draft undone to the committed text is not uncommitted", async () => {
    const mcp = await server.mcpClient(owner.token);
    type Draft = { uncommittedChanges: boolean; editorIds: string[] };
    const answers = async () => {
      const got = await callMcp<{ draft: Draft }>(mcp, "documents", { action: "get", documentId });
      const listed = await callMcp<{ branches: Array<{ name: string; draft: Draft }> }>(mcp, "documents", {
        action: "list_branches",
        documentId,
      });
      const status = await callMcp<{ uncommittedChanges: boolean }>(mcp, "documents", {
        action: "draft_status",
        documentId,
        branchName: "main",
      });
      return [
        got.draft.uncommittedChanges,
        listed.branches.find((b) => b.name === "main")!.draft.uncommittedChanges,
        status.uncommittedChanges,
      ];
    };
    const answersUntil = async (wanted: boolean) => {
      let all = await answers();
      for (const deadline = Date.now() + 5_000; all.some((a) => a !== wanted) && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        all = await answers();
      }
      return all;
    };
    try {
      const client = await live(server.url, roomName(documentId, "main", publicId), member.token);
      client.text().insert(0, "Maybe ");
      expect(await answersUntil(true)).toEqual([true, true, true]);
      client.text().delete(0, "Maybe ".length);
      // The draft log still names the member as its editor; the text is the head's again, and all three say so.
      expect(await answersUntil(false)).toEqual([false, false, false]);
      const got = await callMcp<{ draft: Draft }>(mcp, "documents", { action: "get", documentId });
      expect(got.draft.editorIds).toEqual([]);
    } finally {
      await mcp.close();
    }
  }, 30_000);

  test("onDraftChanged fires here for an edit made on another process, in a room open here", async () => {
    const room = roomName(documentId, "main", publicId);
    const here = await live(server.url, room, owner.token);
    const there = await live(other.url, room, member.token);
    // The connections' own notices are over before listening.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const heard: Array<{ documentId: string; branchName: string }> = [];
    const stop = server.live.onDraftChanged((key) => heard.push(key));
    try {
      there.text().insert(0, "from the other process ");
      await waitFor(() => here.text().toString().startsWith("from the other process "), 5_000, "the edit here");
      await waitFor(() => heard.length > 0, 2_000, "a draft-change notice");
      expect(heard[0]).toEqual({ documentId, branchName: "main" });
    } finally {
      stop();
    }
  }, 30_000);
});
