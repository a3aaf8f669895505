/**
 * Who may do what, through the real faces: every action of every document
 * tool × every kind of caller, generated from one table of expectations.
 * People call through tRPC; agents — every API token — through MCP and
 * through tRPC over HTTP with the same token, capped alike; a share-link
 * visitor can only read; an agent's document as an MCP resource follows read
 * access. Then hidden sections against grants and links, and
 * the owner's token refused everything that changes access; webhooks, which
 * only signed-in owners and admins manage.
 */
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { createTRPCClient, httpSubscriptionLink, TRPCClientError } from "@trpc/client";
import { EventSource } from "eventsource";
import { text } from "../helpers/blocks";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { memberships, webhookDeliveries, webhooks } from "@/db/schema";
import { DEFAULT_OUTBOUND_SETTINGS } from "@/server/outbound/addresses";
import type { ToolName } from "@/server/actions/registry";
import { acceptShareLink, readSharedDocument } from "@/server/actions/share-links";
import { ERROR_FACES, isDomainError } from "@/server/core/errors";
import { getBridge } from "@/server/bridge";
import { AGENT_CANNOT_CHANGE_ACCESS } from "@/server/policies/access";
import type { AppRouter } from "@/server/api/router";
import { encode } from "next-auth/jwt";
import { ensureAuthSecret } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { roomName, upgradeStatus } from "../helpers/collab";
import { connectOAuthApp } from "../helpers/oauth";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

/**
 * "workspace": tools about the workspace itself, open to every member and every AI call; "upload": writing to the
 * workspace outside any one document, open to all of them but an app allowed to read only.
 */
type Need = "workspace" | "upload" | "read" | "edit" | "manage";
type Outcome = "allow" | "not_found" | "denied";
type Args = Record<string, unknown>;

let server: TestServer;
let owner: TestUser;
let ownerMcp: Client;

/** A document prepared for one caller, with the fixtures actions need. */
interface Fixture {
  documentId: string;
  sectionIds: string[];
  firstCommitId: string;
  tagId: string;
  otherDocumentId: string;
  counter: number;
  /** The comment the last comment case made. */
  commentId?: string;
}

const asOwner = <T = Record<string, unknown>>(tool: string, args: Args) => callMcpHuman<T>(tool, args);
/** The owner sets fixtures up through the tRPC face as a human (an AI call could not manage permissions). */
async function callMcpHuman<T>(tool: string, args: Args): Promise<T> {
  return (await server.callToolAsSent(tool as ToolName, owner.userId, args)) as T;
}

async function makeFixture(settings: {
  defaultPermission: string;
  aiAccess: string;
  grants?: Array<{ userId: string; permission: string }>;
}): Promise<Fixture> {
  const doc = await asOwner<{ documentId: string; sectionIds: string[]; commitId: string }>("documents", {
    action: "create",
    path: `matrix/${crypto.randomUUID()}`,
    sections: [
      { name: "One", content: [text("one")] },
      { name: "Two", content: [text("two")] },
    ],
  });
  await asOwner("documents", { action: "create_branch", documentId: doc.documentId, branchName: "work" });
  await asOwner("documents", { action: "create_branch", documentId: doc.documentId, branchName: "threads" });
  await asOwner("documents", { action: "set_permissions", documentId: doc.documentId, ...settings });
  const tag = await asOwner<{ tagId: string }>("documents", { action: "create_tag", tagPath: `matrix/${crypto.randomUUID()}` });
  const other = await asOwner<{ documentId: string }>("documents", { action: "create", path: `matrix/other-${crypto.randomUUID()}` });
  // Guests reach only what is granted: the document a reference points at needs the same grants.
  if (settings.grants) await asOwner("documents", { action: "set_permissions", documentId: other.documentId, grants: settings.grants });
  return {
    documentId: doc.documentId,
    sectionIds: doc.sectionIds,
    firstCommitId: doc.commitId,
    tagId: tag.tagId,
    otherDocumentId: other.documentId,
    counter: 0,
  };
}

/** A fresh branch with one change on it, and a merge request from it (owned by the owner). */
async function freshMergeRequest(f: Fixture): Promise<string> {
  const branchName = `mr-${++f.counter}`;
  await asOwner("documents", { action: "create_branch", documentId: f.documentId, branchName });
  await asOwner("sections", {
    action: "update",
    documentId: f.documentId,
    branchName,
    sectionId: f.sectionIds[1],
    newContent: [text(`change ${f.counter}`)],
  });
  const mr = await asOwner<{ mergeRequestId: string }>("merge_requests", {
    action: "create",
    documentId: f.documentId,
    sourceBranch: branchName,
    targetBranch: "main",
    title: branchName,
  });
  return mr.mergeRequestId;
}

/** A changeset (the owner's) whose one item is a fresh merge request on the fixture's document, adopted. */
async function freshChangeset(f: Fixture): Promise<string> {
  await freshMergeRequest(f);
  const changeset = await asOwner<{ changesetId: string }>("changesets", {
    action: "create",
    sourceBranch: `mr-${f.counter}`,
    targetBranch: "main",
    title: "Matrix",
    documentIds: [f.documentId],
  });
  return changeset.changesetId;
}

