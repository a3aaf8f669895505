/**
 * A draft update appended alone (the live rooms' usual batch: drafts.ts's
 * APPEND_ONE, compiled once, its agent credited in the same statement) is
 * stored as the plain path (a batch through the builders) stores it.
 */
import { randomUUID } from "node:crypto";
import { asc } from "drizzle-orm";
import { afterAll, beforeAll, expect, test } from "vitest";
import { draftAgentEditors, draftUpdates } from "@/db/schema";
import type { AgentIdentity } from "@/db/schema-agents";
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
