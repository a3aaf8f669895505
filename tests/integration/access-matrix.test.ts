/**
 * Who may do what, through the real faces: every action of every document
 * tool × every kind of caller, generated from one table of expectations.
 * Humans call through tRPC, AI through MCP; a share-link visitor can only read.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { memberships } from "@/db/schema";
import type { ToolName } from "@/server/actions/registry";
import { acceptShareLink, readSharedDocument } from "@/server/actions/share-links";
import { isDomainError } from "@/server/core/errors";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

/** "workspace": tools about the workspace itself, open to every member and every AI call. */
type Need = "workspace" | "read" | "edit" | "manage";
type Outcome = "allow" | "not_found" | "denied";
type Args = Record<string, unknown>;

let server: TestServer;
let owner: TestUser;
let ownerMcp: Client;
const text = (t: string) => ({ blockType: "text", text: t });

/** A document prepared for one caller, with the fixtures actions need. */
interface Fixture {
  documentId: string;
  sectionIds: string[];
  firstCommitId: string;
  tagId: string;
  otherDocumentId: string;
  counter: number;
}

const asOwner = <T = Record<string, unknown>>(tool: string, args: Args) => callMcpHuman<T>(tool, args);
/** The owner sets fixtures up through the tRPC face as a human (an AI call could not manage permissions). */
async function callMcpHuman<T>(tool: string, args: Args): Promise<T> {
  return (await server.callTool(tool as ToolName, owner.userId, args as never)) as T;
}

async function makeFixture(settings: { defaultPermission: string; aiAccess: string; grants?: Array<{ userId: string; permission: string }> }): Promise<Fixture> {
  const doc = await asOwner<{ documentId: string; sectionIds: string[]; commitId: string }>("documents", {
    action: "create",
    path: `matrix/${crypto.randomUUID()}`,
    sections: [{ name: "One", content: [text("one")] }, { name: "Two", content: [text("two")] }],
  });
  await asOwner("documents", { action: "create_branch", documentId: doc.documentId, branchName: "work" });
  await asOwner("documents", { action: "set_permissions", documentId: doc.documentId, ...settings });
  const tag = await asOwner<{ tagId: string }>("documents", { action: "create_tag", tagPath: `matrix/${crypto.randomUUID()}` });
  const other = await asOwner<{ documentId: string }>("documents", { action: "create", path: `matrix/other-${crypto.randomUUID()}` });
  return { documentId: doc.documentId, sectionIds: doc.sectionIds, firstCommitId: doc.commitId, tagId: tag.tagId, otherDocumentId: other.documentId, counter: 0 };
}

/** A fresh branch with one change on it, and a merge request from it (owned by the owner). */
async function freshMergeRequest(f: Fixture): Promise<string> {
  const branchName = `mr-${++f.counter}`;
  await asOwner("documents", { action: "create_branch", documentId: f.documentId, branchName });
  await asOwner("sections", { action: "update", documentId: f.documentId, branchName, sectionId: f.sectionIds[1], newContent: [text(`change ${f.counter}`)] });
  const mr = await asOwner<{ mergeRequestId: string }>("merge_requests", { action: "create", documentId: f.documentId, sourceBranch: branchName, targetBranch: "main", title: branchName });
  return mr.mergeRequestId;
}

interface Case {
  tool: ToolName;
  action: string;
  need: Need;
  args(f: Fixture): Promise<Args>;
  /** For list actions: whether the document shows up counts as the outcome. */
  lists?: (result: unknown, f: Fixture) => boolean;
}