/** A document with the fixture's permissions, deleted on main by a merged request: what list_deleted may show the caller. */
const deletedTwins = new Map<Fixture, string>();
async function deletedTwin(f: Fixture): Promise<string> {
  const known = deletedTwins.get(f);
  if (known) return known;
  const twin = await asOwner<{ documentId: string }>("documents", { action: "create", path: `matrix/deleted-${crypto.randomUUID()}` });
  const permissions = await asOwner<{ defaultPermission: string; aiAccess: string; grants: Array<{ userId: string; permission: string }> }>(
    "documents",
    { action: "get_permissions", documentId: f.documentId },
  );
  await asOwner("documents", {
    action: "set_permissions",
    documentId: twin.documentId,
    defaultPermission: permissions.defaultPermission,
    aiAccess: permissions.aiAccess,
    grants: permissions.grants.map(({ userId, permission }) => ({ userId, permission })),
  });
  await asOwner("documents", { action: "create_branch", documentId: twin.documentId, branchName: "bin" });
  await asOwner("documents", { action: "delete", documentId: twin.documentId, branchName: "bin" });
  const request = await asOwner<{ mergeRequestId: string }>("merge_requests", {
    action: "create",
    documentId: twin.documentId,
    sourceBranch: "bin",
    targetBranch: "main",
    title: "bin",
  });
  await asOwner("merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
  deletedTwins.set(f, twin.documentId);
  return twin.documentId;
}

/** A new section on branch "threads" holding a new comment (the owner's, resolved when asked): the thread's address. */
async function freshThread(f: Fixture, resolved = false): Promise<Args> {
  const created = await asOwner<{ sectionId: string }>("sections", {
    action: "create",
    documentId: f.documentId,
    branchName: "threads",
    name: `Comment ${++f.counter}`,
    content: [text('<svc:comment-new body="Why?">This</svc:comment-new>')],
  });
  const view = await asOwner<{ sections: Array<{ comments: Array<{ commentId: string }> }> }>("read", {
    documentId: f.documentId,
    branchName: "threads",
    sectionIds: [created.sectionId],
  });
  f.commentId = view.sections[0]!.comments[0]!.commentId;
  const thread = { documentId: f.documentId, branchName: "threads", commentId: f.commentId };
  if (resolved) await asOwner("comments", { action: "resolve", ...thread });
  return thread;
}

interface Case {
  tool: ToolName;
  action: string;
  need: Need;
  /** Names the case when the action alone does not (a variant of a tool without actions). */
  label?: string;
  args(f: Fixture): Promise<Args>;
  /** For list actions: whether the document shows up counts as the outcome. */
  lists?: (result: unknown, f: Fixture) => boolean;
}

const d = (f: Fixture) => ({ documentId: f.documentId });
/** The fixture document's path: a search narrowed to it finds that document's hits only. */
const pathOf = async (f: Fixture) => (await asOwner<{ path: string }>("documents", { action: "get", documentId: f.documentId })).path;
const foundIn = (r: unknown, f: Fixture) => (r as { hits: Array<{ documentId: string }> }).hits.some((h) => h.documentId === f.documentId);
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
  {
    tool: "documents",
    action: "list_deleted",
    need: "read",
    args: async (f) => {
      await deletedTwin(f);
      return { pathPrefix: "matrix/deleted-", limit: 200 };
    },
    lists: (r, f) =>
      (r as { deletedDocuments: Array<{ documentId: string }> }).deletedDocuments.some((x) => x.documentId === deletedTwins.get(f)),
  },
  {
    tool: "documents",
    action: "restore",
    need: "edit",
    args: async (f) => {
      const branchName = `restore-${++f.counter}`;
      await asOwner("documents", { action: "create_branch", ...d(f), branchName });
      await asOwner("documents", { action: "delete", ...d(f), branchName });
      return { ...d(f), branchName };
    },
  },
  {
    tool: "documents",
    action: "delete_branch",
    need: "edit",
    args: async (f) => {
      const branchName = `gone-${++f.counter}`;
      await asOwner("documents", { action: "create_branch", ...d(f), branchName });
      return { ...d(f), branchName };
    },
  },
  { tool: "documents", action: "log", need: "read", args: async (f) => ({ ...d(f), branchName: "work" }) },
  { tool: "documents", action: "show", need: "read", args: async (f) => ({ ...d(f), commitId: f.firstCommitId }) },
  { tool: "read", action: "", need: "read", args: async (f) => ({ ...d(f), branchName: "work" }) },
  {
    tool: "search",
    action: "",
    label: "search (document by name)",
    need: "read",
    args: async (f) => ({ query: "matrix", kind: "document", pathPrefix: await pathOf(f) }),
    lists: foundIn,
  },
  {
    tool: "search",
    action: "",
    label: "search (section text)",
    need: "read",
    args: async (f) => ({ query: "one", kind: "section", pathPrefix: await pathOf(f) }),
    lists: foundIn,
  },
  {
    tool: "search",
    action: "",
    label: "search (branch work)",
    need: "read",
    args: async (f) => ({ query: "two", branchName: "work", pathPrefix: await pathOf(f) }),
    lists: foundIn,
  },
  {
    tool: "read",
    action: "",
    label: "read includeDraft",
    need: "read",
    args: async (f) => ({ ...d(f), branchName: "work", includeDraft: true }),
  },
  { tool: "documents", action: "commit", need: "edit", args: async (f) => ({ ...d(f), branchName: "work" }) },
  { tool: "documents", action: "discard", need: "edit", args: async (f) => ({ ...d(f), branchName: "work" }) },
  { tool: "documents", action: "create_branch", need: "edit", args: async (f) => ({ ...d(f), branchName: `b-${++f.counter}` }) },
  {
    tool: "documents",
    action: "update",
    need: "edit",
    args: async (f) => ({ ...d(f), branchName: "work", newName: `Name ${++f.counter}` }),
  },
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
  {
    tool: "sections",
    action: "create",
    need: "edit",
    args: async (f) => ({ ...d(f), branchName: "work", name: `S${++f.counter}`, content: [] }),
  },
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
      const created = await asOwner<{ sectionId: string }>("sections", {
        action: "create",
        ...d(f),
        branchName: "work",
        name: `D${++f.counter}`,
        content: [],
      });
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
  { tool: "merge_requests", action: "set_required_approvals", need: "manage", args: async (f) => ({ ...d(f), requiredApprovals: 0 }) },
  {
    tool: "changesets",
    action: "get",
    need: "read",
    args: async (f) => ({ changesetId: await freshChangeset(f) }),
    lists: (r, f) => (r as { items: Array<{ documentId: string }> }).items.some((i) => i.documentId === f.documentId),
  },
  {
    tool: "changesets",
    action: "analyze",
    need: "read",
    args: async (f) => ({ changesetId: await freshChangeset(f) }),
    lists: (r, f) => (r as { analyses: Array<{ documentId: string }> }).analyses.some((i) => i.documentId === f.documentId),
  },
  {
    tool: "changesets",
    action: "list",
    need: "read",
    args: async (f) => {
      await freshChangeset(f);
      return { documentId: f.documentId };
    },
    lists: (r, f) =>
      (r as { changesets: Array<{ items: Array<{ documentId: string }> }> }).changesets.some((c) =>
        c.items.some((i) => i.documentId === f.documentId),
      ),
  },
  {
    tool: "changesets",
    action: "create",
    need: "edit",
    args: async (f) => {
      const branchName = `cs-${++f.counter}`;
      await asOwner("documents", { action: "create_branch", ...d(f), branchName });
      await asOwner("sections", { action: "update", ...d(f), branchName, sectionId: f.sectionIds[0], newContent: [text(`c${f.counter}`)] });
      return { sourceBranch: branchName, targetBranch: "main", title: "Across documents", documentIds: [f.documentId] };
    },
  },
  { tool: "merge_requests", action: "execute", need: "edit", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f) }) },
  { tool: "merge_requests", action: "close", need: "edit", args: async (f) => ({ mergeRequestId: await freshMergeRequest(f) }) },
  {
    tool: "merge_requests",
    action: "update",
    need: "edit",
    args: async (f) => ({ mergeRequestId: await freshMergeRequest(f), newTitle: "Retitled" }),
  },
  {
    tool: "comments",
    action: "list",
    need: "read",
    args: async (f) => {
      const { commentId: _, ...branch } = await freshThread(f);
      return branch;
    },
    lists: (r, f) => (r as { threads: Array<{ commentId: string }> }).threads.some((t) => t.commentId === f.commentId),
  },
  {
    tool: "comments",
    action: "post",
    need: "edit",
    args: async (f) => {
      const branch = { ...d(f), branchName: "threads" };
      const { sectionId } = await asOwner<{ sectionId: string }>("sections", {
        action: "create",
        ...branch,
        name: `Posted ${++f.counter}`,
        content: [text("Comment on this")],
      });
      return { ...branch, sectionId, blockIndex: 0, quote: "this", body: "Posted." };
    },
  },
  { tool: "comments", action: "reply", need: "edit", args: async (f) => ({ ...(await freshThread(f)), body: "Because." }) },
  { tool: "comments", action: "resolve", need: "edit", args: (f) => freshThread(f) },
  { tool: "comments", action: "reopen", need: "edit", args: (f) => freshThread(f, true) },
  { tool: "members", action: "list", need: "workspace", args: async () => ({}) },
  { tool: "members", action: "search", need: "workspace", args: async () => ({ query: "ol" }) },
  { tool: "members", action: "get", need: "workspace", args: async () => ({ userIds: [owner.userId] }) },
  { tool: "upload_url", action: "", need: "upload", args: async () => ({ filename: "notes.txt", mediaType: "text/plain", size: 10 }) },
];

/** What each kind of caller may do, per need. */
const EXPECT: Record<string, Record<Need, Outcome>> = {
  owner: { workspace: "allow", upload: "allow", read: "allow", edit: "allow", manage: "allow" },
  admin: { workspace: "allow", upload: "allow", read: "allow", edit: "allow", manage: "allow" },
  "member with edit": { workspace: "allow", upload: "allow", read: "allow", edit: "allow", manage: "denied" },
  "member with read": { workspace: "allow", upload: "allow", read: "allow", edit: "denied", manage: "denied" },
  "member with none": { workspace: "allow", upload: "allow", read: "not_found", edit: "not_found", manage: "not_found" },
  "guest without grant": { workspace: "allow", upload: "allow", read: "not_found", edit: "not_found", manage: "not_found" },
  "guest with edit grant": { workspace: "allow", upload: "allow", read: "allow", edit: "allow", manage: "denied" },
  "guest with read grant": { workspace: "allow", upload: "allow", read: "allow", edit: "denied", manage: "denied" },
  "AI, aiAccess edit": { workspace: "allow", upload: "allow", read: "allow", edit: "allow", manage: "denied" },
  "AI, aiAccess read": { workspace: "allow", upload: "allow", read: "allow", edit: "denied", manage: "denied" },
  "AI, aiAccess none": { workspace: "allow", upload: "allow", read: "not_found", edit: "not_found", manage: "not_found" },
  // The owner's API token over tRPC is an agent too: the same caps as over MCP.
  "owner's token over tRPC, aiAccess edit": { workspace: "allow", upload: "allow", read: "allow", edit: "allow", manage: "denied" },
  "owner's token over tRPC, aiAccess read": { workspace: "allow", upload: "allow", read: "allow", edit: "denied", manage: "denied" },
  "owner's token over tRPC, aiAccess none": {
    workspace: "allow",
    upload: "allow",
    read: "not_found",
    edit: "not_found",
    manage: "not_found",
  },
  // An OAuth app is an agent (its person's standing, capped by aiAccess); one allowed to read only never writes.
  "AI, OAuth app with read and write, aiAccess edit": {
    workspace: "allow",
    upload: "allow",
    read: "allow",
    edit: "allow",
    manage: "denied",
  },
  "AI, OAuth app with read and write, aiAccess read": {
    workspace: "allow",
    upload: "allow",
    read: "allow",
    edit: "denied",
    manage: "denied",
  },
  "AI, OAuth app allowed to read only, aiAccess edit": {
    workspace: "allow",
    upload: "denied",
    read: "allow",
    edit: "denied",
    manage: "denied",
  },
};

interface Caller {
  fixture: Fixture;
  call(tool: ToolName, args: Args): Promise<unknown>;
  /** An agent's MCP client (its fixture document is also an MCP resource to it). */
  mcp?: Client;
}
const callers = new Map<string, Caller>();
/** MCP clients of OAuth apps the owner connected (closed at the end). */
const oauthClients: Client[] = [];
/** How each caller of the table reaches the subscriptions (SSE over HTTP): a person by session cookie, a token as a bearer; MCP has none. */
const streamCredentials = new Map<string, Record<string, string>>();

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

type TrpcHttp = Record<string, { query(args: Args): Promise<unknown>; mutate(args: Args): Promise<unknown> }>;
const TRPC_QUERIES = new Set(["read", "members", "search"]);

