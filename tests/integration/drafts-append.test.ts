/**
 * Draft updates appended one at a time (drafts.ts's APPEND_ONE) and as a
 * batch (APPEND, the rows as JSON), each one compiled statement crediting
 * the agents, are stored alike; the
 * rooms' line (collab/draft-appends.ts) gathers rooms' batches into one
 * statement, starts statements at most every spacing, and isolates a
 * refused one.
 */
import { randomUUID } from "node:crypto";
import { asc, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { draftAgentEditors, draftUpdates } from "@/db/schema";
import type { AgentIdentity } from "@/db/schema-agents";
import { DraftAppends } from "@/server/collab/draft-appends";
import { appendDraftUpdates, type NewDraftUpdate } from "@/server/store/drafts";
import { createTestDatabase, type TestDatabase } from "../helpers/database";

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

/** The same updates in another draft (a document of their own), so both paths' rows can be compared. */
const inDocument = (updates: readonly NewDraftUpdate[], documentId: string) => updates.map((u) => ({ ...u, documentId }));

async function stored(documentId: string) {
  const updates = await database.db.select().from(draftUpdates).orderBy(asc(draftUpdates.id));
  const credits = await database.db.select().from(draftAgentEditors);
  return {
    updates: updates
      .filter((u) => u.documentId === documentId)
      .map(({ branchName, sectionId, update, authorId }) => ({ branchName, sectionId, update, authorId })),
    credits: credits
      .filter((c) => c.documentId === documentId)
      .map(({ branchName, sectionId, userId, agentKey, agent }) => ({ branchName, sectionId, userId, agentKey, agent }))
      .sort((a, b) => `${a.sectionId}${a.userId}${a.agentKey}`.localeCompare(`${b.sectionId}${b.userId}${b.agentKey}`)),
  };
}

test("one update at a time and a batch of them store the same updates and agent credits, and answer their ids in order", async () => {
  const [person, other] = [randomUUID(), randomUUID()];
  const token: AgentIdentity = { kind: "api_token", id: randomUUID(), name: "CI's token" };
  const section = randomUUID();
  const updates: NewDraftUpdate[] = [
    { documentId: "", branchName: "main", sectionId: section, update: Uint8Array.of(1, 2, 3), authorId: person },
    { documentId: "", branchName: "main", sectionId: section, update: Uint8Array.of(0, 255, 0, 7), authorId: null },
    { documentId: "", branchName: "agent/it's", sectionId: section, update: Uint8Array.of(9), authorId: person, agent: token },
    // The same agent again: credited once.
    { documentId: "", branchName: "agent/it's", sectionId: section, update: Uint8Array.of(10), authorId: person, agent: token },
    { documentId: "", branchName: "main", sectionId: randomUUID(), update: Uint8Array.of(11), authorId: other, agent: null },
    // An agent without an author is not credited (no person to credit it with).
    { documentId: "", branchName: "main", sectionId: section, update: Uint8Array.of(12), authorId: null, agent: token },
  ];
  const [alone, batch] = [randomUUID(), randomUUID()];
  const aloneIds: number[] = [];
  for (const update of inDocument(updates, alone)) aloneIds.push(...(await appendDraftUpdates(database.db, [update])));
  const batchIds = await appendDraftUpdates(database.db, inDocument(updates, batch));
  expect(aloneIds).toHaveLength(updates.length);
  expect(aloneIds).toEqual([...aloneIds].sort((a, b) => a - b));
  expect(batchIds).toHaveLength(updates.length);
  expect(batchIds[0]).toBeGreaterThan(aloneIds.at(-1)!);
  const [aloneRows, batchRows] = [await stored(alone), await stored(batch)];
  expect(aloneRows).toEqual(batchRows);
  expect(aloneRows.updates.map((u) => u.update)).toEqual(updates.map((u) => u.update));
  expect(aloneRows.credits).toEqual([
    { branchName: "agent/it's", sectionId: section, userId: person, agentKey: `api_token:${token.id}`, agent: token },
  ]);
  // In a transaction too.
  await database.db.transaction(async (tx) => {
    const [id] = await appendDraftUpdates(tx, [{ ...updates[0]!, documentId: alone }]);
    expect(id).toBeGreaterThan(batchIds.at(-1)!);
  });
});

/** A draft's rows in log order, each with the transaction that wrote it (rows one statement wrote share it). */
async function loggedWithWriter(documentId: string) {
  const result = await database.db.execute(
    sql`select section_id::text as "sectionId", update, xmin::text as "writtenBy" from ${draftUpdates} where document_id = ${documentId} order by id`,
  );
  // postgres.js answers the rows, PGlite an object holding them.
  const rows = (Array.isArray(result) ? result : (result as unknown as { rows: unknown[] }).rows) as Array<{
    sectionId: string;
    update: Uint8Array;
    writtenBy: string;
  }>;
  return rows.map((r) => ({ sectionId: r.sectionId, bytes: [...r.update], writtenBy: r.writtenBy }));
}

const oneByteRow = (documentId: string, sectionId: string, byte: number): NewDraftUpdate => ({
  documentId,
  branchName: "main",
  sectionId,
  update: Uint8Array.of(byte),
  authorId: null,
});

test("the rooms' line writes at once when idle, and what is handed over meanwhile, from any rooms, as one statement", async () => {
  const appends = new DraftAppends(database.db);
  const documentId = randomUUID();
  const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()];
  // Handed over in one synchronous step: the idle line writes the first at once, the others gather behind it.
  await Promise.all([
    appends.append([oneByteRow(documentId, first, 1)]),
    appends.append([oneByteRow(documentId, second, 2), oneByteRow(documentId, second, 3)]),
    appends.append([oneByteRow(documentId, third, 4)]),
  ]);
  const logged = await loggedWithWriter(documentId);
  expect(logged.map((r) => [r.sectionId, r.bytes])).toEqual([
    [first, [1]],
    [second, [2]],
    [second, [3]],
    [third, [4]],
  ]);
  expect(logged[1]!.writtenBy).not.toBe(logged[0]!.writtenBy);
  expect(new Set(logged.slice(1).map((r) => r.writtenBy)).size).toBe(1);
});