const d = (f: Fixture) => ({ documentId: f.documentId });
const CASES: Case[] = [
  { tool: "documents", action: "get", need: "read", args: async (f) => d(f) },
  {
    tool: "documents",
    action: "list",
    need: "read",
    args: async () => ({ pathPrefix: "matrix/", limit: 200 }),
    lists: (r, f) => (r as { documents: Array<{ documentId: string }> }).documents.some((x) => x.documentId === f.documentId),
  },
  { tool: "documents", action: "list_branches", need: "read", args: async (f) => d(f) },
  { tool: "documents", action: "log", need: "read", args: async (f) => ({ ...d(f), branchName: "work" }) },
  { tool: "documents", action: "show", need: "read", args: async (f) => ({ ...d(f), commitId: f.firstCommitId }) },
  { tool: "read", action: "", need: "read", args: async (f) => ({ ...d(f), branchName: "work" }) },
  { tool: "documents", action: "create_branch", need: "edit", args: async (f) => ({ ...d(f), branchName: `b-${++f.counter}` }) },
  { tool: "documents", action: "update", need: "edit", args: async (f) => ({ ...d(f), branchName: "work", newName: `Name ${++f.counter}` }) },
  {
    tool: "documents",
    action: "delete",
    need: "edit",
    args: async (f) => {
      const branchName = `del-${++f.counter}`;
      await asOwner("documents", { action: "create_branch", ...d(f), branchName });
      return { ...d(f), branchName };
    },
  },
  { tool: "documents", action: "revert", need: "edit", args: async (f) => ({ ...d(f), branchName: "work", commitId: f.firstCommitId }) },
  { tool: "documents", action: "assign_tag", need: "edit", args: async (f) => ({ ...d(f), branchName: "work", tagId: f.tagId }) },
  {
    tool: "documents",
    action: "set_property",
    need: "edit",
    args: async (f) => ({ ...d(f), branchName: "work", columnId: "55555555-5555-4555-8555-555555555555", value: ++f.counter }),
  },
  { tool: "documents", action: "get_permissions", need: "manage", args: async (f) => d(f) },
  { tool: "documents", action: "set_permissions", need: "manage", args: async (f) => ({ ...d(f), grants: [] }) },
  { tool: "documents", action: "create_share_link", need: "manage", args: async (f) => ({ ...d(f), permission: "read" }) },
  { tool: "documents", action: "list_share_links", need: "manage", args: async (f) => d(f) },
  { tool: "sections", action: "create", need: "edit", args: async (f) => ({ ...d(f), branchName: "work", name: `S${++f.counter}`, content: [] }) },
  {
    tool: "sections",
    action: "batch_create",
    need: "edit",
    args: async (f) => ({ ...d(f), branchName: "work", sections: [{ name: `B${++f.counter}`, content: [] }] }),
  },
  {
    tool: "sections",
    action: "update",
    need: "edit",
    args: async (f) => ({ ...d(f), branchName: "work", sectionId: f.sectionIds[0], newContent: [text(`edit ${++f.counter}`)] }),
  },
  {
    tool: "sections",
    action: "delete",
    need: "edit",
    args: async (f) => {
      const created = await asOwner<{ sectionId: string }>("sections", { action: "create", ...d(f), branchName: "work", name: `D${++f.counter}`, content: [] });
      return { ...d(f), branchName: "work", sectionId: created.sectionId };
    },
  },
  {
    tool: "sections",
    action: "reorder",
    need: "edit",
    args: async (f) => {
      const doc = await asOwner<{ sections: Array<{ sectionId: string }> }>("read", { ...d(f), branchName: "work" });
      return { ...d(f), branchName: "work", sectionOrder: doc.sections.map((s) => s.sectionId).reverse() };
    },
  },
  {
    tool: "sections",
    action: "add_reference",
    need: "edit",
    args: async (f) => ({ ...d(f), branchName: "work", sectionId: f.sectionIds[0], targetDocumentId: f.otherDocumentId }),
  },
  {
    tool: "sections",
    action: "remove_reference",
    need: "edit",
    args: async (f) => {
      const ref = await asOwner<{ referenceId: string }>("sections", {
        action: "add_reference",
        ...d(f),
        branchName: "work",
        sectionId: f.sectionIds[0],
        targetDocumentId: f.otherDocumentId,
      });
      return { ...d(f), branchName: "work", referenceId: ref.referenceId };
    },
  },
  {
    tool: "merge_requests",
    action: "list",
    need: "read",
    args: async (f) => {
      await freshMergeRequest(f);
      return {};
    },
    lists: (r, f) => (r as { mergeRequests: Array<{ documentId: string }> }).mergeRequests.some((m) => m.documentId === f.documentId),
  },
  { tool: "merge_requests", action: "get", need: "read", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f) }) },
  { tool: "merge_requests", action: "analyze", need: "read", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f) }) },
  {
    tool: "merge_requests",
    action: "create",
    need: "edit",
    args: async (f) => {
      const branchName = `prop-${++f.counter}`;
      await asOwner("documents", { action: "create_branch", ...d(f), branchName });
      await asOwner("sections", { action: "update", ...d(f), branchName, sectionId: f.sectionIds[0], newContent: [text(`p${f.counter}`)] });
      return { ...d(f), sourceBranch: branchName, targetBranch: "main", title: "Proposal" };
    },
  },
  { tool: "merge_requests", action: "execute", need: "edit", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f) }) },
  { tool: "merge_requests", action: "close", need: "edit", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f) }) },
  { tool: "merge_requests", action: "update", need: "edit", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f), newTitle: "Retitled" }) },
  { tool: "members", action: "list", need: "workspace", args: async () => ({}) },
  { tool: "members", action: "search", need: "workspace", args: async () => ({ query: "ol" }) },
  { tool: "upload_url", action: "", need: "workspace", args: async () => ({ filename: "notes.txt", mediaType: "text/plain", size: 10 }) },
];