/** The tRPC client over HTTP with a bearer token; errors become their { code, message } payload. */
async function callTrpcHttp(trpc: TrpcHttp, procedure: string, args: Args): Promise<unknown> {
  try {
    return TRPC_QUERIES.has(procedure) ? await trpc[procedure]!.query(args) : await trpc[procedure]!.mutate(args);
  } catch (error) {
    const payload = (error as { data?: { error?: { code: string; message: string } } }).data?.error;
    throw payload ? Object.assign(new Error(payload.message), payload) : error;
  }
}

function tokenCaller(token: string, fixture: Fixture): Caller {
  const trpc = server.trpcClient(token) as unknown as TrpcHttp;
  return { fixture, call: (tool, args) => callTrpcHttp(trpc, ROUTER_NAMES[tool] ?? tool, args) };
}

function aiCaller(client: Client, fixture: Fixture): Caller {
  return {
    fixture,
    mcp: client,
    async call(tool, args) {
      const result = await client.callTool({ name: tool, arguments: args });
      if (result.isError) throw Object.assign(new Error("tool error"), toolError(result));
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
  const guestEditor = await server.createUser("guest-editor@example.test", "Gia Guest");
  const guestReader = await server.createUser("guest-reader@example.test", "Gil Guest");
  for (const g of [guest, guestEditor, guestReader]) {
    await server.db.update(memberships).set({ role: "guest" }).where(eq(memberships.userId, g.userId));
  }

  const human = await makeFixture({
    defaultPermission: "edit",
    aiAccess: "edit",
    grants: [
      { userId: editor.userId, permission: "edit" },
      { userId: reader.userId, permission: "read" },
      { userId: blocked.userId, permission: "none" },
      { userId: guestEditor.userId, permission: "edit" },
      { userId: guestReader.userId, permission: "read" },
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
  const asGuest = (u: TestUser) => ({ ...u, actor: { ...u.actor, role: "guest" as const } });
  callers.set("guest with edit grant", humanCaller(asGuest(guestEditor), human));
  callers.set("guest with read grant", humanCaller(asGuest(guestReader), human));
  const secret = await ensureAuthSecret(server.db, undefined);
  const people = { owner, admin, "member with edit": editor, "member with read": reader, "member with none": blocked };
  const guests = { "guest without grant": guest, "guest with edit grant": guestEditor, "guest with read grant": guestReader };
  for (const [role, user] of Object.entries({ ...people, ...guests })) {
    streamCredentials.set(role, { cookie: `${sessionCookieName(false)}=${await encode({ token: { sub: user.userId }, secret })}` });
  }
  for (const aiAccess of ["edit", "read", "none"]) {
    callers.set(`AI, aiAccess ${aiAccess}`, aiCaller(ownerMcp, await makeFixture({ defaultPermission: "edit", aiAccess })));
    callers.set(
      `owner's token over tRPC, aiAccess ${aiAccess}`,
      tokenCaller(owner.token, await makeFixture({ defaultPermission: "edit", aiAccess })),
    );
    streamCredentials.set(`owner's token over tRPC, aiAccess ${aiAccess}`, { authorization: `Bearer ${owner.token}` });
  }
  const writingApp = await connectOAuthApp(server, owner.userId, { decision: "allow_write" });
  const readingApp = await connectOAuthApp(server, owner.userId, { decision: "allow_read" });
  oauthClients.push(await server.mcpClient(writingApp.accessToken), await server.mcpClient(readingApp.accessToken));
  for (const aiAccess of ["edit", "read"]) {
    callers.set(
      `AI, OAuth app with read and write, aiAccess ${aiAccess}`,
      aiCaller(oauthClients[0]!, await makeFixture({ defaultPermission: "edit", aiAccess })),
    );
  }
  callers.set(
    "AI, OAuth app allowed to read only, aiAccess edit",
    aiCaller(oauthClients[1]!, await makeFixture({ defaultPermission: "edit", aiAccess: "edit" })),
  );
}, 240_000);

afterAll(async () => {
  for (const client of oauthClients) await client.close();
  await ownerMcp?.close();
  await server?.close();
});

describe.each(Object.keys(EXPECT))("%s", (role) => {
  test.each(CASES.map((c) => [c.label ?? `${c.tool}${c.action ? ` ${c.action}` : ""}`, c] as const))("%s", async (_label, c) => {
    expect(await outcomeOf(callers.get(role)!, c)).toBe(EXPECT[role]![c.need]);
  });
});

/**
 * What a subscription (server/api/router.ts) first answers a caller: its first state ("allow"), or the refusal it
 * ends with, as the table's outcomes.
 */
function firstStreamOutcome(role: string, subscription: "draftStatus" | "branchHeads" | "commentThreads"): Promise<Outcome | string> {
  const headers = streamCredentials.get(role)!;
  const client = createTRPCClient<AppRouter>({
    links: [
      httpSubscriptionLink({
        url: `${server.url}/api/trpc`,
        EventSource,
        // A same-origin GET from the page (the browser sends no Origin on one).
        eventSourceOptions: {
          fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, ...headers, "sec-fetch-site": "same-origin" } }),
        },
      }),
    ],
  });
  const { documentId } = callers.get(role)!.fixture;
  return new Promise((resolve) => {
    const handlers = {
      onData: () => {
        resolve("allow");
        stream.unsubscribe();
      },
      onError: (error: unknown) => {
        const code = error instanceof TRPCClientError ? (error.data as { error?: { code?: string } } | undefined)?.error?.code : undefined;
        resolve(code === "NOT_FOUND" ? "not_found" : code === "PERMISSION_DENIED" ? "denied" : `unexpected ${code}: ${String(error)}`);
      },
    };
    const branch = { documentId, branchName: "main" };
    const stream =
      subscription === "branchHeads"
        ? client.branchHeads.subscribe({ documentId, branchNames: ["main"] }, handlers)
        : subscription === "draftStatus"
          ? client.draftStatus.subscribe(branch, handlers)
          : client.commentThreads.subscribe(branch, handlers);
  });
}

describe.each(Object.keys(EXPECT).filter((role) => !role.startsWith("AI,")))("%s, following a document over SSE", (role) => {
  test.each(["draftStatus", "branchHeads", "commentThreads"] as const)("%s follows read access", async (subscription) => {
    expect(await firstStreamOutcome(role, subscription)).toBe(EXPECT[role]!.read);
  });
});

/** What reading and subscribing to the fixture document as an MCP resource answers an agent, as the table's outcomes. */
async function resourceOutcome(role: string, method: "read" | "subscribe"): Promise<Outcome | string> {
  const { mcp, fixture } = callers.get(role)!;
  const uri = `quire://documents/${fixture.documentId}`;
  try {
    if (method === "read") await mcp!.readResource({ uri });
    else await mcp!.subscribeResource({ uri });
    return "allow";
  } catch (error) {
    // A resource the caller may not read is, like one that does not exist, -32602 (the table's not_found).
    const code = (error as { code?: number }).code;
    return code === -32602 ? "not_found" : `unexpected ${code}: ${String(error)}`;
  }
}

// The "AI, …" callers are the MCP clients (API tokens and OAuth apps).
describe.each(Object.keys(EXPECT).filter((role) => role.startsWith("AI,")))("%s, the document as an MCP resource", (role) => {
  test.each(["read", "subscribe"] as const)("resources/%s follows read access", async (method) => {
    expect(await resourceOutcome(role, method)).toBe(EXPECT[role]!.read);
  });
});

describe("callers outside the workspace", () => {
  test("a user with no membership is refused by both faces, and a non-member token reads as unauthenticated", async () => {
    const outsider = await server.createUser("outsider@example.test", "Otto Outsider");
    await server.db.delete(memberships).where(eq(memberships.userId, outsider.userId));
    const res = await fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${outsider.token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    await expect(
      server.trpcClient(outsider.token).read.query({ documentId: callers.get("owner")!.fixture.documentId }),
    ).rejects.toMatchObject({
      data: { code: "UNAUTHORIZED" },
    });
  });

  test("a share-link visitor can read through a read link, and only while it lives", async () => {
    const f = callers.get("owner")!.fixture;
    const link = await asOwner<{ path: string; shareLinkId: string }>("documents", {
      action: "create_share_link",
      ...d(f),
      permission: "read",
    });
    const token = link.path.replace("/share/", "");
    const view = await readSharedDocument(server.db, token, {}, new Date());
    expect(view.documentId).toBe(f.documentId);
    expect(view.sections.map((s) => s.name)).toEqual(["One", "Two"]);
    const edit = await asOwner<{ path: string }>("documents", { action: "create_share_link", ...d(f), permission: "edit" });
    // An edit link gives a visitor without an account nothing (sign in); a revoked link is no credential.
    await expect(readSharedDocument(server.db, edit.path.replace("/share/", ""), {}, new Date())).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    await asOwner("documents", { action: "revoke_share_link", ...d(f), shareLinkId: link.shareLinkId });
    await expect(readSharedDocument(server.db, token, {}, new Date())).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  test("opening a share link while signed in raises a member's access, never lowers it", async () => {
    const f = callers.get("owner")!.fixture;
    const readLink = await asOwner<{ path: string }>("documents", { action: "create_share_link", ...d(f), permission: "read" });
    const token = readLink.path.replace("/share/", "");
    const editorCaller = callers.get("member with edit")!;
    const blockedCaller = callers.get("member with none")!;
    const permissionOf = async (caller: Caller) =>
      ((await caller.call("documents", { action: "get", ...d(f) }).catch(() => ({ yourPermission: "none" }))) as { yourPermission: string })
        .yourPermission;
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
    const result = await ownerMcp.callTool({
      name: "documents",
      arguments: { action: "set_permissions", documentId: f.documentId, aiAccess: "edit" },
    });
    expect(toolError(result).code).toBe("PERMISSION_DENIED");
    const list = await callMcp<{ documents: unknown[] }>(ownerMcp, "documents", { action: "list", pathPrefix: "matrix/" });
    expect(list.documents.length).toBeGreaterThan(0);
  });
});

/**
 * Where the copies of the rules used to disagree: the share page and the live
 * room each resolved share links their own way (a token length check on one
 * side only; an edit link refused by the page, read-only in the room), and
 * the document page worked out editability itself. One door answers them all
 * now (server/access/authorize.ts, and `read`'s yourPermission).
 */
describe("one door: the cases where the copies disagreed", () => {
  let documentId: string;
  let otherDocumentId: string;
  let openId: string;
  let closedId: string;
  let readToken: string;
  let editToken: string;
  let member: TestUser;

  /** The share page's answer (the bridge call it makes), as an HTTP status. */
  const pageStatus = async (token: string): Promise<number> => {
    try {
      await getBridge().readShared(token, {});
      return 200;
    } catch (error) {
      if (!isDomainError(error)) throw error;
      return ERROR_FACES[error.code].http;
    }
  };
  /** The live room's answer to a visitor with the link (101: admitted). */
  const roomStatus = async (token: string, room = roomName(documentId, "main")): Promise<number> =>
    (await upgradeStatus(server.url, `${room}?share=${encodeURIComponent(token)}`)).status;

  beforeAll(async () => {
    const doc = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
      action: "create",
      path: `one-door/${crypto.randomUUID()}`,
      sections: [
        { name: "Open to the team", content: [text("anyone may edit")] },
        { name: "As the document", content: [text("read only")] },
      ],
    });
    documentId = doc.documentId;
    [openId, closedId] = doc.sectionIds as [string, string];
    otherDocumentId = (
      await asOwner<{ documentId: string }>("documents", { action: "create", path: `one-door/other-${crypto.randomUUID()}` })
    ).documentId;
    // The override goes through review: set on a branch, merged into main. Then the team default drops to read.
    await asOwner("documents", { action: "create_branch", documentId, branchName: "open-up" });
    await asOwner("sections", { action: "update", documentId, branchName: "open-up", sectionId: openId, defaultPermission: "edit" });
    const mr = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "open-up",
      targetBranch: "main",
      title: "Open up",
    });
    await asOwner("merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
    await asOwner("documents", { action: "set_permissions", documentId, defaultPermission: "read" });
    const link = async (permission: string) =>
      (await asOwner<{ path: string }>("documents", { action: "create_share_link", documentId, permission })).path.replace("/share/", "");
    readToken = await link("read");
    editToken = await link("edit");
    member = await server.createUser("one-door-member@example.test", "Mo Member");
  }, 120_000);

  test("a malformed or short share token gets the same refusal on the share page and at the live room", async () => {
    for (const token of ["short", readToken.slice(0, 20), `${readToken.slice(0, 42)}!`, `${readToken}A`, "a".repeat(300)]) {
      expect([await pageStatus(token), await roomStatus(token)], token).toEqual([401, 401]);
    }
    // The well-formed link itself opens both.
    expect([await pageStatus(readToken), await roomStatus(readToken)]).toEqual([200, 101]);
  });

  test("an edit share link gives a visitor without an account the same answer on the share page and at the live room: sign in", async () => {
    expect([await pageStatus(editToken), await roomStatus(editToken)]).toEqual([403, 403]);
    expect(await roomStatus(editToken, roomName(documentId, "main", openId))).toBe(403);
  });

  test("a live read link of another document opens no room of this one, worded as a missing document", async () => {
    const { status, body } = await upgradeStatus(server.url, `${roomName(otherDocumentId, "main")}?share=${readToken}`);
    expect(status).toBe(404);
    expect(body).toContain(otherDocumentId);
  });

  test("a member whose section override is edit on a read-default document: read, a sections update and get agree with the policy", async () => {
    const caller = humanCaller(member, callers.get("owner")!.fixture);
    const view = (await caller.call("read", { documentId })) as { sections: Array<{ sectionId: string; yourPermission: string }> };
    expect(view.sections.map((s) => [s.sectionId, s.yourPermission])).toEqual([
      [openId, "edit"],
      [closedId, "read"],
    ]);
    const update = (sectionId: string) =>
      caller.call("sections", { action: "update", documentId, branchName: "main", sectionId, newContent: [text("changed by the team")] });
    await expect(update(openId)).resolves.toBeTruthy();
    await expect(update(closedId)).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(((await caller.call("documents", { action: "get", documentId })) as { yourPermission: string }).yourPermission).toBe("read");
  });

  test("read's yourPermission follows the agent cap and the share link too", async () => {
    const shared = await readSharedDocument(server.db, readToken, {}, new Date());
    expect(shared.sections.map((s) => s.yourPermission)).toEqual(["read", "read"]);
    const agent = await callMcp<{ sections: Array<{ yourPermission: string }> }>(ownerMcp, "read", { documentId });
    expect(agent.sections.map((s) => s.yourPermission)).toEqual(["edit", "edit"]);
    await asOwner("documents", { action: "set_permissions", documentId, aiAccess: "read" });
    const capped = await callMcp<{ sections: Array<{ yourPermission: string }> }>(ownerMcp, "read", { documentId });
    expect(capped.sections.map((s) => s.yourPermission)).toEqual(["read", "read"]);
    await asOwner("documents", { action: "set_permissions", documentId, aiAccess: "edit" });
  });
});

describe("a section hidden by its team override stays hidden from grants and share links", () => {
  const SECRET_NAME = "Board only";
  const SECRET_TEXT = "The merger closes in May";
  let documentId: string;
  let publicId: string;
  let secretId: string;
  let cappedId: string;
  let readLinkToken: string;
  const withGrant = new Map<string, Caller>();

  const section = (view: unknown) => (view as { sections: Array<{ sectionId: string; name: string }> }).sections;
  const errorOf = async (run: Promise<unknown>) => {
    try {
      await run;
      return "allowed";
    } catch (error) {
      return (error as { code?: string }).code;
    }
  };

  beforeAll(async () => {
    const doc = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
      action: "create",
      path: `hidden/${crypto.randomUUID()}`,
      sections: [
        { name: "Public", content: [text("For everyone")] },
        { name: SECRET_NAME, content: [text(SECRET_TEXT)] },
        { name: "Capped", content: [text("Read, never edit")] },
      ],
    });
    documentId = doc.documentId;
    [publicId, secretId, cappedId] = doc.sectionIds as [string, string, string];
    // Overrides go through review: set on a branch, merged into main.
    await asOwner("documents", { action: "create_branch", documentId, branchName: "lockdown" });
    await asOwner("sections", { action: "update", documentId, branchName: "lockdown", sectionId: secretId, defaultPermission: "none" });
    await asOwner("sections", { action: "update", documentId, branchName: "lockdown", sectionId: cappedId, defaultPermission: "read" });
    const mr = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "lockdown",
      targetBranch: "main",
      title: "Lock down",
    });
    await asOwner("merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
    await asOwner("documents", { action: "create_branch", documentId, branchName: "work" });

    const guest = await server.createUser("hidden-guest@example.test", "Hal Guest");
    await server.db.update(memberships).set({ role: "guest" }).where(eq(memberships.userId, guest.userId));
    const granted = await server.createUser("hidden-member@example.test", "Hetty Member");
    const linked = await server.createUser("hidden-linked@example.test", "Hank Linked");
    // The team cannot see the document at all; grants and links are the only way in.
    await asOwner("documents", {
      action: "set_permissions",
      documentId,
      defaultPermission: "none",
      grants: [
        { userId: guest.userId, permission: "edit" },
        { userId: granted.userId, permission: "edit" },
      ],
    });
    const editLink = await asOwner<{ path: string }>("documents", { action: "create_share_link", documentId, permission: "edit" });
    await acceptShareLink(server.db, linked.userId, editLink.path.replace("/share/", ""), new Date());
    const readLink = await asOwner<{ path: string }>("documents", { action: "create_share_link", documentId, permission: "read" });
    readLinkToken = readLink.path.replace("/share/", "");

    const f = callers.get("owner")!.fixture;
    withGrant.set("guest with an edit grant", humanCaller({ ...guest, actor: { ...guest.actor, role: "guest" } }, f));
    withGrant.set("member with an edit grant", humanCaller(granted, f));
    withGrant.set("member who opened an edit link", humanCaller(linked, f));
  }, 120_000);

  test("a read-link visitor does not see it; the sections it sees keep gapless positions", async () => {
    const view = await readSharedDocument(server.db, readLinkToken, {}, new Date());
    expect(view.sections.map((s) => [s.name, s.position])).toEqual([
      ["Public", 0],
      ["Capped", 1],
    ]);
    expect(JSON.stringify(view)).not.toContain(SECRET_TEXT);
    expect(JSON.stringify(view)).not.toContain(secretId);
  });

  test.each(["guest with an edit grant", "member with an edit grant", "member who opened an edit link"])(
    "a %s does not see it, cannot name it, and is held to read where the override says read",
    async (label) => {
      const caller = withGrant.get(label)!;
      const view = await caller.call("read", { documentId, branchName: "work" });
      expect(section(view).map((s) => s.name)).toEqual(["Public", "Capped"]);
      expect(JSON.stringify(view)).not.toContain(SECRET_TEXT);
      expect(await errorOf(caller.call("read", { documentId, sectionIds: [secretId] }))).toBe("NOT_FOUND");
      expect(
        await errorOf(
          caller.call("sections", {
            action: "update",
            documentId,
            branchName: "work",
            sectionId: secretId,
            newContent: [text("overwritten")],
          }),
        ),
      ).toBe("NOT_FOUND");
      expect(
        await errorOf(
          caller.call("sections", { action: "update", documentId, branchName: "work", sectionId: cappedId, newContent: [text("edited")] }),
        ),
      ).toBe("PERMISSION_DENIED");
      // The grant still gives edit on the document and on the sections without an override.
      expect(
        await errorOf(
          caller.call("sections", {
            action: "update",
            documentId,
            branchName: "work",
            sectionId: publicId,
            newContent: [text(`edited by ${label}`)],
          }),
        ),
      ).toBe("allowed");
      const owners = await asOwner<{ sections: Array<{ sectionId: string; content: unknown }> }>("read", {
        documentId,
        branchName: "work",
        sectionIds: [secretId, cappedId],
      });
      expect(JSON.stringify(owners.sections[0]!.content)).toContain(SECRET_TEXT);
      expect(JSON.stringify(owners.sections[1]!.content)).toContain("Read, never edit");
    },
  );
});

