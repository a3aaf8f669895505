/** Starts a real Quire server on a free port against an isolated database, with helpers to act as users. */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTRPCClient, httpLink } from "@trpc/client";
import { memberships, users, workspaces } from "@/db/schema";
import type { Actor } from "@/server/actions/context";
import { type ToolInput, type ToolName, type ToolOutput, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { type AppRouter, createCaller } from "@/server/api/router";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { actorForUser } from "@/server/access/actor";
import type { NotificationEmailOptions } from "@/server/actions/notification-email";
import { startServer } from "@/server/http/server";
import type { WebhookDeliveryOptions } from "@/server/actions/webhooks";
import type { OutboundSettings } from "@/server/outbound/addresses";
import { LocalObjectStore } from "@/server/storage/local";
import type { ObjectStore } from "@/server/storage/object-store";
import { createTestDatabase, type TestDatabase } from "./database";
import { type McpToolError, toolError } from "./tool-error";

export const projectRoot = path.resolve(import.meta.dirname, "../..");

/** More people than a first page of members holds (200): with them, whoever sorts after is found only by searching. */
export const CROWD = Array.from({ length: 200 }, (_, i) => `Crowd Member ${String(i + 1).padStart(3, "0")}`);

export interface TestUser {
  userId: string;
  email: string;
  token: string;
  actor: Actor;
}

export async function startTestServer(
  options: {
    next?: boolean;
    database?: TestDatabase;
    objectStore?: ObjectStore;
    maxUploadBytes?: number;
    publicUrl?: string;
    trustProxy?: boolean;
    /** Share live rooms with other processes through this Redis. */
    redisUrl?: string;
    /** Send email notifications through this mail server. */
    email?: NotificationEmailOptions;
    /** Origins whose pages may call /api/mcp and the OAuth endpoints. */
    mcpAllowedOrigins?: string[];
    /** What outbound requests may reach (default: public https only). */
    outbound?: OutboundSettings;
    /** Webhook retry and disable timings. */
    webhookDelivery?: Partial<WebhookDeliveryOptions>;
  } = {},
) {
  const database = options.database ?? (await createTestDatabase());
  const uploadsDir = options.objectStore ? null : await mkdtemp(path.join(os.tmpdir(), "quire-test-uploads-"));
  const objectStore = options.objectStore ?? new LocalObjectStore(uploadsDir!);
  const server = await startServer({
    database,
    port: 0,
    host: "127.0.0.1",
    next: options.next ? { dev: false, dir: projectRoot } : false,
    objectStore,
    maxUploadBytes: options.maxUploadBytes,
    publicUrl: options.publicUrl,
    trustProxy: options.trustProxy,
    redisUrl: options.redisUrl,
    email: options.email,
    mcpAllowedOrigins: options.mcpAllowedOrigins,
    outbound: options.outbound,
    webhookDelivery: options.webhookDelivery,
  });
  const { files, live, rooms } = server;
  const { db } = database;
  let userCount = 0;

  return {
    url: server.url,
    database,
    db,
    /** The server's file-link signer (to build contexts and test links). */
    files,
    /** The server's live drafts (to build contexts). */
    live,
    /** The server's live rooms (their counters). */
    rooms,
    /** The email digests' sender (with `email`). */
    notificationEmail: server.notificationEmail,
    /** The webhook queue's sender. */
    webhookDeliveries: server.webhookDeliveries,
    objectStore,
    /** Adds a user (the first is the owner) and an API token for them. */
    async createUser(email?: string, name?: string, password = "correct horse battery"): Promise<TestUser> {
      userCount += 1;
      const address = email ?? `user${userCount}@example.test`;
      const created = await addUser(db, { email: address, name: name ?? `User ${userCount}`, password }, new Date());
      const { token } = await issueApiToken(db, { email: address, label: "test" }, new Date());
      const actor = (await actorForUser(db, created.user.id, "agent"))!;
      return { userId: created.user.id, email: address, token, actor };
    },
    /**
     * Adds members to the workspace of `to` in two statements: a crowd for lists longer than a page, in
     * milliseconds where createUser hashes a password for each. They have no password or token (none signs in);
     * callTool acts as them. Returns their ids in the order of `names`.
     */
    async addMembers(to: TestUser, names: readonly string[]): Promise<string[]> {
      const emails = names.map((_, i) => `user${userCount + 1 + i}@example.test`);
      userCount += names.length;
      const added = await db
        .insert(users)
        .values(names.map((name, i) => ({ email: emails[i]!, name, passwordHash: "" })))
        .returning({ id: users.id, email: users.email });
      await db
        .insert(memberships)
        .values(added.map(({ id }) => ({ workspaceId: to.actor.workspaceId, userId: id, role: "member" as const })));
      const idByEmail = new Map(added.map(({ id, email }) => [email, id]));
      return emails.map((email) => idByEmail.get(email)!);
    },
    /** A user who owns another workspace of the same instance: someone the first workspace must never see. Returns their id. */
    async createOutsider(email: string, name: string): Promise<string> {
      const [workspace] = await db.insert(workspaces).values({ name: "Elsewhere" }).returning();
      const [outsider] = await db.insert(users).values({ email, name, passwordHash: "x" }).returning();
      await db.insert(memberships).values({ workspaceId: workspace!.id, userId: outsider!.id, role: "owner" });
      return outsider!.id;
    },
    /** Calls a tool in-process as a user, as the web app does. */
    async callTool<T extends ToolName, const I extends ToolInput<T>>(tool: T, userId: string, input: I): Promise<ToolOutput<T, I>> {
      const actor = (await actorForUser(db, userId, "person"))!;
      return (await runTool(toolsByName[tool as ToolName], { db, actor, clock: () => new Date(), files, live }, input)) as ToolOutput<T, I>;
    },
    /** Calls a tool in-process with input as a client could send it: the tool's own schema judges it, as over MCP. */
    async callToolAsSent(tool: ToolName, userId: string, input: unknown): Promise<unknown> {
      const actor = (await actorForUser(db, userId, "person"))!;
      return runTool(toolsByName[tool], { db, actor, clock: () => new Date(), files, live }, input);
    },
    /** A tRPC caller acting as the user. */
    trpcCaller(user: TestUser) {
      const actor = { ...user.actor, principal: "person" as const };
      const outbound = options.outbound;
      return createCaller({ db, actor, clock: () => new Date(), files, live, outbound, baseUrl: server.url, callerNow: async () => actor });
    },
    /** A tRPC client over HTTP with the user's bearer token. */
    trpcClient(token?: string) {
      return createTRPCClient<AppRouter>({
        links: [httpLink({ url: `${server.url}/api/trpc`, headers: token ? { authorization: `Bearer ${token}` } : {} })],
      });
    },
    /** An MCP SDK client connected over Streamable HTTP with the given bearer token. */
    async mcpClient(token: string): Promise<Client> {
      const client = new Client({ name: "quire-tests", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      });
      await client.connect(transport);
      return client;
    },
    async close() {
      await server.close();
      if (!options.database) await database.close();
      if (uploadsDir) await rm(uploadsDir, { recursive: true, force: true });
    },
  };
}

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;

/** Calls an MCP tool and returns its structured result, failing the test if the tool reported an error. */
export async function callMcp<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`MCP ${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

/** Calls an MCP tool expecting a failure; returns the { code, message, details } payload. */
export async function callMcpError(client: Client, name: string, args: Record<string, unknown>): Promise<McpToolError> {
  return toolError(await client.callTool({ name, arguments: args }));
}

let overrideRounds = 0;
/**
 * Sets a section's permission overrides the only way they reach a default
 * branch: on a new branch, merged by a merge request — in person (`userId`),
 * since an API token may not change access.
 */
export async function mergeSectionOverrides(
  server: TestServer,
  userId: string,
  at: { documentId: string; sectionId: string },
  overrides: { defaultPermission?: "edit" | "read" | "none" | null; aiAccess?: "edit" | "read" | "none" | null },
): Promise<void> {
  overrideRounds += 1;
  const branchName = `overrides-${overrideRounds}`;
  const { documentId, sectionId } = at;
  await server.callTool("documents", userId, { action: "create_branch", documentId, branchName });
  await server.callTool("sections", userId, { action: "update", documentId, branchName, sectionId, ...overrides });
  const request = await server.callTool("merge_requests", userId, {
    action: "create",
    documentId,
    sourceBranch: branchName,
    targetBranch: "main",
    title: "Overrides",
  });
  await server.callTool("merge_requests", userId, { action: "execute", mergeRequestId: request.mergeRequestId });
}