/** What each kind of caller may do, per need. */
const EXPECT: Record<string, Record<Need, Outcome>> = {
  owner: { workspace: "allow", read: "allow", edit: "allow", manage: "allow" },
  admin: { workspace: "allow", read: "allow", edit: "allow", manage: "allow" },
  "member with edit": { workspace: "allow", read: "allow", edit: "allow", manage: "denied" },
  "member with read": { workspace: "allow", read: "allow", edit: "denied", manage: "denied" },
  "member with none": { workspace: "allow", read: "not_found", edit: "not_found", manage: "not_found" },
  "guest without grant": { workspace: "allow", read: "not_found", edit: "not_found", manage: "not_found" },
  "AI, aiAccess edit": { workspace: "allow", read: "allow", edit: "allow", manage: "denied" },
  "AI, aiAccess read": { workspace: "allow", read: "allow", edit: "denied", manage: "denied" },
  "AI, aiAccess none": { workspace: "allow", read: "not_found", edit: "not_found", manage: "not_found" },
};

interface Caller {
  fixture: Fixture;
  call(tool: ToolName, args: Args): Promise<unknown>;
}
const callers = new Map<string, Caller>();

const ROUTER_NAMES: Record<string, string> = { merge_requests: "mergeRequests", upload_url: "uploadUrl" };

function humanCaller(user: TestUser, fixture: Fixture): Caller {
  const trpc = server.trpcCaller(user) as unknown as Record<string, (args: Args) => Promise<unknown>>;
  return {
    fixture,
    async call(tool, args) {
      try {
        return await trpc[ROUTER_NAMES[tool] ?? tool]!(args);
      } catch (error) {
        const cause = (error as { cause?: unknown }).cause;
        throw isDomainError(cause) ? cause : error;
      }
    },
  };
}

function aiCaller(client: Client, fixture: Fixture): Caller {
  return {
    fixture,
    async call(tool, args) {
      const result = await client.callTool({ name: tool, arguments: args });
      if (result.isError) throw Object.assign(new Error("tool error"), (result.structuredContent as { error: object }).error);
      return result.structuredContent;
    },
  };
}

async function outcomeOf(caller: Caller, c: Case): Promise<Outcome | string> {
  const args = { ...(c.action ? { action: c.action } : {}), ...(await c.args(caller.fixture)) };
  try {
    const result = await caller.call(c.tool, args);
    if (c.lists) return c.lists(result, caller.fixture) ? "allow" : "not_found";
    return "allow";
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "NOT_FOUND") return "not_found";
    if (code === "PERMISSION_DENIED") return "denied";
    return `unexpected ${code}: ${(error as Error).message}`;
  }
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  ownerMcp = await server.mcpClient(owner.token);
  const admin = await server.createUser("admin@example.test", "Ada Admin");
  await server.db.update(memberships).set({ role: "admin" }).where(eq(memberships.userId, admin.userId));
  const editor = await server.createUser("editor@example.test", "Ed Editor");
  const reader = await server.createUser("reader@example.test", "Rae Reader");
  const blocked = await server.createUser("blocked@example.test", "Bo Blocked");
  const guest = await server.createUser("guest@example.test", "Gus Guest");
  await server.db.update(memberships).set({ role: "guest" }).where(eq(memberships.userId, guest.userId));

  const human = await makeFixture({
    defaultPermission: "edit",
    aiAccess: "edit",
    grants: [
      { userId: editor.userId, permission: "edit" },
      { userId: reader.userId, permission: "read" },
      { userId: blocked.userId, permission: "none" },
    ],
  });
  const adminActor = { ...admin, actor: { ...admin.actor, role: "admin" as const } };
  const guestActor = { ...guest, actor: { ...guest.actor, role: "guest" as const } };
  callers.set("owner", humanCaller(owner, human));
  callers.set("admin", humanCaller(adminActor, human));
  callers.set("member with edit", humanCaller(editor, human));
  callers.set("member with read", humanCaller(reader, human));
  callers.set("member with none", humanCaller(blocked, human));
  callers.set("guest without grant", humanCaller(guestActor, human));
  for (const aiAccess of ["edit", "read", "none"]) {
    callers.set(`AI, aiAccess ${aiAccess}`, aiCaller(ownerMcp, await makeFixture({ defaultPermission: "edit", aiAccess })));
  }
}, 240_000);