describe("an API token is an agent on tRPC too", () => {
  const refusalOf = async (run: Promise<unknown>) => {
    try {
      await run;
      return { code: "allowed", message: "" };
    } catch (error) {
      const e = error as { code?: string; message: string };
      return { code: e.code, message: e.message };
    }
  };

  test("with the owner's token: no permissions, share links, invites, roles, removals or tokens — and the refusal names the reason", async () => {
    const trpc = server.trpcClient(owner.token) as unknown as TrpcHttp;
    const inPerson = server.trpcCaller(owner);
    const f = callers.get("owner's token over tRPC, aiAccess edit")!.fixture;
    const target = await server.createUser("promotable@example.test", "Pat Promotable");
    const invite = (await inPerson.workspace({ action: "create_invite", role: "member" })) as { invite: { inviteId: string } };
    const personToken = (await inPerson.apiTokens({ action: "create", label: "in person" })) as { tokenInfo: { tokenId: string } };
    const link = await asOwner<{ shareLinkId: string }>("documents", {
      action: "create_share_link",
      documentId: f.documentId,
      permission: "read",
    });
    const before = await asOwner("documents", { action: "get_permissions", documentId: f.documentId });

    const attempts: Array<[string, Args]> = [
      ["documents", { action: "set_permissions", documentId: f.documentId, aiAccess: "edit", defaultPermission: "edit" }],
      ["documents", { action: "get_permissions", documentId: f.documentId }],
      ["documents", { action: "create_share_link", documentId: f.documentId, permission: "edit" }],
      ["documents", { action: "revoke_share_link", documentId: f.documentId, shareLinkId: link.shareLinkId }],
      ["workspace", { action: "create_invite", role: "admin" }],
      ["workspace", { action: "change_role", userId: target.userId, role: "admin" }],
      ["workspace", { action: "remove_member", userId: target.userId }],
      ["workspace", { action: "revoke_invite", inviteId: invite.invite.inviteId }],
      ["apiTokens", { action: "create", label: "minted by a token" }],
      ["apiTokens", { action: "revoke", tokenId: personToken.tokenInfo.tokenId }],
    ];
    for (const [procedure, args] of attempts) {
      expect(await refusalOf(callTrpcHttp(trpc, procedure, args)), `${procedure} ${args.action}`).toEqual({
        code: "PERMISSION_DENIED",
        message: AGENT_CANNOT_CHANGE_ACCESS,
      });
    }

    // Listing is open to the token, and says it manages no one.
    const listed = (await callTrpcHttp(trpc, "workspace", { action: "list_members" })) as {
      viewer: { role: string; canManage: boolean; assignableRoles: string[] };
    };
    expect(listed.viewer).toMatchObject({ role: "owner", canManage: false, assignableRoles: [] });

    // Nothing changed.
    expect(await asOwner("documents", { action: "get_permissions", documentId: f.documentId })).toEqual(before);
    const shareLinks = await asOwner<{ shareLinks: Array<{ shareLinkId: string; permission: string; revokedAt: string | null }> }>(
      "documents",
      {
        action: "list_share_links",
        documentId: f.documentId,
      },
    );
    expect(shareLinks.shareLinks.find((l) => l.shareLinkId === link.shareLinkId)!.revokedAt).toBeNull();
    const members = (await inPerson.workspace({ action: "list_members", limit: 200 })) as {
      members: Array<{ userId: string; role: string }>;
    };
    expect(members.members.find((m) => m.userId === target.userId)!.role).toBe("member");
    const invites = (await inPerson.workspace({ action: "list_invites" })) as {
      invites: Array<{ inviteId: string; role: string; status: string }>;
    };
    expect(invites.invites.find((i) => i.inviteId === invite.invite.inviteId)!.status).toBe("pending");
    expect(invites.invites.some((i) => i.role === "admin")).toBe(false);
    const tokens = (await inPerson.apiTokens({ action: "list" })) as { tokens: Array<{ tokenId: string; label: string; status: string }> };
    expect(tokens.tokens.find((t) => t.tokenId === personToken.tokenInfo.tokenId)!.status).toBe("active");
    expect(tokens.tokens.some((t) => t.label === "minted by a token")).toBe(false);

    // The same owner, signed in, may: the principal decides, not the role.
    const promoted = (await inPerson.workspace({ action: "change_role", userId: target.userId, role: "admin" })) as {
      member: { role: string };
    };
    expect(promoted.member.role).toBe("admin");
    await inPerson.workspace({ action: "change_role", userId: target.userId, role: "member" });
    await inPerson.workspace({ action: "revoke_invite", inviteId: invite.invite.inviteId });
    await inPerson.apiTokens({ action: "revoke", tokenId: personToken.tokenInfo.tokenId });
  });

  test("over MCP the owner's set_permissions is refused for the real reason", async () => {
    const f = callers.get("AI, aiAccess edit")!.fixture;
    const result = await ownerMcp.callTool({
      name: "documents",
      arguments: { action: "set_permissions", documentId: f.documentId, aiAccess: "none" },
    });
    expect(toolError(result)).toEqual({
      code: "PERMISSION_DENIED",
      message: AGENT_CANNOT_CHANGE_ACCESS,
      details: { documentId: f.documentId },
    });
  });

  test("the token reads no section hidden from agents and edits nothing aiAccess keeps read-only, saying why", async () => {
    const trpc = server.trpcClient(owner.token) as unknown as TrpcHttp;
    const doc = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
      action: "create",
      path: `agents/${crypto.randomUUID()}`,
      sections: [
        { name: "Open", content: [text("Agents welcome")] },
        { name: "People only", content: [text("No agents here")] },
      ],
    });
    const [openId, closedId] = doc.sectionIds as [string, string];
    await asOwner("documents", { action: "create_branch", documentId: doc.documentId, branchName: "ai" });
    await asOwner("sections", { action: "update", documentId: doc.documentId, branchName: "ai", sectionId: closedId, aiAccess: "none" });
    const mr = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "ai",
      targetBranch: "main",
      title: "AI",
    });
    await asOwner("merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });

    const view = (await callTrpcHttp(trpc, "read", { documentId: doc.documentId })) as { sections: Array<{ name: string }> };
    expect(view.sections.map((s) => s.name)).toEqual(["Open"]);
    expect(JSON.stringify(view)).not.toContain("No agents here");
    expect((await refusalOf(callTrpcHttp(trpc, "read", { documentId: doc.documentId, sectionIds: [closedId] }))).code).toBe("NOT_FOUND");

    await asOwner("documents", { action: "set_permissions", documentId: doc.documentId, aiAccess: "read" });
    const edit = await refusalOf(
      callTrpcHttp(trpc, "sections", {
        action: "update",
        documentId: doc.documentId,
        branchName: "main",
        sectionId: openId,
        newContent: [text("agent edit")],
      }),
    );
    expect(edit.code).toBe("PERMISSION_DENIED");
    expect(edit.message).toMatch(/API token acts as an agent.*aiAccess/);
    // The owner in person is not capped.
    const inPerson = server.trpcCaller(owner);
    await inPerson.sections({
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: openId,
      newContent: [text("owner edit")],
    });
  });
});

