/**
 * Search answers exactly what access allows (server/access decides): a
 * section hidden from the caller is never matched, counted or snippeted, on
 * the default branch or any other (hiding at the default head covers every
 * branch), nor are comments anchored in it; documents the caller may not read
 * (and their merge requests) are never returned or counted; an agent (API
 * token, over MCP) is capped by aiAccess where its person is not; a reader of
 * nothing finds nothing; another workspace is never searched; and a share
 * link or no credential gets no search at all.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { SearchResult } from "@/server/actions/search";
import { actorForUser } from "@/server/access/actor";
import { text } from "../helpers/blocks";
import { callMcp, mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { asSent } from "../helpers/as-sent";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let guest: TestUser;
let memberMcp: Client;

let documentId: string;
let secretSectionId: string;
let aiHiddenSectionId: string;
let restrictedDocumentId: string;

const SECRET = "Marmalade salary bands";
const searchAs = (user: TestUser, args: Record<string, unknown>) => server.trpcCaller(user).search(asSent(args)) as Promise<SearchResult>;
const agentSearch = (args: Record<string, unknown>) => callMcp<SearchResult>(memberMcp, "search", args);
const everything = (result: SearchResult) => JSON.stringify(result).toLowerCase();

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Max Member");
  guest = await server.createUser("guest@example.test", "Gus Guest");
  await server.trpcCaller(owner).workspace({ action: "change_role", userId: guest.userId, role: "guest" });
  guest = { ...guest, actor: (await actorForUser(server.db, guest.userId, "person"))! };
  memberMcp = await server.mcpClient(member.token);

  const doc = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "people/pay",
    sections: [
      { name: "Overview", content: [text("Pay reviews happen every spring; marmalade is served.")] },
      {
        name: SECRET,
        content: [text('The marmalade <svc:comment-new body="Is the marmalade band right?">bands</svc:comment-new> are confidential.')],
      },
      { name: "Model notes", content: [text("Marmalade forecasts are not for agents.")] },
    ],
  });
  documentId = doc.documentId;
  [, secretSectionId, aiHiddenSectionId] = doc.sectionIds as [string, string, string];
  // A branch made before the hiding keeps the section with its old (open) overrides.
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId, branchName: "before-hiding" });
  await mergeSectionOverrides(server, owner.userId, { documentId, sectionId: secretSectionId }, { defaultPermission: "none" });
  await mergeSectionOverrides(server, owner.userId, { documentId, sectionId: aiHiddenSectionId }, { aiAccess: "none" });

  const restricted = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "board/minutes",
    sections: [{ name: "Minutes", content: [text("The board discussed marmalade procurement.")] }],
  });
  restrictedDocumentId = restricted.documentId;
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId: restrictedDocumentId, branchName: "edits" });
  await server.callTool("sections", owner.userId, {
    action: "create",
    documentId: restrictedDocumentId,
    branchName: "edits",
    name: "Appendix",
    content: [text("More marmalade.")],
  });
  await server.callTool("merge_requests", owner.userId, {
    action: "create",
    documentId: restrictedDocumentId,
    sourceBranch: "edits",
    targetBranch: "main",
    title: "Marmalade appendix for the board",
  });
  await server.callTool("documents", owner.userId, {
    action: "set_permissions",
    documentId: restrictedDocumentId,
    defaultPermission: "none",
  });

  // Another workspace's document with the same word.
  const outsiderId = await server.createOutsider("outsider@example.test", "Otto Outsider");
  await server.callTool("documents", outsiderId, {
    action: "create",
    path: "elsewhere/marmalade",
    sections: [{ name: "Marmalade", content: [text("marmalade elsewhere")] }],
  });
});

afterAll(async () => {
  await memberMcp?.close();
  await server?.close();
});

describe("hidden sections", () => {
  test("a section hidden from a member is never matched, counted or snippeted; its manager finds it", async () => {
    const asMember = await searchAs(member, { query: "marmalade" });
    expect(asMember.hits.map((h) => h.sectionId)).not.toContain(secretSectionId);
    expect(asMember.total).toBe(asMember.hits.length);
    expect(everything(asMember)).not.toContain("salary");
    expect(everything(asMember)).not.toContain("confidential");
    // Searching for the hidden words alone finds nothing and counts nothing.
    for (const query of ["confidential", "salary bands"]) {
      const hidden = await searchAs(member, { query });
      expect(hidden).toMatchObject({ total: 0, hits: [], correctedTo: null });
    }
    const asOwner = await searchAs(owner, { query: "confidential" });
    expect(asOwner.hits.map((h) => h.sectionId)).toEqual([secretSectionId]);
  });

  test("hiding at the default head covers every branch, and the comments anchored in the hidden section", async () => {
    expect((await searchAs(owner, { query: "confidential", branchName: "before-hiding" })).total).toBe(1);
    expect(await searchAs(member, { query: "confidential", branchName: "before-hiding" })).toMatchObject({ total: 0, hits: [] });
    expect((await searchAs(owner, { query: "band right", kind: "comment" })).total).toBe(1);
    expect((await searchAs(member, { query: "band right", kind: "comment" })).total).toBe(0);
    expect((await searchAs(member, { query: "band right", kind: "comment", branchName: "before-hiding" })).total).toBe(0);
  });
});

describe("documents", () => {
  test("a document the member may not read is never returned or counted, nor its merge requests", async () => {
    const result = await searchAs(member, { query: "marmalade" });
    expect(result.hits.map((h) => h.documentId)).not.toContain(restrictedDocumentId);
    expect(everything(result)).not.toContain("board");
    expect((await searchAs(member, { query: "procurement" })).total).toBe(0);
    expect((await searchAs(member, { query: "appendix", kind: "merge_request" })).total).toBe(0);
    expect((await searchAs(owner, { query: "appendix", kind: "merge_request" })).total).toBe(1);
    // A grant opens it.
    await server.callTool("documents", owner.userId, {
      action: "set_permissions",
      documentId: restrictedDocumentId,
      grants: [{ userId: member.userId, permission: "read" }],
    });
    try {
      expect((await searchAs(member, { query: "procurement" })).total).toBe(1);
    } finally {
      await server.callTool("documents", owner.userId, {
        action: "set_permissions",
        documentId: restrictedDocumentId,
        grants: [{ userId: member.userId, permission: null }],
      });
    }
  });

  test("a guest without grants reads nothing and finds nothing", async () => {
    for (const query of ["marmalade", "pay", "people"]) {
      expect(await searchAs(guest, { query })).toMatchObject({ total: 0, hits: [], nextCursor: null });
    }
  });

  test("another workspace is never searched", async () => {
    const result = await searchAs(owner, { query: "elsewhere" });
    expect(result.total).toBe(0);
  });
});

describe("agents", () => {
  test("an agent is capped by a section's aiAccess where its person is not", async () => {
    const agent = await agentSearch({ query: "forecasts" });
    expect(agent.total).toBe(0);
    const person = await searchAs(member, { query: "forecasts" });
    expect(person.hits.map((h) => h.sectionId)).toEqual([aiHiddenSectionId]);
  });

  test("an agent is capped by the document's aiAccess", async () => {
    expect((await agentSearch({ query: "spring" })).total).toBe(1);
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, aiAccess: "none" });
    try {
      expect(await agentSearch({ query: "spring" })).toMatchObject({ total: 0, hits: [] });
      expect((await searchAs(member, { query: "spring" })).total).toBe(1);
    } finally {
      await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, aiAccess: "edit" });
    }
  });
});

describe("no search without a member's credential", () => {
  test("tRPC and MCP without a credential, or with a share link's token, are refused", async () => {
    const link = await server.callTool("documents", owner.userId, { action: "create_share_link", documentId, permission: "read" });
    const shareToken = link.path.replace(/^.*\/share\//, "");
    const input = encodeURIComponent(JSON.stringify({ query: "marmalade" }));
    for (const headers of [{}, { authorization: `Bearer ${shareToken}` }] as Array<Record<string, string>>) {
      const trpc = await fetch(`${server.url}/api/trpc/search?input=${input}`, { headers });
      expect(trpc.status).toBe(401);
      expect(await trpc.text()).not.toContain("Overview");
      const mcp = await fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "search", arguments: { query: "marmalade" } },
        }),
      });
      expect(mcp.status).toBe(401);
    }
  });
});
