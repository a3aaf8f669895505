/**
 * A changeset's execute is one PostgreSQL transaction: proven against a real
 * Quire process on real PostgreSQL. A kill -9 while it waits half-way (items
 * before it merged inside the transaction) leaves none merged; a write to one
 * item's target while it runs refuses the whole changeset (BRANCH_MOVED); two
 * executes at once merge once.
 */
import { createTRPCClient, httpLink } from "@trpc/client";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AppRouter } from "@/server/api/router";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { text } from "../helpers/blocks";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { type QuireProcess, startQuireProcess } from "../helpers/quire-process";

type Call = (procedure: string, input: Record<string, unknown>) => Promise<Record<string, unknown>>;

describe.skipIf(!testDatabaseUrl())("changeset execute is atomic on real PostgreSQL", () => {
  let database: TestDatabase;
  let token: string;
  let quire: QuireProcess;
  let rounds = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    await addUser(database.db, { email: "owner@example.test", name: "Olive", password: "correct horse battery" }, new Date());
    ({ token } = await issueApiToken(database.db, { email: "owner@example.test", label: "t" }, new Date()));
    quire = await startQuireProcess({ databaseUrl: database.url! });
  }, 60_000);
  afterAll(async () => {
    await quire?.stop("SIGTERM");
    await database?.close();
  });

  /** tRPC over HTTP with the owner's token; a refusal is thrown as its { code, message, details }. */
  const caller =
    (url: string): Call =>
    async (procedure, input) => {
      const client = createTRPCClient<AppRouter>({
        links: [httpLink({ url: `${url}/api/trpc`, headers: { authorization: `Bearer ${token}` } })],
      });
      try {
        return (await (client as unknown as Record<string, { mutate(i: unknown): Promise<unknown>; query(i: unknown): Promise<unknown> }>)[
          procedure
        ]!.mutate(input)) as Record<string, unknown>;
      } catch (error) {
        const payload = (error as { data?: { error?: { code: string; message: string } } }).data?.error;
        throw payload ? Object.assign(new Error(payload.message), payload) : error;
      }
    };

  /** Documents each with a change on `feature` (half of them also changed on main: merge commits; the rest fast-forward), in one changeset. */
  async function changesetOf(call: Call, count: number) {
    rounds += 1;
    const documents: Array<{ documentId: string; sectionIds: string[] }> = [];
    for (let i = 0; i < count; i++) {
      const doc = (await call("documents", {
        action: "create",
        path: `atomic-${rounds}/doc-${i}`,
        sections: [
          { name: "A", content: [text(`A${i}`)] },
          { name: "B", content: [text(`B${i}`)] },
        ],
      })) as { documentId: string; sectionIds: string[] };
      await call("documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
      await call("sections", {
        action: "update",
        documentId: doc.documentId,
        branchName: "feature",
        sectionId: doc.sectionIds[0],
        newContent: [text(`A${i} new`)],
      });
      if (i % 2 === 0) {
        await call("sections", {
          action: "update",
          documentId: doc.documentId,
          branchName: "main",
          sectionId: doc.sectionIds[1],
          newContent: [text(`B${i} main`)],
        });
      }
      documents.push(doc);
    }
    const created = (await call("changesets", {
      action: "create",
      sourceBranch: "feature",
      targetBranch: "main",
      title: `Round ${rounds}`,
      pathPrefix: `atomic-${rounds}/`,
    })) as { changesetId: string };
    // Document order is the order execute takes its locks in.
    const ordered = documents.map((d) => d.documentId).sort();
    const sectionIds = new Map(documents.map((d) => [d.documentId, d.sectionIds]));
    return { changesetId: created.changesetId, documentIds: ordered, sectionIds };
  }

  /** Per document, main's head; and the changeset's and its requests' states, straight from the database. */
  async function state(changesetId: string, documentIds: readonly string[]) {
    const sql = postgres(database.url!, { max: 1, onnotice: () => {} });
    try {
      const heads = await sql<Array<{ document_id: string; head_commit_id: string }>>`
        select document_id, head_commit_id from branches where name = 'main' and document_id = any(${documentIds as string[]}::uuid[]) order by document_id`;
      const [changeset] = await sql<Array<{ status: string }>>`select status from changesets where id = ${changesetId}`;
      const requests = await sql<Array<{ status: string }>>`
        select mr.status from changeset_items i join merge_requests mr on mr.id = i.merge_request_id where i.changeset_id = ${changesetId}`;
      return { heads: heads.map((h) => h.head_commit_id), changeset: changeset!.status, requests: requests.map((r) => r.status).sort() };
    } finally {
      await sql.end();
    }
  }

  /** A second connection holding one document's main branch row locked, so an execute reaching that item waits there. */
  async function holdBranch(documentId: string) {
    const sql = postgres(database.url!, { max: 1, onnotice: () => {} });
    await sql.unsafe("begin");
    await sql`select 1 from branches where document_id = ${documentId} and name = 'main' for update`;
    return {
      /** Until a backend of this database waits on a lock (the execute, at the held item). */
      async waitForWaiter() {
        for (let tries = 0; ; tries++) {
          const [row] = await sql<Array<{ n: number }>>`
            select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`;
          if (row!.n > 0) return;
          if (tries > 500) throw new Error("execute never reached the held item");
          await new Promise((r) => setTimeout(r, 20));
        }
      },
      /** Cuts off the waiting statement (its process is gone; PostgreSQL would otherwise keep it until the lock goes). */
      async terminateWaiters() {
        await sql.unsafe(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'",
        );
      },
      async release() {
        await sql.unsafe("rollback");
        await sql.end();
      },
    };
  }

  test("kill -9 while execute waits on its last item, the others merged in its transaction: none is merged; a restarted server merges all", async () => {
    const call = caller(quire.url);
    const { changesetId, documentIds } = await changesetOf(call, 6);
    const before = await state(changesetId, documentIds);
    expect(before.requests).toEqual(Array(6).fill("open"));
    const held = await holdBranch(documentIds.at(-1)!);
    const execution = call("changesets", { action: "execute", changesetId }).catch((error: unknown) => error);
    try {
      await held.waitForWaiter();
      await quire.stop("SIGKILL");
      await held.terminateWaiters();
    } finally {
      await held.release();
    }
    await execution;
    const after = await state(changesetId, documentIds);
    expect(after).toEqual(before);

    quire = await startQuireProcess({ databaseUrl: database.url! });
    const merged = (await caller(quire.url)("changesets", { action: "execute", changesetId })) as { merged: unknown[] };
    expect(merged.merged).toHaveLength(6);
    const done = await state(changesetId, documentIds);
    expect(done.changeset).toBe("merged");
    expect(done.requests).toEqual(Array(6).fill("merged"));
    for (const [i, head] of done.heads.entries()) expect(head).not.toBe(before.heads[i]);
  }, 120_000);

  test("kill -9 at random moments of execute: every item merged, or none", async () => {
    for (const delay of [5, 25, 60, 120]) {
      const call = caller(quire.url);
      const { changesetId, documentIds } = await changesetOf(call, 8);
      const before = await state(changesetId, documentIds);
      const execution = call("changesets", { action: "execute", changesetId }).catch((error: unknown) => error);
      await new Promise((r) => setTimeout(r, delay));
      await quire.stop("SIGKILL");
      await execution;
      const after = await state(changesetId, documentIds);
      const moved = after.heads.filter((head, i) => head !== before.heads[i]).length;
      if (after.changeset === "merged") {
        expect([moved, after.requests]).toEqual([8, Array(8).fill("merged")]);
      } else {
        expect([moved, after]).toEqual([0, before]);
      }
      quire = await startQuireProcess({ databaseUrl: database.url! });
    }
  }, 240_000);

  test("a write to one item's target while execute runs refuses the whole changeset with BRANCH_MOVED", async () => {
    const call = caller(quire.url);
    const { changesetId, documentIds, sectionIds } = await changesetOf(call, 4);
    const analysis = (await call("changesets", { action: "analyze", changesetId })) as {
      analyses: Array<{ documentId: string; analysis: { sourceHeadCommitId: string; targetHeadCommitId: string } }>;
    };
    const expectedHeads = analysis.analyses.map((a) => ({
      documentId: a.documentId,
      sourceHeadCommitId: a.analysis.sourceHeadCommitId,
      targetHeadCommitId: a.analysis.targetHeadCommitId,
    }));
    const before = await state(changesetId, documentIds);
    // Execute waits at the first item; meanwhile the third item's main takes a write.
    const held = await holdBranch(documentIds[0]!);
    const execution = call("changesets", { action: "execute", changesetId, expectedHeads }).catch((error: unknown) => error);
    try {
      await held.waitForWaiter();
      await call("sections", {
        action: "update",
        documentId: documentIds[2],
        branchName: "main",
        sectionId: sectionIds.get(documentIds[2]!)![1],
        newContent: [text("written during execute")],
      });
    } finally {
      await held.release();
    }
    const refused = (await execution) as { code: string; details: { items: Array<{ documentId: string; code: string }> } };
    expect(refused.code).toBe("BRANCH_MOVED");
    expect(refused.details.items.map((i) => i.documentId)).toEqual([documentIds[2]]);
    const after = await state(changesetId, documentIds);
    expect(after.requests).toEqual(before.requests);
    expect(after.heads.filter((head, i) => head !== before.heads[i])).toHaveLength(1);
  }, 120_000);

  test("two executes of one changeset at once merge it once", async () => {
    const call = caller(quire.url);
    const { changesetId, documentIds } = await changesetOf(call, 6);
    const results = await Promise.allSettled([
      call("changesets", { action: "execute", changesetId }),
      call("changesets", { action: "execute", changesetId }),
    ]);
    const fulfilled = results.filter((r) => r.status === "fulfilled");
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect((rejected[0]!.reason as { code: string }).code).toBe("CHANGESET_NOT_OPEN");
    const sql = postgres(database.url!, { max: 1, onnotice: () => {} });
    try {
      // One merge per document: a merge commit on main, or (fast-forward) none; never two.
      const merges = await sql<Array<{ n: number }>>`
        select count(*)::int as n from commits where kind = 'merge' and document_id = any(${documentIds}::uuid[])`;
      expect(merges[0]!.n).toBe(3);
      const moves = await sql<Array<{ n: number }>>`
        select count(*)::int as n from merge_requests mr join changeset_items i on i.merge_request_id = mr.id
        where i.changeset_id = ${changesetId} and mr.status = 'merged'`;
      expect(moves[0]!.n).toBe(6);
    } finally {
      await sql.end();
    }
  }, 120_000);
});
