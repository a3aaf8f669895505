/**
 * Two Quire processes on one PostgreSQL and one Redis (QUIRE_REDIS_URL):
 * clients connected to different processes edit one section and converge,
 * see each other's presence, and an API write to one process reaches an
 * editor on the other; a commit that hides a section reaches no reader on
 * the other process before the hiding does; an update published before it
 * was stored is stored by the receivers when its sender never confirms it.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { encode } from "next-auth/jwt";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { connectRedisBus } from "@/server/collab/bus";
import { ORPHAN_AFTER_MS } from "@/server/collab/fan-out";
import { appendDraftUpdates, findSectionDraft } from "@/server/store/drafts";
import * as Y from "yjs";
import { connectLive, type LiveClient, roomName, waitFor } from "../helpers/collab";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { type QuireProcess, startQuireProcess, TEST_PROCESS_AUTH_SECRET } from "../helpers/quire-process";

const REDIS_URL = "redis://127.0.0.1:6379";
const text = (t: string) => ({ blockType: "text" as const, text: t });

let database: TestDatabase;
let token: string;
let memberToken: string;
let ownerCookie: string;
const processes: QuireProcess[] = [];
const clients: LiveClient[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const owner = await addUser(database.db, { email: "owner@example.test", name: "Olive", password: "correct horse battery" }, new Date());
  ({ token } = await issueApiToken(database.db, { email: "owner@example.test", label: "t" }, new Date()));
  ownerCookie = `${sessionCookieName(false)}=${await encode({ token: { sub: owner.user.id }, secret: TEST_PROCESS_AUTH_SECRET })}`;
  await addUser(database.db, { email: "member@example.test", name: "Mo", password: "correct horse battery" }, new Date());
  ({ token: memberToken } = await issueApiToken(database.db, { email: "member@example.test", label: "t" }, new Date()));
  processes.push(await startQuireProcess({ databaseUrl: database.url!, redisUrl: REDIS_URL }));
  processes.push(await startQuireProcess({ databaseUrl: database.url!, redisUrl: REDIS_URL }));
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const p of processes) await p.stop("SIGTERM");
  await database?.close();
});

/** A tRPC call over HTTP: as the owner's agent (their API token), or as the owner in person (a session cookie). */
async function trpc(url: string, input: Record<string, unknown>, as: "agent" | "person" = "agent"): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}/api/trpc/${input.tool}`, {
    method: "POST",
    headers: { ...(as === "agent" ? { authorization: `Bearer ${token}` } : { cookie: ownerCookie }), "content-type": "application/json" },
    body: JSON.stringify({ ...input, tool: undefined }),
  });
  return ((await response.json()) as { result: { data: Record<string, unknown> } }).result.data;
}

test.skipIf(!testDatabaseUrl())(
  "clients on two processes converge, see each other, and see API writes made on either",
  async () => {
    const [one, two] = processes as [QuireProcess, QuireProcess];
    const created = await trpc(one.url, {
      tool: "documents",
      action: "create",
      path: "shared/notes",
      sections: [{ name: "Notes", content: [text("base")] }],
    });
    const documentId = created.documentId as string;
    const sectionId = (created.sectionIds as string[])[0]!;
    const room = roomName(documentId, "main", sectionId);
    const a = await connectLive(one.url, room, { token });
    const b = await connectLive(two.url, room, { token });
    clients.push(a, b);
    expect(a.text().toString()).toBe("base");
    expect(b.text().toString()).toBe("base");

    for (let i = 0; i < 20; i++) {
      a.text().insert(0, "a");
      b.text().insert(b.text().length, "b");
    }
    await waitFor(
      () => a.text().toString() === b.text().toString() && a.text().length === 44,
      5_000,
      `convergence: ${a.text().toString()} / ${b.text().toString()}`,
    );
    expect(a.text().toString()).toBe(`${"a".repeat(20)}base${"b".repeat(20)}`);

    // Presence crosses as the server stamped it: the token's account (an agent), whatever name the client claimed.
    a.provider.awareness.setLocalStateField("user", { name: "Ann on one", color: "#123456" });
    await waitFor(
      () =>
        [...b.provider.awareness.getStates().values()].some((s) => {
          const user = s.user as { name?: string; color?: string } | undefined;
          return user?.color === "#123456" && user.name === "Olive (agent)";
        }),
      5_000,
      "presence across processes",
    );

    // A write through process one reaches the editor connected to process two.
    await trpc(one.url, {
      tool: "sections",
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text("base, rewritten by the API")],
    });
    await waitFor(() => b.text().toString().includes("rewritten by the API"), 3_000, "API write on the other process");
    await waitFor(() => a.text().toString() === b.text().toString());
    expect(b.text().toString()).toBe(`${"a".repeat(20)}base, rewritten by the API${"b".repeat(20)}`);

    // Who is connected counts every process: with b gone, process two still reports a, connected to process one.
    b.close();
    const connected = async () =>
      (
        (await trpc(two.url, { tool: "documents", action: "list_branches", documentId })) as {
          branches: Array<{ draft: { connectedUserIds: string[] } }>;
        }
      ).branches[0]!.draft.connectedUserIds;
    await new Promise((r) => setTimeout(r, 200));
    expect(await connected()).toHaveLength(1);
    a.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(await connected()).toEqual([]);
  },
  60_000,
);

test.skipIf(!testDatabaseUrl())(
  "a commit that hides a section and changes it reaches no reader on the other process before the hiding does",
  async () => {
    const [one, two] = processes as [QuireProcess, QuireProcess];
    const created = await trpc(one.url, {
      tool: "documents",
      action: "create",
      path: "shared/hidden-later",
      sections: [{ name: "Open", content: [text("public so far")] }],
    });
    const documentId = created.documentId as string;
    const sectionId = (created.sectionIds as string[])[0]!;
    await trpc(one.url, { tool: "documents", action: "create_branch", documentId, branchName: "review" });
    const room = roomName(documentId, "review", sectionId);
    // The owner's editor on process one (whose room applies the commit), the member reading on process two.
    const ownerEditor = await connectLive(one.url, room, {}, { headers: { cookie: ownerCookie } });
    const reader = await connectLive(two.url, room, { token: memberToken });
    clients.push(ownerEditor, reader);
    let closedWith = 0;
    reader.provider.on("connection-close", (event: { code: number } | null) => {
      reader.provider.shouldConnect = false;
      closedWith = event?.code ?? -1;
    });
    await trpc(
      one.url,
      {
        tool: "sections",
        action: "update",
        documentId,
        branchName: "review",
        sectionId,
        newName: "Acquisition of Initech",
        defaultPermission: "none",
        newContent: [text("We offer 40 million")],
      },
      "person",
    );
    await waitFor(() => ownerEditor.text().toString() === "We offer 40 million", 5_000, "the commit in the owner's editor");
    await waitFor(() => closedWith !== 0, 5_000, "the reader closed");
    expect(closedWith).toBe(4403);
    await new Promise((r) => setTimeout(r, 300));
    const seen = Buffer.concat(reader.frames).toString("latin1");
    expect(seen).not.toContain("40 million");
    expect(seen).not.toContain("Initech");
  },
  60_000,
);

test.skipIf(!testDatabaseUrl())(
  "edits a process stored and never published (it died in between) reach the rooms of the others, from storage",
  async () => {
    const [, two] = processes as [QuireProcess, QuireProcess];
    const created = await trpc(two.url, {
      tool: "documents",
      action: "create",
      path: "shared/died-mid-publish",
      sections: [{ name: "Notes", content: [text("base")] }],
    });
    const key = { documentId: created.documentId as string, branchName: "main", sectionId: (created.sectionIds as string[])[0]! };
    const watcher = await connectLive(two.url, roomName(key.documentId, key.branchName, key.sectionId), { token });
    clients.push(watcher);
    // A client of a process that is about to die: its edits are stored by that process, one of them never published.
    const writer = new Y.Doc();
    Y.applyUpdate(writer, Y.encodeStateAsUpdate(watcher.doc));
    const edit = (at: number, words: string) => {
      const before = Y.encodeStateVector(writer);
      ((writer.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text).insert(at, words);
      return Y.encodeStateAsUpdate(writer, before);
    };
    const stored = edit(4, " STORED");
    const later = edit(11, " LATER");
    await appendDraftUpdates(database.db, [{ ...key, update: stored, authorId: null }]);
    await appendDraftUpdates(database.db, [{ ...key, update: later, authorId: null }]);
    const bus = await connectRedisBus(REDIS_URL);
    try {
      // Its next edit is published: it hangs on the one the room never saw, which the room takes from storage.
      await bus.publish({ ...key, kind: "update", payload: later });
      await waitFor(() => watcher.text().toString() === "base STORED LATER", 5_000, `the missed edit: ${watcher.text().toString()}`);

      // An edit stored and never published with nothing after it: the restarted process asks every room to catch up.
      const last = edit(17, " LAST");
      await appendDraftUpdates(database.db, [{ ...key, update: last, authorId: null }]);
      await bus.publish({ documentId: "", branchName: "", sectionId: "", kind: "catch-up", payload: new Uint8Array() });
      await waitFor(() => watcher.text().toString() === "base STORED LATER LAST", 5_000, `the catch-up: ${watcher.text().toString()}`);
    } finally {
      await bus.close();
      writer.destroy();
    }
  },
  60_000,
);

test.skipIf(!testDatabaseUrl())(
  "an update published before its store, whose sender died before storing it, is stored by the processes that applied it; a confirmed one is not",
  async () => {
    const [one] = processes as [QuireProcess, QuireProcess];
    const created = await trpc(one.url, {
      tool: "documents",
      action: "create",
      path: "shared/died-mid-store",
      sections: [{ name: "Notes", content: [text("base")] }],
    });
    const key = { documentId: created.documentId as string, branchName: "main", sectionId: (created.sectionIds as string[])[0]! };
    const watcher = await connectLive(one.url, roomName(key.documentId, key.branchName, key.sectionId), { token });
    clients.push(watcher);
    // Two clients' edits, each on the stored base alone (storage may hold either without the other).
    const edit = (words: string) => {
      const writer = new Y.Doc();
      Y.applyUpdate(writer, Y.encodeStateAsUpdate(watcher.doc));
      const before = Y.encodeStateVector(writer);
      ((writer.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text).insert(4, words);
      const update = Y.encodeStateAsUpdate(writer, before);
      writer.destroy();
      return update;
    };
    const confirmed = edit(" CONFIRMED");
    const orphan = edit(" ORPHAN");
    const bus = await connectRedisBus(REDIS_URL);
    try {
      // A process that publishes two edits on arrival, says it stored the first (it did not: nobody must store it for it), and dies.
      await bus.publish({ ...key, kind: "update", payload: confirmed, unstored: { seq: 1, authorId: null } });
      await bus.publish({ ...key, kind: "update", payload: orphan, unstored: { seq: 2, authorId: null } });
      const seqs = new Uint8Array([1, 1]);
      await bus.publish({ documentId: "", branchName: "", sectionId: "", kind: "stored", payload: seqs });
      await waitFor(
        () => watcher.text().toString().includes("CONFIRMED") && watcher.text().toString().includes("ORPHAN"),
        5_000,
        `both edits live: ${watcher.text().toString()}`,
      );
      const storedText = async () => {
        const stored = await findSectionDraft(database.db, key);
        const doc = new Y.Doc();
        if (stored) for (const update of [stored.state, ...stored.updates.map((u) => u.update)]) Y.applyUpdate(doc, update);
        const text = ((doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>).get(0).get("text") as Y.Text).toString();
        doc.destroy();
        return text;
      };
      expect(await storedText()).toBe("base");
      await new Promise((r) => setTimeout(r, ORPHAN_AFTER_MS));
      // Storage gets the orphan (its author's client, reconnecting here, would find the room had it and hand nothing over).
      const deadline = Date.now() + ORPHAN_AFTER_MS * 2;
      while (!(await storedText()).includes("ORPHAN") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 500));
      expect(await storedText()).toContain("ORPHAN");
      expect(await storedText()).not.toContain("CONFIRMED");
    } finally {
      await bus.close();
    }
  },
  90_000,
);