afterAll(async () => {
  await ownerMcp?.close();
  await server?.close();
});

describe.each(Object.keys(EXPECT))("%s", (role) => {
  test.each(CASES.map((c) => [`${c.tool}${c.action ? ` ${c.action}` : ""}`, c] as const))("%s", async (_label, c) => {
    expect(await outcomeOf(callers.get(role)!, c)).toBe(EXPECT[role]![c.need]);
  });
});

describe("callers outside the workspace", () => {
  test("a user with no membership is refused by both faces, and a non-member token reads as unauthenticated", async () => {
    const outsider = await server.createUser("outsider@example.test", "Otto Outsider");
    await server.db.delete(memberships).where(eq(memberships.userId, outsider.userId));
    const res = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${outsider.token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    await expect(server.trpcClient(outsider.token).read.query({ documentId: callers.get("owner")!.fixture.documentId })).rejects.toMatchObject({
      data: { code: "UNAUTHORIZED" },
    });
  });

  test("a share-link visitor can read through a read link, and only while it lives", async () => {
    const f = callers.get("owner")!.fixture;
    const link = await asOwner<{ path: string; shareLinkId: string }>("documents", { action: "create_share_link", ...d(f), permission: "read" });
    const token = link.path.replace("/share/", "");
    const view = await readSharedDocument(server.db, token, {}, new Date());
    expect(view.documentId).toBe(f.documentId);
    expect(view.sections.map((s) => s.name)).toEqual(["One", "Two"]);
    const edit = await asOwner<{ path: string }>("documents", { action: "create_share_link", ...d(f), permission: "edit" });
    await expect(readSharedDocument(server.db, edit.path.replace("/share/", ""), {}, new Date())).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    await asOwner("documents", { action: "revoke_share_link", ...d(f), shareLinkId: link.shareLinkId });
    await expect(readSharedDocument(server.db, token, {}, new Date())).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  test("opening a share link while signed in raises a member's access, never lowers it", async () => {
    const f = callers.get("owner")!.fixture;
    const readLink = await asOwner<{ path: string }>("documents", { action: "create_share_link", ...d(f), permission: "read" });
    const token = readLink.path.replace("/share/", "");
    const editorCaller = callers.get("member with edit")!;
    const blockedCaller = callers.get("member with none")!;
    const permissionOf = async (caller: Caller) =>
      ((await caller.call("documents", { action: "get", ...d(f) }).catch(() => ({ yourPermission: "none" }))) as { yourPermission: string }).yourPermission;
    const editor = await server.db.query.users.findFirst({ where: (u, { eq: is }) => is(u.email, "editor@example.test") });
    const blocked = await server.db.query.users.findFirst({ where: (u, { eq: is }) => is(u.email, "blocked@example.test") });
    await acceptShareLink(server.db, editor!.id, token, new Date());
    expect(await permissionOf(editorCaller)).toBe("edit");
    expect(await permissionOf(blockedCaller)).toBe("none");
    await acceptShareLink(server.db, blocked!.id, token, new Date());
    expect(await permissionOf(blockedCaller)).toBe("read");
  });

  test("an AI call can never manage permissions, even for the document's owner", async () => {
    const f = callers.get("AI, aiAccess edit")!.fixture;
    const result = await ownerMcp.callTool({ name: "documents", arguments: { action: "set_permissions", documentId: f.documentId, aiAccess: "edit" } });
    expect(result.isError).toBe(true);
    expect((result.structuredContent as { error: { code: string } }).error.code).toBe("PERMISSION_DENIED");
    const list = await callMcp<{ documents: unknown[] }>(ownerMcp, "documents", { action: "list", pathPrefix: "matrix/" });
    expect(list.documents.length).toBeGreaterThan(0);
  });
});