test("a busy line starts statements at most every spacing: what is handed over within it, at any moment, is one statement", async () => {
  const SPACING_MS = 300;
  const appends = new DraftAppends(database.db, SPACING_MS);
  const documentId = randomUUID();
  const [first, second] = [randomUUID(), randomUUID()];
  const firstStarted = performance.now();
  await appends.append([oneByteRow(documentId, first, 1)]);
  // Handed over at two moments after the first statement: both wait for the spacing to pass, then go as one statement.
  const secondStored = appends.append([oneByteRow(documentId, second, 2)]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  await Promise.all([secondStored, appends.append([oneByteRow(documentId, first, 3)])]);
  // Timers may fire a millisecond before performance.now() says they are due.
  expect(performance.now() - firstStarted).toBeGreaterThanOrEqual(SPACING_MS - 2);
  const logged = await loggedWithWriter(documentId);
  expect(logged.map((r) => [r.sectionId, r.bytes])).toEqual([
    [first, [1]],
    [second, [2]],
    [first, [3]],
  ]);
  expect(logged[1]!.writtenBy).not.toBe(logged[0]!.writtenBy);
  expect(logged[2]!.writtenBy).toBe(logged[1]!.writtenBy);
});

test("a hurried line starts its next statement without waiting for the spacing, also when hurried before the rows arrive", async () => {
  const SPACING_MS = 5_000;
  const appends = new DraftAppends(database.db, SPACING_MS);
  const documentId = randomUUID();
  const section = randomUUID();
  await appends.append([oneByteRow(documentId, section, 1)]);
  const started = performance.now();
  const second = appends.append([oneByteRow(documentId, section, 2)]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  appends.hurry();
  await second;
  // Before the rows: a room asks as it settles, and hands its batch over a microtask later.
  appends.hurry();
  await appends.append([oneByteRow(documentId, section, 3)]);
  expect(performance.now() - started).toBeLessThan(SPACING_MS / 2);
  // Hurrying is for one statement: the next waits for the spacing again.
  const unhurried = appends.append([oneByteRow(documentId, section, 4)]);
  const outcome = await Promise.race([unhurried.then(() => "stored"), new Promise((r) => setTimeout(() => r("waiting"), 300))]);
  expect(outcome).toBe("waiting");
  appends.hurry();
  await unhurried;
  expect((await loggedWithWriter(documentId)).map((r) => r.bytes)).toEqual([[1], [2], [3], [4]]);
});

test("a batch the database refuses is written again room by room: only the refused room's append fails", async () => {
  const appends = new DraftAppends(database.db);
  const documentId = randomUUID();
  const [first, second] = [randomUUID(), randomUUID()];
  const outcomes = await Promise.allSettled([
    appends.append([oneByteRow(documentId, first, 1)]),
    appends.append([oneByteRow(documentId, second, 2)]),
    // Not a section id: refused, in the same batch as the second.
    appends.append([oneByteRow(documentId, "not a uuid", 3)]),
    appends.append([oneByteRow(documentId, second, 4)]),
  ]);
  expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
  expect((await loggedWithWriter(documentId)).map((r) => [r.sectionId, r.bytes])).toEqual([
    [first, [1]],
    [second, [2]],
    [second, [4]],
  ]);
});
