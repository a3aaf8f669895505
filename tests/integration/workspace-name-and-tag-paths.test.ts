/**
 * Two newcomer rough edges, through the real faces: the workspace's name,
 * renamed by owners and admins through the tRPC `workspace` procedure (a
 * member is refused, a bad name is refused and changes nothing), and
 * `create_tag` over MCP reading a leading "/" in `tagPath` exactly as
 * document paths do.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createTRPCClient, httpLink } from "@trpc/client";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { workspaces } from "@/db/schema";
import type { WorkspaceResults } from "@/server/actions/workspace";
import type { AppRouter } from "@/server/api/router";
import { startServer } from "@/server/http/server";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { loadConfig } from "@/server/config";
import { createObjectStore } from "@/server/storage";
import { asSent } from "../helpers/as-sent";

let server: TestServer;
let owner: TestUser;
let admin: TestUser;
let member: TestUser;
let guest: TestUser;
let mcp: Client;

const as = (user: TestUser) => server.trpcCaller(user);
const getAs = async (user: TestUser) => (await as(user).workspace({ action: "get" })) as WorkspaceResults["get"];

/** The DomainError behind a failed tRPC call (caller or HTTP client). */
async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { cause?: { code?: string; message?: string }; data?: { error?: { code: string; message: string } } };
    if (e.data?.error) return e.data.error;
    if (e.cause?.code) return { code: e.cause.code, message: e.cause.message ?? "" };
    throw error;
  }
  throw new Error("expected the call to fail");
}