/**
 * A branch made before a section was hidden still holds the section without
 * its override. Hiding covers the past: for every principal, what the default
 * branch hides from them now stays hidden there too — reads, writes, storage
 * keys, download links, history and merge requests alike.
 */
describe("a branch from before the hiding", () => {
  const TEAM = { name: "Board minutes", text: "Ledger of Initech talks" };
  const AI = { name: "Counsel notes", text: "Privileged advice on Initech" };
  type Hidden = "team" | "ai";
  let documentId: string;
  let publicId: string;
  const sectionOf: Record<Hidden, string> = { team: "", ai: "" };
  const keyOf: Record<Hidden, string> = { team: "", ai: "" };
  /** The commits on the old branch that changed each section, before it was hidden. */
  const oldBranchCommitOf: Record<Hidden, string> = { team: "", ai: "" };
  let readLinkToken: string;

  interface Principal {
    label: string;
    /** Which of the two sections the default branch hides from this principal now. */
    hidden: Hidden[];
    caller: Caller | null;
    /** Signs download links as this user and principal; null for a visitor, who has none. */
    signedAs: { userId: string; principal: "person" | "agent" } | null;
    branchName: string;
    mergeRequestId: string;
  }
  /** Which of the two sections the default branch hides from each principal now. */
  const HIDDEN_FROM: Record<string, Hidden[]> = {
    owner: [],
    admin: [],
    "member (team edit)": ["team"],
    "member with an edit grant": ["team"],
    "guest with an edit grant": ["team"],
    "guest who opened an edit link": ["team"],
    "owner's token over MCP": ["ai"],
    "owner's token over tRPC": ["ai"],
    "member's token over MCP": ["team", "ai"],
    "read-link visitor": ["team"],
  };
  const principals = new Map<string, Principal>();
  /** How each principal opens a live room: a person by session cookie, an agent by its token, a visitor by the share link. */
  const liveCredentialOf = new Map<string, { query: string; headers: Record<string, string> }>();
  const clients: Client[] = [];

  const nameOf = (h: Hidden) => (h === "team" ? TEAM : AI).name;
  /**
   * Every response a principal sees is checked for what is hidden from it: names, text, ids and storage keys.
   * An error may repeat the id or key the caller itself sent, never a name or text.
   */
  const expectNoLeak = (p: Principal, value: unknown, what: "response" | "error" = "response") => {
    const json = JSON.stringify(value);
    for (const h of p.hidden) {
      const secrets = [nameOf(h), (h === "team" ? TEAM : AI).text, ...(what === "response" ? [sectionOf[h], keyOf[h]] : [])];
      for (const secret of secrets) expect(json, p.label).not.toContain(secret);
    }
  };
  /** The result, or the error's code and message (what the caller would see). */
  const attempt = async (run: Promise<unknown>): Promise<{ code: string; value?: unknown; message?: string }> => {
    try {
      return { code: "allowed", value: await run };
    } catch (error) {
      const e = error as { code?: string; message: string };
      return { code: e.code ?? "unexpected", message: e.message };
    }
  };
  const callAs = (p: Principal, tool: ToolName, args: Args) => p.caller!.call(tool, args);
  const sectionsOf = (view: unknown) => (view as { sections: Array<{ sectionId: string; name: string }> }).sections;

  async function uploadAs(user: TestUser, label: string): Promise<string> {
    const bytes = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.from(label.repeat(40))]);
    const grant = (await server.callTool("upload_url", user.userId, {
      filename: `${label}.png`,
      mediaType: "image/png",
      size: bytes.length,
    })) as { uploadUrl: string; key: string };
    const put = await fetch(grant.uploadUrl, { method: "PUT", headers: { "content-type": "image/png" }, body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    return grant.key;
  }

  beforeAll(async () => {
    const fixture = callers.get("owner")!.fixture;
    const person = (email: string, name: string, role?: "admin" | "guest") =>
      server.createUser(email, name).then(async (user) => {
        if (role) await server.db.update(memberships).set({ role }).where(eq(memberships.userId, user.userId));
        return role ? { ...user, actor: { ...user.actor, role } } : user;
      });
    const admin = await person("before-admin@example.test", "Abe Admin", "admin");
    const member = await person("before-member@example.test", "Mia Member");
    const granted = await person("before-granted@example.test", "Gwen Granted");
    const guest = await person("before-guest@example.test", "Gale Guest", "guest");
    const linkedGuest = await person("before-linked@example.test", "Lou Linked", "guest");

    // Someone else's uploads: a caller may always use its own, so the test is on keys it only saw.
    keyOf.team = await uploadAs(admin, "team");
    keyOf.ai = await uploadAs(admin, "ai");
    const image = (key: string) => ({ blockType: "image" as const, type: "storage" as const, mediaType: "image/png", key });
    const doc = (await server.callTool("documents", admin.userId, {
      action: "create",
      path: `before-hiding/${crypto.randomUUID()}`,
      sections: [
        { name: "Agenda", content: [text("For everyone")] },
        { name: TEAM.name, content: [text(TEAM.text), image(keyOf.team)] },
        { name: AI.name, content: [text(AI.text), image(keyOf.ai)] },
      ],
    })) as { documentId: string; sectionIds: string[] };
    documentId = doc.documentId;
    [publicId, sectionOf.team, sectionOf.ai] = doc.sectionIds as [string, string, string];
    const asAdmin = (tool: ToolName, args: Args): Promise<unknown> => server.callToolAsSent(tool, admin.userId, { documentId, ...args });
    const updateSecrets = async (branchName: string, round: string) => {
      const commitOf: Record<Hidden, string> = { team: "", ai: "" };
      for (const h of ["team", "ai"] as const) {
        const newContent = [text(`${(h === "team" ? TEAM : AI).text}, ${round}`), image(keyOf[h])];
        commitOf[h] = (
          (await asAdmin("sections", { action: "update", branchName, sectionId: sectionOf[h], newContent })) as { commitId: string }
        ).commitId;
      }
      return commitOf;
    };

    // Two branches made before the hiding; one of them changes both sections (its messages name them).
    await asAdmin("documents", { action: "create_branch", branchName: "o3" });
    await asAdmin("documents", { action: "create_branch", branchName: "o4" });
    Object.assign(oldBranchCommitOf, await updateSecrets("o3", "draft"));
    // Then main hides them, through review: the team section from everyone below manager, the other from agents.
    await asAdmin("documents", { action: "create_branch", branchName: "lockdown" });
    await asAdmin("sections", { action: "update", branchName: "lockdown", sectionId: sectionOf.team, defaultPermission: "none" });
    await asAdmin("sections", { action: "update", branchName: "lockdown", sectionId: sectionOf.ai, aiAccess: "none" });
    const lockdown = (await asAdmin("merge_requests", {
      action: "create",
      sourceBranch: "lockdown",
      targetBranch: "main",
      title: "Lock down",
    })) as { mergeRequestId: string };
    await server.callTool("merge_requests", admin.userId, { action: "execute", mergeRequestId: lockdown.mergeRequestId });

    await server.callTool("documents", admin.userId, {
      action: "set_permissions",
      documentId,
      defaultPermission: "edit",
      aiAccess: "edit",
      grants: [
        { userId: granted.userId, permission: "edit" },
        { userId: guest.userId, permission: "edit" },
      ],
    });
    const editLink = (await asAdmin("documents", { action: "create_share_link", permission: "edit" })) as { path: string };
    await acceptShareLink(server.db, linkedGuest.userId, editLink.path.replace("/share/", ""), new Date());
    const readLink = (await asAdmin("documents", { action: "create_share_link", permission: "read" })) as { path: string };
    readLinkToken = readLink.path.replace("/share/", "");

    const memberMcp = await server.mcpClient(member.token);
    clients.push(memberMcp);
    const rows: Array<Omit<Principal, "hidden" | "branchName" | "mergeRequestId">> = [
      { label: "owner", caller: humanCaller(owner, fixture), signedAs: { userId: owner.userId, principal: "person" } },
      { label: "admin", caller: humanCaller(admin, fixture), signedAs: { userId: admin.userId, principal: "person" } },
      {
        label: "member (team edit)",
        caller: humanCaller(member, fixture),
        signedAs: { userId: member.userId, principal: "person" },
      },
      {
        label: "member with an edit grant",
        caller: humanCaller(granted, fixture),
        signedAs: { userId: granted.userId, principal: "person" },
      },
      {
        label: "guest with an edit grant",
        caller: humanCaller(guest, fixture),
        signedAs: { userId: guest.userId, principal: "person" },
      },
      {
        label: "guest who opened an edit link",
        caller: humanCaller(linkedGuest, fixture),
        signedAs: { userId: linkedGuest.userId, principal: "person" },
      },
      {
        label: "owner's token over MCP",
        caller: aiCaller(ownerMcp, fixture),
        signedAs: { userId: owner.userId, principal: "agent" },
      },
      {
        label: "owner's token over tRPC",
        caller: tokenCaller(owner.token, fixture),
        signedAs: { userId: owner.userId, principal: "agent" },
      },
      {
        label: "member's token over MCP",
        caller: aiCaller(memberMcp, fixture),
        signedAs: { userId: member.userId, principal: "agent" },
      },
      { label: "read-link visitor", caller: null, signedAs: null },
    ];
    for (const [i, row] of rows.entries()) {
      const branchName = `from-o3-${i}`;
      // Each makes its own branch from the old one (a visitor cannot: an admin makes it).
      const create = { action: "create_branch", documentId, branchName, sourceBranch: "o3" };
      if (row.caller) await row.caller.call("documents", create);
      else await server.callToolAsSent("documents", admin.userId, create);
      // Someone who may see them changes both sections and a public one there, and both on the old target too: a conflict each.
      await updateSecrets(branchName, `source ${i}`);
      await asAdmin("sections", { action: "update", branchName, sectionId: publicId, newContent: [text(`Agenda ${i}`)] });
      const mr = (await asAdmin("merge_requests", {
        action: "create",
        sourceBranch: branchName,
        targetBranch: "o3",
        title: `From ${row.label}`,
      })) as { mergeRequestId: string };
      principals.set(row.label, { ...row, hidden: HIDDEN_FROM[row.label]!, branchName, mergeRequestId: mr.mergeRequestId });
    }
    await updateSecrets("o3", "target");
    const secret = await ensureAuthSecret(server.db, undefined);
    const sessionOf = async (userId: string) => ({
      query: "",
      headers: { cookie: `${sessionCookieName(false)}=${await encode({ token: { sub: userId }, secret })}` },
    });
    const token = (value: string) => ({ query: `?token=${value}`, headers: {} });
    const live: Record<string, { query: string; headers: Record<string, string> }> = {
      owner: await sessionOf(owner.userId),
      admin: await sessionOf(admin.userId),
      "member (team edit)": await sessionOf(member.userId),
      "member with an edit grant": await sessionOf(granted.userId),
      "guest with an edit grant": await sessionOf(guest.userId),
      "guest who opened an edit link": await sessionOf(linkedGuest.userId),
      "owner's token over MCP": token(owner.token),
      "owner's token over tRPC": token(owner.token),
      "member's token over MCP": token(member.token),
      "read-link visitor": { query: `?share=${readLinkToken}`, headers: {} },
    };
    for (const [label, credential] of Object.entries(live)) liveCredentialOf.set(label, credential);
  }, 240_000);

  afterAll(async () => {
    for (const client of clients) await client.close();
  });

  const labels = Object.keys(HIDDEN_FROM);
  const writers = labels.filter((label) => label !== "read-link visitor");

  test.each(labels)("%s: on the old branch, a live room of a section main hides is not found; the others open", async (label) => {
    const p = principals.get(label)!;
    const { query, headers } = liveCredentialOf.get(label)!;
    const status = async (sectionId: string) =>
      (await upgradeStatus(server.url, `${roomName(documentId, p.branchName, sectionId)}${query}`, headers)).status;
    for (const h of ["team", "ai"] as const) expect(await status(sectionOf[h]), `${label}, ${h}`).toBe(p.hidden.includes(h) ? 404 : 101);
    expect(await status(publicId)).toBe(101);
  });

  test.each(labels)("%s: read leaves out what main hides, with gapless positions", async (label) => {
    const p = principals.get(label)!;
    const view = p.caller
      ? await callAs(p, "read", { documentId, branchName: p.branchName })
      : await readSharedDocument(server.db, readLinkToken, { branchName: p.branchName }, new Date());
    const expected = [
      ["Agenda", publicId],
      [TEAM.name, sectionOf.team],
      [AI.name, sectionOf.ai],
    ].filter(([, id]) => !p.hidden.some((h) => sectionOf[h] === id));
    expect(sectionsOf(view).map((s) => [s.name, s.sectionId])).toEqual(expected);
    expectNoLeak(p, view);
  });

  test.each(writers)("%s: the storage keys of a hidden section cannot be used, and no link downloads them", async (label) => {
    const p = principals.get(label)!;
    const branch = { documentId, branchName: p.branchName };
    for (const h of ["team", "ai"] as const) {
      const image = { blockType: "image", type: "storage", mediaType: "image/png", key: keyOf[h] };
      const reuse = await attempt(callAs(p, "sections", { action: "create", ...branch, name: `Copy of ${h}`, content: [image] }));
      expect(reuse.code, `${h} key`).toBe(p.hidden.includes(h) ? "NOT_FOUND" : "allowed");
      expectNoLeak(p, reuse, "error");
    }
    const view = (await callAs(p, "read", branch)) as { headCommitId: string };
    expectNoLeak(p, view);
    for (const h of p.hidden) {
      const signed = server.files.downloadUrl({
        key: keyOf[h],
        documentId,
        commitId: view.headCommitId,
        expiresAt: new Date(Date.now() + 60_000),
        ...p.signedAs!,
      });
      const download = await fetch(signed);
      expect(download.status, `${h} key`).toBe(404);
      await download.arrayBuffer();
    }
  });

  test.each(writers)("%s: a hidden section reads as missing to every write, and counts nowhere", async (label) => {
    const p = principals.get(label)!;
    const branch = { documentId, branchName: p.branchName };
    for (const h of ["team", "ai"] as const) {
      const rename = await attempt(callAs(p, "sections", { action: "update", ...branch, sectionId: sectionOf[h], newName: "Renamed" }));
      if (p.hidden.includes(h)) {
        const remove = await attempt(callAs(p, "sections", { action: "delete", ...branch, sectionId: sectionOf[h] }));
        expect([rename.code, remove.code], `${h} section`).toEqual(["NOT_FOUND", "NOT_FOUND"]);
        expectNoLeak(p, [rename, remove], "error");
      } else {
        expect(rename.code, `${h} section`).toBe("allowed");
        // Named back, so the other checks see the sections as they were.
        await callAs(p, "sections", { action: "update", ...branch, sectionId: sectionOf[h], newName: nameOf(h) });
      }
    }
    // Positions and orders count only what the principal sees: a hidden section is neither counted nor asked for.
    const visible = sectionsOf(await callAs(p, "read", branch));
    const created = await callAs(p, "sections", { action: "create", ...branch, name: "Appended", content: [text("new")] });
    expect((created as { position: number }).position).toBe(visible.length);
    const order = [...visible.map((s) => s.sectionId), (created as { sectionId: string }).sectionId].reverse();
    const reordered = await attempt(callAs(p, "sections", { action: "reorder", ...branch, sectionOrder: order }));
    expect(reordered.code).toBe("allowed");
    expectNoLeak(p, reordered);
    expect(sectionsOf(await callAs(p, "read", branch)).map((s) => s.sectionId)).toEqual(order);
  });

  test.each(writers)("%s: log and show name no hidden section on the branch", async (label) => {
    const p = principals.get(label)!;
    const log = (await callAs(p, "documents", { action: "log", documentId, branchName: p.branchName, limit: 100 })) as {
      commits: Array<{ commitId: string; message: string }>;
    };
    expectNoLeak(p, log);
    const messages = new Map(log.commits.map((c) => [c.commitId, c.message]));
    for (const h of ["team", "ai"] as const) {
      const commitId = oldBranchCommitOf[h];
      expect(messages.get(commitId), `${h} section`).toBe(
        p.hidden.includes(h) ? "Changes to sections you cannot see" : `Update section "${nameOf(h)}"`,
      );
      expectNoLeak(p, await callAs(p, "documents", { action: "show", documentId, commitId }));
    }
  });

  test.each(writers)("%s: merge requests between old branches leave hidden sections out entirely", async (label) => {
    const p = principals.get(label)!;
    const analysis = (await callAs(p, "merge_requests", { action: "analyze", mergeRequestId: p.mergeRequestId })) as {
      sections: Array<{ sectionId: string; status: string }>;
      hiddenConflicts: number;
    };
    expectNoLeak(p, analysis);
    expect(analysis.hiddenConflicts).toBe(p.hidden.length);
    const conflicts = analysis.sections.filter((s) => s.status === "conflict").map((s) => s.sectionId);
    expect(conflicts.sort()).toEqual(
      (["team", "ai"] as const)
        .filter((h) => !p.hidden.includes(h))
        .map((h) => sectionOf[h])
        .sort(),
    );
    // Proposing the branch into another old branch would change what is hidden: refused, naming nothing.
    const proposal = await attempt(
      callAs(p, "merge_requests", { action: "create", documentId, sourceBranch: p.branchName, targetBranch: "o4", title: "Proposal" }),
    );
    expect(proposal.code).toBe(p.hidden.length > 0 ? "PERMISSION_DENIED" : "allowed");
    expectNoLeak(p, proposal, "error");
  });
});

