/**
 * A head move applied into a live room never stalls the server: with a real
 * y-websocket client in a section's room, an MCP `sections update` writing
 * 5,000, 20,000 and then 1,000,000 random characters, and a 10,000-character
 * paste thrown away by `documents discard`, each keep the event loop's longest
 * stall small (the test server runs in this process, so the histogram sees
 * its event loop), and the client ends with the committed text. Before the
 * character diffs were bounded, 5,000 characters stalled it 2 s and 20,000
 * for 49 s; the sizes grow in one test so that it fails at the first.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { connectLive, type LiveClient, roomName, waitFor } from "../helpers/collab";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

/** Generous for a loaded 2-core box; the unbounded diff stalled for seconds. */
const MAX_STALL_MS = 250;
/** How long the client may take to show the committed text (a stalled server fails here, not at the test's timeout). */
const ARRIVAL_TIMEOUT_MS = 20_000;

let server: TestServer;
let owner: TestUser;
let mcp: Client;
const clients: LiveClient[] = [];

const text = (t: string) => ({ blockType: "text", text: t });
/** What `read` returns here: one section of one text block. */
type ReadResult = { sections: Array<{ content: Array<{ blockType: string; text: string }> }> };

let seed = 22;
/** Seeded random text of lowercase letters and spaces. */
function randomText(length: number): string {
  const units = new Array<string>(length);
  for (let i = 0; i < length; i++) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    units[i] = "abcdefghijklmnopqrstuvwxyz "[Math.floor((seed / 2 ** 32) * 27)]!;
  }
  return units.join("");
}

/** Runs `operation` and returns the event loop's longest stall (ms) while it ran. */
async function longestStall(operation: () => Promise<unknown>): Promise<number> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  try {
    await operation();
  } finally {
    delay.disable();
  }
  return delay.max / 1e6;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  mcp = await server.mcpClient(owner.token);
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await mcp?.close();
  await server?.close();
});

async function sectionWithClient(path: string, length: number): Promise<{ documentId: string; sectionId: string; client: LiveClient }> {
  const created = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
    action: "create",
    path,
    sections: [{ name: "Big", content: [text(randomText(length))] }],
  });
  const sectionId = created.sectionIds[0]!;
  const client = await connectLive(server.url, roomName(created.documentId, "main", sectionId), { token: owner.token });
  clients.push(client);
  return { documentId: created.documentId, sectionId, client };
}

test("an MCP write of 5,000, 20,000 and 1,000,000 random characters into an open room", async () => {
  const { documentId, sectionId, client } = await sectionWithClient("cost/writes", 2_000);
  for (const length of [5_000, 20_000, 1_000_000]) {
    const written = randomText(length);
    const stall = await longestStall(async () => {
      await callMcp(mcp, "sections", { action: "update", documentId, branchName: "main", sectionId, newContent: [text(written)] });
      await waitFor(() => client.text().toString() === written, ARRIVAL_TIMEOUT_MS, `the ${length}-character write in the client`);
    });
    expect(stall, `longest stall around the ${length}-character write`).toBeLessThan(MAX_STALL_MS);
    const committed = await callMcp<ReadResult>(mcp, "read", { documentId });
    expect(committed.sections[0]!.content).toEqual([text(written)]);
  }
}, 120_000);

test("a 10,000-character paste into 20,000 characters, thrown away by documents discard", async () => {
  const { documentId, client } = await sectionWithClient("cost/discard", 20_000);
  const committed = client.text().toString();
  client.text().insert(10_000, randomText(10_000));
  const pasted = client.text().toString();
  await expect
    .poll(async () => {
      const draft = await callMcp<ReadResult>(mcp, "read", { documentId, includeDraft: true });
      return draft.sections[0]!.content[0]!.text === pasted;
    })
    .toBe(true);
  const stall = await longestStall(async () => {
    await callMcp(mcp, "documents", { action: "discard", documentId, branchName: "main" });
    await waitFor(() => client.text().toString() === committed, ARRIVAL_TIMEOUT_MS, "the discard in the client");
  });
  expect(stall, "longest stall around the discard").toBeLessThan(MAX_STALL_MS);
}, 120_000);