async function storedName(): Promise<string> {
  const [row] = await server.db.select({ name: workspaces.name }).from(workspaces).where(eq(workspaces.id, owner.actor.workspaceId));
  return row!.name;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("olive@example.test", "Olive Owner");
  admin = await server.createUser("adam@example.test", "Adam Admin");
  member = await server.createUser("mia@example.test", "Mia Member");
  guest = await server.createUser("gus@example.test", "Gus Guest");
  await as(owner).workspace({ action: "change_role", userId: admin.userId, role: "admin" });
  await as(owner).workspace({ action: "change_role", userId: guest.userId, role: "guest" });
  // A caller's actor carries the role it was authenticated with: take the new ones.
  admin = { ...admin, actor: { ...admin.actor, role: "admin" } };
  guest = { ...guest, actor: { ...guest.actor, role: "guest" } };
  mcp = await server.mcpClient(owner.token);
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe("renaming the workspace", () => {
  test("every member reads the name; only owners and admins may rename", async () => {
    const seen = await getAs(member);
    expect(seen).toMatchObject({
      workspace: { workspaceId: owner.actor.workspaceId, name: "Workspace" },
      viewer: { userId: member.userId, role: "member", canRename: false, canManage: false },
    });
    expect((await getAs(owner)).viewer).toMatchObject({ role: "owner", canRename: true });
    expect((await getAs(admin)).viewer).toMatchObject({ role: "admin", canRename: true });
  });

  test("an owner renames it; the name is trimmed and every member sees it", async () => {
    const renamed = await as(owner).workspace({ action: "rename", name: "  Acme Research  " });
    expect(renamed).toEqual({
      workspace: { workspaceId: owner.actor.workspaceId, name: "Acme Research" },
      previousName: "Workspace",
      changed: true,
    });
    expect(await storedName()).toBe("Acme Research");
    expect((await getAs(guest)).workspace.name).toBe("Acme Research");
    expect(await as(owner).workspace({ action: "rename", name: "Acme Research" })).toMatchObject({ changed: false });
  });

  test("an admin renames it; their API token, an agent, may not", async () => {
    expect(await as(admin).workspace({ action: "rename", name: "Acme Labs 2" })).toMatchObject({
      workspace: { name: "Acme Labs 2" },
      previousName: "Acme Research",
      changed: true,
    });
    const overHttp = await errorOf(server.trpcClient(admin.token).workspace.mutate({ action: "rename", name: "Renamed by a token" }));
    expect(overHttp.code).toBe("PERMISSION_DENIED");
    expect(overHttp.message).toMatch(/agent/);
    expect(await storedName()).toBe("Acme Labs 2");
  });

  test("a member or a guest is refused with PERMISSION_DENIED and nothing changes", async () => {
    for (const user of [member, guest]) {
      const refused = await errorOf(as(user).workspace({ action: "rename", name: "Mine now" }));
      expect(refused.code).toBe("PERMISSION_DENIED");
      expect(refused.message).toMatch(/owners and admins/);
    }
    const overHttp = await errorOf(server.trpcClient(member.token).workspace.mutate({ action: "rename", name: "Mine now" }));
    expect(overHttp.code).toBe("PERMISSION_DENIED");
    expect(await storedName()).toBe("Acme Labs 2");
  });

  test("a name that is empty, blank, over 80 characters, multi-line or not text is VALIDATION_FAILED and changes nothing", async () => {
    const bad: unknown[] = ["", "   ", "x".repeat(81), ` ${"y".repeat(81)} `, "two\nlines", 42, null, undefined];
    for (const name of bad) {
      const refused = await errorOf(as(owner).workspace(asSent({ action: "rename", name })));
      expect(refused.code, JSON.stringify(name)).toBe("VALIDATION_FAILED");
    }
    const extra = await errorOf(as(owner).workspace(asSent({ action: "rename", name: "Fine", color: "red" })));
    expect(extra.code).toBe("VALIDATION_FAILED");
    expect(await storedName()).toBe("Acme Labs 2");
    // Exactly 80 characters after trimming is fine.
    const longest = "z".repeat(80);
    expect(await as(owner).workspace({ action: "rename", name: `  ${longest} ` })).toMatchObject({ workspace: { name: longest } });
  });
});

describe("the public base URL `get` hands out", () => {
  test("is the server's own address by default, and QUIRE_PUBLIC_URL (without a trailing slash) when configured", async () => {
    const own = (await server.trpcClient(member.token).workspace.mutate({ action: "get" })) as WorkspaceResults["get"];
    expect(own.publicUrl).toBe(server.url);

    const configured = await startServer({
      database: server.database,
      port: 0,
      host: "127.0.0.1",
      next: false,
      objectStore: createObjectStore(loadConfig()),
      publicUrl: "https://docs.example.com/",
    });
    try {
      const client = createTRPCClient<AppRouter>({
        links: [httpLink({ url: `${configured.url}/api/trpc`, headers: { authorization: `Bearer ${member.token}` } })],
      });
      const got = (await client.workspace.mutate({ action: "get" })) as WorkspaceResults["get"];
      expect(got.publicUrl).toBe("https://docs.example.com");
      expect(got.workspace.workspaceId).toBe(owner.actor.workspaceId);
    } finally {
      await configured.close();
    }
  });
});

describe("create_tag paths", () => {
  test("a leading '/' in tagPath is dropped, as in document paths", async () => {
    const doc = await callMcp<{ path: string }>(mcp, "documents", { action: "create", path: "/handbook/tags-test" });
    expect(doc.path).toBe("handbook/tags-test");

    const tag = await callMcp<{ tagId: string; tagPath: string }>(mcp, "documents", { action: "create_tag", tagPath: "/status/draft" });
    expect(tag.tagPath).toBe("status/draft");
    // The same tag with or without the slash (and spaces around it): it already exists.
    for (const tagPath of ["status/draft", " //status/draft "]) {
      const again = await callMcpError(mcp, "documents", { action: "create_tag", tagPath });
      expect(again.code, tagPath).toBe("TAG_EXISTS");
      expect(again.details).toEqual({ tagPath: "status/draft" });
    }
  });

  test("a tagPath that is only slashes, or has an empty segment, is VALIDATION_FAILED", async () => {
    for (const tagPath of ["/", "///", "  ", "status//draft", "status/"]) {
      const refused = await callMcpError(mcp, "documents", { action: "create_tag", tagPath });
      expect(refused.code, tagPath).toBe("VALIDATION_FAILED");
    }
  });
});