describe("an OAuth app's token, outside what it was issued for", () => {
  const listTools = (token: string) =>
    fetch(`${server.url}/api/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });

  test("is not a credential for tRPC: its resource is the MCP endpoint", async () => {
    const app = await connectOAuthApp(server, owner.userId);
    expect((await listTools(app.accessToken)).status).toBe(200);
    const trpc = server.trpcClient(app.accessToken) as unknown as TrpcHttp;
    await expect(callTrpcHttp(trpc, "members", { action: "list" })).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
  });

  test("revoked in Settings: refused on MCP (401 invalid_token), and its refresh token gets nothing", async () => {
    const app = await connectOAuthApp(server, owner.userId, { name: "Revoked App" });
    const inPerson = server.trpcCaller(owner);
    const { apps } = (await inPerson.apiTokens({ action: "list_apps" })) as { apps: Array<{ grantId: string; name: string }> };
    await inPerson.apiTokens({ action: "revoke_app", grantId: apps.find((a) => a.name === "Revoked App")!.grantId });
    const refused = await listTools(app.accessToken);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const refreshed = await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: app.refreshToken, client_id: app.clientId }),
    });
    expect(await refreshed.json()).toMatchObject({ error: "invalid_grant" });
  });

  test("an API token (an agent) cannot revoke a connected app: only the person, signed in", async () => {
    const app = await connectOAuthApp(server, owner.userId);
    const trpc = server.trpcClient(owner.token) as unknown as TrpcHttp;
    const { apps } = (await callTrpcHttp(trpc, "apiTokens", { action: "list_apps" })) as { apps: Array<{ grantId: string }> };
    await expect(callTrpcHttp(trpc, "apiTokens", { action: "revoke_app", grantId: apps[0]!.grantId })).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    expect((await listTools(app.accessToken)).status).toBe(200);
  });
});

/**
 * Webhooks (Settings → Webhooks; tRPC only, not an MCP tool): only a signed-in owner or admin lists, creates,
 * deletes, enables or tests them. Every other principal is refused, and a refusal changes nothing.
 */
describe("webhooks: only signed-in owners and admins manage them", () => {
  type HookOutcome = "allow" | "denied" | "unauthenticated" | "unknown_tool" | string;
  type HookAction = "list" | "create" | "delete" | "enable" | "test";
  const ACTIONS: HookAction[] = ["list", "create", "delete", "enable", "test"];

  let hooks: TestServer;
  let receiver: HttpServer;
  let receiverUrl: string;
  let people: Record<"owner" | "admin" | "member" | "guest", TestUser>;
  /** One hook per principal and action that needs one, made by the owner in person. */
  const outbound = { ...DEFAULT_OUTBOUND_SETTINGS, allowHttp: true, allow: ["loopback" as const] };

  beforeAll(async () => {
    receiver = createHttpServer((_req, res) => res.writeHead(200).end());
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    hooks = await startTestServer({ outbound });
    const owner = await hooks.createUser("hook-owner@example.test", "Hope Owner");
    const admin = await hooks.createUser("hook-admin@example.test", "Hal Admin");
    const member = await hooks.createUser("hook-member@example.test", "Mel Member");
    const guest = await hooks.createUser("hook-guest@example.test", "Gwen Guest");
    await hooks.db.update(memberships).set({ role: "admin" }).where(eq(memberships.userId, admin.userId));
    await hooks.db.update(memberships).set({ role: "guest" }).where(eq(memberships.userId, guest.userId));
    people = {
      owner,
      admin: { ...admin, actor: { ...admin.actor, role: "admin" } },
      member,
      guest: { ...guest, actor: { ...guest.actor, role: "guest" } },
    };
  });

  afterAll(async () => {
    await hooks?.close();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const inPerson = (user: TestUser) => hooks.trpcCaller(user) as unknown as { webhooks(args: Args): Promise<unknown> };

  /** A disabled hook of the owner's, so that enable has something to do. */
  async function freshHook(): Promise<string> {
    const made = (await inPerson(people.owner).webhooks({ action: "create", url: receiverUrl, events: ["comment.added"] })) as {
      webhook: { webhookId: string };
    };
    await hooks.db.update(webhooks).set({ disabledAt: new Date() }).where(eq(webhooks.id, made.webhook.webhookId));
    return made.webhook.webhookId;
  }

  const argsFor = async (action: HookAction): Promise<Args> =>
    action === "list"
      ? { action }
      : action === "create"
        ? { action, url: receiverUrl, events: ["document.committed"] }
        : { action, webhookId: await freshHook() };

  /** What the workspace's hooks are: ids, enabled or not, and how many deliveries each has queued. */
  const snapshot = async () =>
    JSON.stringify(
      await hooks.db
        .select({
          id: webhooks.id,
          disabledAt: webhooks.disabledAt,
          deliveries: sql<number>`(select count(*) from webhook_deliveries d where d.webhook_id = ${webhooks.id})`,
        })
        .from(webhooks)
        .orderBy(webhooks.id),
    );

  const codeOf = (error: unknown): string | undefined => {
    const e = error as { code?: string; cause?: { code?: string }; data?: { error?: { code?: string } } };
    return e.data?.error?.code ?? (isDomainError(e.cause) ? e.cause.code : undefined) ?? e.code;
  };

  async function outcome(call: (args: Args) => Promise<unknown>, action: HookAction): Promise<HookOutcome> {
    const args = await argsFor(action);
    const before = await snapshot();
    try {
      await call(args);
      return "allow";
    } catch (error) {
      const code = codeOf(error);
      // A refusal changes nothing.
      const after = await snapshot();
      if (after !== before) return `${code} but changed the hooks`;
      if (code === "PERMISSION_DENIED") return "denied";
      if (code === "UNAUTHENTICATED") return "unauthenticated";
      if (error instanceof McpError && error.code === ErrorCode.InvalidParams && /Unknown tool/i.test(error.message)) return "unknown_tool";
      return `unexpected ${code}: ${(error as Error).message}`;
    }
  }

  const overTrpcHttp = (token?: string) => {
    const trpc = hooks.trpcClient(token) as unknown as TrpcHttp;
    return (args: Args) => callTrpcHttp(trpc, "webhooks", args);
  };
  const overMcp = async (token: string) => {
    const client = await hooks.mcpClient(token);
    return {
      call: (args: Args) => client.callTool({ name: "webhooks", arguments: args }),
      close: () => client.close(),
    };
  };

  test("every principal on list, create, delete, enable and test", async () => {
    const link = (await hooks.callTool("documents", people.owner.userId, { action: "create", path: "hooked" })) as { documentId: string };
    const share = (await hooks.callTool("documents", people.owner.userId, {
      action: "create_share_link",
      documentId: link.documentId,
      permission: "read",
    })) as { path: string };
    const app = await connectOAuthApp(hooks, people.owner.userId, { decision: "allow_write" });
    const ownerMcp = await overMcp(people.owner.token);
    const adminMcp = await overMcp(people.admin.token);
    const appMcp = await overMcp(app.accessToken);
    const principals: Array<[string, (args: Args) => Promise<unknown>, HookOutcome]> = [
      ["owner, signed in", (args) => inPerson(people.owner).webhooks(args), "allow"],
      ["admin, signed in", (args) => inPerson(people.admin).webhooks(args), "allow"],
      ["member, signed in", (args) => inPerson(people.member).webhooks(args), "denied"],
      ["guest, signed in", (args) => inPerson(people.guest).webhooks(args), "denied"],
      ["owner's API token over tRPC", overTrpcHttp(people.owner.token), "denied"],
      ["admin's API token over tRPC", overTrpcHttp(people.admin.token), "denied"],
      ["owner's API token over MCP", ownerMcp.call, "unknown_tool"],
      ["admin's API token over MCP", adminMcp.call, "unknown_tool"],
      ["owner's OAuth app over MCP", appMcp.call, "unknown_tool"],
      ["owner's OAuth app token over tRPC", overTrpcHttp(app.accessToken), "unauthenticated"],
      ["share-link visitor (the link's token as a credential)", overTrpcHttp(share.path.replace("/share/", "")), "unauthenticated"],
      ["anonymous", overTrpcHttp(), "unauthenticated"],
    ];
    const got: Record<string, Record<HookAction, HookOutcome>> = {};
    const want: Record<string, Record<HookAction, HookOutcome>> = {};
    for (const [name, call, expected] of principals) {
      got[name] = {} as Record<HookAction, HookOutcome>;
      want[name] = {} as Record<HookAction, HookOutcome>;
      for (const action of ACTIONS) {
        got[name][action] = await outcome(call, action);
        want[name][action] = expected;
      }
    }
    await Promise.all([ownerMcp.close(), adminMcp.close(), appMcp.close()]);
    expect(got).toEqual(want);
  });

  test("an allowed call does what it says: the admin's test queues a delivery, enable clears the disabled mark, delete removes it", async () => {
    const admin = inPerson(people.admin);
    const webhookId = await freshHook();
    const enabled = (await admin.webhooks({ action: "enable", webhookId })) as { webhook: { disabledAt: string | null } };
    expect(enabled.webhook.disabledAt).toBeNull();
    await admin.webhooks({ action: "test", webhookId });
    expect(await hooks.db.$count(webhookDeliveries, eq(webhookDeliveries.webhookId, webhookId))).toBeGreaterThan(0);
    await admin.webhooks({ action: "delete", webhookId });
    expect(await hooks.db.$count(webhooks, eq(webhooks.id, webhookId))).toBe(0);
  });
});
