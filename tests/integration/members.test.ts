/**
 * People and access: the `members` tool over MCP, workspace administration
 * (roles, removal, invites) through tRPC callers, API token listing,
 * revocation and expiry as MCP and tRPC see them, and the CSRF guard on
 * cookie-authenticated tRPC calls.
 */
import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { invites } from "@/db/schema";
import { apiTokensTool } from "@/server/actions/api-tokens";
import { runTool } from "@/server/actions/tool";
import { ensureAuthSecret, issueApiTokenForUser } from "@/server/auth/accounts";
import { listApiTokensForEmail, revokeApiTokenById } from "@/server/auth/api-tokens";
import { acceptInvite, acceptInviteAsNewUser, createInviteFromCli, inviteInfo } from "@/server/actions/invites";
import { sha256Hex } from "@/server/core/hashing";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { asSent } from "../helpers/as-sent";

let server: TestServer;
let owner: TestUser;
let ada: TestUser;
let grace: TestUser;
let percent: TestUser;
let outsiderId: string;
let mcp: Client;

interface Member {
  userId: string;
  name: string;
  email: string;
  role: string;
}
interface MemberPage {
  members: Member[];
  nextCursor: string | null;
}

/** The DomainError code behind a failed tRPC caller call. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return cause?.code ?? (error as { code?: string }).code ?? String(error);
  }
  throw new Error("expected the call to fail");
}

const as = (user: TestUser) => server.trpcCaller(user);

async function rolesByEmail(): Promise<Record<string, string>> {
  const page = (await as(owner).workspace({ action: "list_members", limit: 200 })) as { members: Member[] };
  return Object.fromEntries(page.members.map((m) => [m.email, m.role]));
}

async function mcpStatus(token: string): Promise<number> {
  const res = await fetch(`${server.url}/api/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("olive@example.test", "Olive Owner");
  ada = await server.createUser("ada@example.test", "Ada Lovelace");
  grace = await server.createUser("grace.hopper@example.test", "Grace Hopper");
  percent = await server.createUser("a_b@example.test", "100% Sure");
  // Someone in another workspace of the same instance: never visible here.
  outsiderId = await server.createOutsider("adalbert@elsewhere.test", "Adalbert Outsider");
  mcp = await server.mcpClient(owner.token);
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe("members tool over MCP", () => {
  test("is listed as a read-only tool with described parameters", async () => {
    const { tools } = await mcp.listTools();
    const members = tools.find((t) => t.name === "members")!;
    expect(members.annotations?.readOnlyHint).toBe(true);
    const props = members.inputSchema.properties as Record<string, { description?: string; enum?: string[] }>;
    expect(props.action!.enum).toEqual(["list", "search", "get"]);
    for (const name of ["query", "limit", "cursor", "userIds"]) expect(props[name]!.description, name).toBeTruthy();
  });

  test("list pages through the workspace by name, with roles, and never shows other workspaces", async () => {
    const all = await callMcp<MemberPage>(mcp, "members", { action: "list" });
    expect(all.members.map((m) => m.name)).toEqual(["100% Sure", "Ada Lovelace", "Grace Hopper", "Olive Owner"]);
    expect(all.members.find((m) => m.userId === owner.userId)).toEqual({
      userId: owner.userId,
      name: "Olive Owner",
      email: "olive@example.test",
      role: "owner",
    });
    expect(all.members.find((m) => m.userId === ada.userId)!.role).toBe("member");
    expect(all.nextCursor).toBeNull();
    expect(JSON.stringify(all)).not.toContain(outsiderId);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: MemberPage = await callMcp<MemberPage>(mcp, "members", { action: "list", limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.members.length).toBeLessThanOrEqual(3);
      seen.push(...page.members.map((m) => m.userId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.members.map((m) => m.userId));
  });

  test.each([
    ["lov", ["Ada Lovelace"]],
    ["LOVELACE", ["Ada Lovelace"]],
    ["ada", ["Ada Lovelace"]],
    ["ada lov", ["Ada Lovelace"]],
    ["hop", ["Grace Hopper"]],
    ["GRACE.H", ["Grace Hopper"]],
    ["olive@example", ["Olive Owner"]],
    ["a", ["100% Sure", "Ada Lovelace"]],
    ["100%", ["100% Sure"]],
    ["a_b", ["100% Sure"]],
    ["%", []],
    ["_", []],
    ["ovelace", []],
    ["example.test", []],
    ["adalbert", []],
    ["elsewhere", []],
  ])("search %j finds %j (prefix of a name, a word of it, or the email; case-insensitive)", async (query, names) => {
    const found = await callMcp<MemberPage>(mcp, "members", { action: "search", query });
    expect(found.members.map((m) => m.name)).toEqual(names);
    expect(found.nextCursor).toBeNull();
  });

  test("search pages too, and bad parameters are VALIDATION_FAILED", async () => {
    const first = await callMcp<MemberPage>(mcp, "members", { action: "search", query: "a", limit: 1 });
    expect(first.members.map((m) => m.name)).toEqual(["100% Sure"]);
    const second = await callMcp<MemberPage>(mcp, "members", { action: "search", query: "a", limit: 1, cursor: first.nextCursor });
    expect(second.members.map((m) => m.name)).toEqual(["Ada Lovelace"]);
    expect(second.nextCursor).toBeNull();

    for (const args of [
      { action: "search", query: "" },
      { action: "search", query: "   " },
      { action: "search", query: "x".repeat(201) },
      { action: "search" },
      { action: "list", limit: 0 },
      { action: "list", cursor: "not-a-cursor" },
      { action: "list", extra: true },
      { action: "invite" },
    ]) {
      expect((await callMcpError(mcp, "members", args)).code, JSON.stringify(args)).toBe("VALIDATION_FAILED");
    }
  });

  test("get looks people up by id, by name; ids outside the workspace (or of nobody) are left out", async () => {
    const found = await callMcp<MemberPage>(mcp, "members", {
      action: "get",
      userIds: [owner.userId, outsiderId, randomUUID(), grace.userId, owner.userId],
    });
    expect(found.members.map((m) => m.name)).toEqual(["Grace Hopper", "Olive Owner"]);
    expect(found.members.find((m) => m.userId === owner.userId)).toEqual({
      userId: owner.userId,
      name: "Olive Owner",
      email: "olive@example.test",
      role: "owner",
    });
    expect(found.nextCursor).toBeNull();
    expect(JSON.stringify(found)).not.toContain(outsiderId);
    for (const args of [
      { action: "get", userIds: [] },
      { action: "get", userIds: ["not-a-uuid"] },
      { action: "get", userIds: Array.from({ length: 201 }, () => randomUUID()) },
      { action: "get" },
    ]) {
      expect((await callMcpError(mcp, "members", args)).code, JSON.stringify(args).slice(0, 80)).toBe("VALIDATION_FAILED");
    }
  });

  test("the same tool is a tRPC query", async () => {
    const page = (await server.trpcClient(ada.token).members.query({ action: "search", query: "grace" })) as MemberPage;
    expect(page.members.map((m) => m.userId)).toEqual([grace.userId]);
  });
});

describe("roles", () => {
  test("an owner changes roles; the new role applies at once", async () => {
    const result = (await as(owner).workspace({ action: "change_role", userId: ada.userId, role: "admin" })) as {
      member: Member;
      previousRole: string;
      changed: boolean;
    };
    expect(result).toMatchObject({ previousRole: "member", changed: true, member: { userId: ada.userId, role: "admin" } });
    expect((await rolesByEmail())["ada@example.test"]).toBe("admin");
    const adaList = (await as({ ...ada, actor: { ...ada.actor, role: "admin" } }).workspace({ action: "list_members" })) as {
      viewer: { role: string; canManage: boolean; assignableRoles: string[] };
    };
    expect(adaList.viewer).toMatchObject({ role: "admin", canManage: true, assignableRoles: ["member", "guest"] });
    ada = { ...ada, actor: { ...ada.actor, role: "admin" } };
  });

  test("admins change members and guests, but not owners or admins, and cannot make admins", async () => {
    await as(ada).workspace({ action: "change_role", userId: grace.userId, role: "guest" });
    expect((await rolesByEmail())["grace.hopper@example.test"]).toBe("guest");
    await as(ada).workspace({ action: "change_role", userId: grace.userId, role: "member" });

    expect(await codeOf(as(ada).workspace({ action: "change_role", userId: grace.userId, role: "admin" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(as(ada).workspace({ action: "change_role", userId: grace.userId, role: "owner" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(as(ada).workspace({ action: "change_role", userId: owner.userId, role: "member" }))).toBe("PERMISSION_DENIED");
    expect(await codeOf(as(ada).workspace({ action: "remove_member", userId: owner.userId }))).toBe("PERMISSION_DENIED");
    // Not even themselves: an admin's role is an owner's call.
    expect(await codeOf(as(ada).workspace({ action: "change_role", userId: ada.userId, role: "member" }))).toBe("PERMISSION_DENIED");
    expect((await rolesByEmail())["olive@example.test"]).toBe("owner");
  });

  test("members and guests manage nobody", async () => {
    for (const action of [
      { action: "change_role", userId: percent.userId, role: "guest" },
      { action: "remove_member", userId: percent.userId },
      { action: "create_invite", role: "guest" },
      { action: "list_invites" },
      { action: "revoke_invite", inviteId: randomUUID() },
    ] as const) {
      expect(await codeOf(as(grace).workspace(action)), action.action).toBe("PERMISSION_DENIED");
    }
    // …but every member may see who is in the workspace.
    const listed = (await as(grace).workspace({ action: "list_members" })) as { members: Member[]; viewer: { canManage: boolean } };
    expect(listed.members).toHaveLength(4);
    expect(listed.viewer.canManage).toBe(false);
  });

  test("the workspace keeps at least one owner", async () => {
    expect(await codeOf(as(owner).workspace({ action: "change_role", userId: owner.userId, role: "admin" }))).toBe("LAST_OWNER");
    expect(await codeOf(as(owner).workspace({ action: "remove_member", userId: owner.userId }))).toBe("LAST_OWNER");
    // Keeping one's own role is no change, so it is fine even for the last owner.
    expect(await as(owner).workspace({ action: "change_role", userId: owner.userId, role: "owner" })).toMatchObject({ changed: false });

    // With a second owner, either may step down — but two owners demoting each other at once leave one owner.
    await as(owner).workspace({ action: "change_role", userId: ada.userId, role: "owner" });
    const adaOwner = { ...ada, actor: { ...ada.actor, role: "owner" as const } };
    const outcomes = await Promise.allSettled([
      as(owner).workspace({ action: "change_role", userId: ada.userId, role: "member" }),
      as(adaOwner).workspace({ action: "change_role", userId: owner.userId, role: "member" }),
    ]);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const failed = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(["LAST_OWNER", "PERMISSION_DENIED"]).toContain((failed.reason as { cause?: { code?: string } }).cause?.code);
    const roles = await rolesByEmail();
    expect([roles["olive@example.test"], roles["ada@example.test"]].filter((r) => r === "owner")).toHaveLength(1);

    // Put things back: Olive owner, Ada admin.
    const remaining = roles["olive@example.test"] === "owner" ? owner : adaOwner;
    const demoted = remaining === owner ? ada : owner;
    await as(remaining).workspace({ action: "change_role", userId: demoted.userId, role: "owner" });
    await as(owner).workspace({ action: "change_role", userId: ada.userId, role: "admin" });
    expect(await rolesByEmail()).toMatchObject({ "olive@example.test": "owner", "ada@example.test": "admin" });
  });

  test("unknown members and bad input", async () => {
    expect(await codeOf(as(owner).workspace({ action: "change_role", userId: randomUUID(), role: "guest" }))).toBe("NOT_FOUND");
    expect(await codeOf(as(owner).workspace({ action: "change_role", userId: outsiderId, role: "guest" }))).toBe("NOT_FOUND");
    expect(await codeOf(as(owner).workspace({ action: "remove_member", userId: outsiderId }))).toBe("NOT_FOUND");
    expect(await codeOf(as(owner).workspace(asSent({ action: "change_role", userId: grace.userId, role: "emperor" })))).toBe(
      "VALIDATION_FAILED",
    );
    expect(await codeOf(as(owner).workspace({ action: "change_role", userId: "nope", role: "guest" }))).toBe("VALIDATION_FAILED");
    expect(await codeOf(as(owner).workspace(asSent({ action: "create_invite", role: "owner" })))).toBe("VALIDATION_FAILED");
    expect(await codeOf(as(owner).workspace({ action: "create_invite", role: "member", expiresInDays: 0 }))).toBe("VALIDATION_FAILED");
    expect(await codeOf(as(owner).workspace({ action: "create_invite", role: "member", email: "not an email" }))).toBe("VALIDATION_FAILED");
  });
});

describe("removing a member", () => {
  test("ends their access at once and keeps what they wrote", async () => {
    const leaver = await server.createUser("lee@example.test", "Lee Leaver");
    const leaverMcp = await server.mcpClient(leaver.token);
    const created = await callMcp<{ documentId: string; commitId: string }>(leaverMcp, "documents", {
      action: "create",
      path: "notes/lee",
      sections: [{ name: "Intro", content: [{ blockType: "text", text: "Written by Lee." }] }],
    });

    await as(ada).workspace({ action: "remove_member", userId: leaver.userId });
    expect(await rolesByEmail()).not.toHaveProperty("lee@example.test");
    expect(await mcpStatus(leaver.token)).toBe(401);
    await expect(leaverMcp.callTool({ name: "members", arguments: { action: "list" } })).rejects.toThrow();
    await leaverMcp.close().catch(() => {});

    const log = await callMcp<{ commits: Array<{ commitId: string; authorId: string; authorName: string }> }>(mcp, "documents", {
      action: "log",
      documentId: created.documentId,
    });
    expect(log.commits[0]).toMatchObject({ commitId: created.commitId, authorId: leaver.userId, authorName: "Lee Leaver" });
    expect(await codeOf(as(owner).workspace({ action: "remove_member", userId: leaver.userId }))).toBe("NOT_FOUND");
  });
});

describe("invites", () => {
  const tokenOf = (url: string) => url.split("/invite/")[1]!;

  test("create returns a link once; only its hash is stored; pending invites list it", async () => {
    const created = (await as(owner).workspace({ action: "create_invite", role: "member" })) as {
      url: string;
      token: string;
      invite: { inviteId: string; role: string; email: string | null; expiresAt: string; status: string };
    };
    expect(created.url).toMatch(/^http:\/\/localhost:\d+\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(tokenOf(created.url)).toBe(created.token);
    expect(created.invite).toMatchObject({ role: "member", email: null, status: "pending" });
    const days = (Date.parse(created.invite.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const rows = await server.db.select().from(invites);
    const row = rows.find((r) => r.id === created.invite.inviteId)!;
    expect(row.tokenHash).toBe(sha256Hex(created.token));
    expect(JSON.stringify(rows)).not.toContain(created.token);

    const pending = (await as(ada).workspace({ action: "list_invites" })) as {
      invites: Array<{ inviteId: string; createdByName: string }>;
    };
    expect(pending.invites.find((i) => i.inviteId === created.invite.inviteId)).toMatchObject({ createdByName: "Olive Owner" });
    expect(JSON.stringify(pending)).not.toContain(created.token);
  });

  test("admins invite members and guests but not admins; owners invite admins", async () => {
    expect(await codeOf(as(ada).workspace({ action: "create_invite", role: "admin" }))).toBe("PERMISSION_DENIED");
    await as(ada).workspace({ action: "create_invite", role: "guest", expiresInDays: 1 });
    await as(owner).workspace({ action: "create_invite", role: "admin" });
    expect(await codeOf(as(owner).workspace({ action: "create_invite", role: "member", email: "GRACE.HOPPER@example.test" }))).toBe(
      "ALREADY_MEMBER",
    );
  });

  test("a visitor signs up through a link and joins with its role; the link then reads as used", async () => {
    const { url } = (await as(ada).workspace({ action: "create_invite", role: "guest" })) as { url: string };
    const token = tokenOf(url);
    expect(await inviteInfo(server.db, token, new Date())).toMatchObject({
      state: "valid",
      invite: { role: "guest", email: null, invitedByName: "Ada Lovelace" },
    });

    const joined = await acceptInviteAsNewUser(
      server.db,
      token,
      { name: "Gus Guest", email: "Gus@Example.test", password: "long enough" },
      new Date(),
    );
    expect(joined.email).toBe("gus@example.test");
    expect((await rolesByEmail())["gus@example.test"]).toBe("guest");
    const found = await callMcp<MemberPage>(mcp, "members", { action: "search", query: "gus" });
    expect(found.members).toEqual([{ userId: joined.id, name: "Gus Guest", email: "gus@example.test", role: "guest" }]);

    expect((await inviteInfo(server.db, token, new Date())).state).toBe("used");
    const again = acceptInviteAsNewUser(
      server.db,
      token,
      { name: "Second", email: "second@example.test", password: "long enough" },
      new Date(),
    );
    await expect(again).rejects.toMatchObject({ code: "INVITE_USED" });
    await expect(acceptInvite(server.db, token, grace.userId, new Date())).rejects.toMatchObject({ code: "INVITE_USED" });
    const pending = (await as(owner).workspace({ action: "list_invites" })) as { invites: Array<{ inviteId: string }> };
    const rows = await server.db.select().from(invites);
    const used = rows.find((r) => r.tokenHash === sha256Hex(token))!;
    expect(used.acceptedBy).toBe(joined.id);
    expect(pending.invites.map((i) => i.inviteId)).not.toContain(used.id);
  });

  test("a signed-in user who is not a member joins; a member is told they already belong", async () => {
    const returning = await server.createUser("rita@example.test", "Rita Returner");
    await as(owner).workspace({ action: "remove_member", userId: returning.userId });
    const { url } = (await as(owner).workspace({ action: "create_invite", role: "admin", email: "rita@example.test" })) as { url: string };
    const token = tokenOf(url);

    await expect(acceptInvite(server.db, token, grace.userId, new Date())).rejects.toMatchObject({ code: "ALREADY_MEMBER" });
    expect((await inviteInfo(server.db, token, new Date(), grace.userId)).viewer).toEqual({ alreadyMember: true, emailMatches: false });
    expect((await inviteInfo(server.db, token, new Date(), returning.userId)).viewer).toEqual({ alreadyMember: false, emailMatches: true });

    expect(await acceptInvite(server.db, token, returning.userId, new Date())).toMatchObject({ role: "admin" });
    expect((await rolesByEmail())["rita@example.test"]).toBe("admin");
    expect(await mcpStatus(returning.token)).toBe(200);
  });

  test("an invite naming an email admits only that email", async () => {
    const { url } = (await as(owner).workspace({ action: "create_invite", role: "member", email: "Zed@Example.test" })) as { url: string };
    const token = tokenOf(url);
    expect((await inviteInfo(server.db, token, new Date())).invite?.email).toBe("zed@example.test");
    await expect(
      acceptInviteAsNewUser(server.db, token, { name: "Mallory", email: "mallory@example.test", password: "long enough" }, new Date()),
    ).rejects.toMatchObject({ code: "INVITE_EMAIL_MISMATCH" });
    const outsider = await server.createUser("olga@example.test", "Olga");
    await as(owner).workspace({ action: "remove_member", userId: outsider.userId });
    await expect(acceptInvite(server.db, token, outsider.userId, new Date())).rejects.toMatchObject({ code: "INVITE_EMAIL_MISMATCH" });
    // Nothing was created by the refused attempts.
    expect(await rolesByEmail()).not.toHaveProperty("mallory@example.test");

    const zed = await acceptInviteAsNewUser(
      server.db,
      token,
      { name: "Zed", email: "ZED@example.test", password: "long enough" },
      new Date(),
    );
    expect((await rolesByEmail())[zed.email]).toBe("member");
  });

  test("expired, revoked and unknown links are refused with their own codes", async () => {
    const expiring = (await as(owner).workspace({ action: "create_invite", role: "member", expiresInDays: 1 })) as { url: string };
    const later = new Date(Date.now() + 2 * 86_400_000);
    expect((await inviteInfo(server.db, tokenOf(expiring.url), later)).state).toBe("expired");
    await expect(
      acceptInviteAsNewUser(server.db, tokenOf(expiring.url), { name: "Late", email: "late@example.test", password: "long enough" }, later),
    ).rejects.toMatchObject({ code: "INVITE_EXPIRED" });

    const revoked = (await as(owner).workspace({ action: "create_invite", role: "member" })) as {
      url: string;
      invite: { inviteId: string };
    };
    const result = (await as(ada).workspace({ action: "revoke_invite", inviteId: revoked.invite.inviteId })) as {
      invite: { status: string };
    };
    expect(result.invite.status).toBe("revoked");
    const listed = (await as(owner).workspace({ action: "list_invites" })) as { invites: Array<{ inviteId: string }> };
    expect(listed.invites.map((i) => i.inviteId)).not.toContain(revoked.invite.inviteId);
    expect((await inviteInfo(server.db, tokenOf(revoked.url), new Date())).state).toBe("revoked");
    await expect(
      acceptInviteAsNewUser(
        server.db,
        tokenOf(revoked.url),
        { name: "Rev", email: "rev@example.test", password: "long enough" },
        new Date(),
      ),
    ).rejects.toMatchObject({ code: "INVITE_REVOKED" });
    expect(await codeOf(as(owner).workspace({ action: "revoke_invite", inviteId: randomUUID() }))).toBe("NOT_FOUND");

    for (const token of ["A".repeat(43), "short", "../../etc"]) {
      expect((await inviteInfo(server.db, token, new Date())).state).toBe("not_found");
      await expect(acceptInvite(server.db, token, grace.userId, new Date())).rejects.toMatchObject({ code: "NOT_FOUND" });
    }
  });

  test("sign-up mistakes change nothing: short password, taken email", async () => {
    const { url } = (await as(owner).workspace({ action: "create_invite", role: "member" })) as { url: string };
    const token = tokenOf(url);
    await expect(
      acceptInviteAsNewUser(server.db, token, { name: "Shorty", email: "shorty@example.test", password: "short" }, new Date()),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await expect(
      acceptInviteAsNewUser(server.db, token, { name: "Copy", email: "ada@example.test", password: "long enough" }, new Date()),
    ).rejects.toMatchObject({ code: "EMAIL_TAKEN" });
    expect((await inviteInfo(server.db, token, new Date())).state).toBe("valid");
  });

  test("two people racing for one link: exactly one joins", async () => {
    const { url } = (await as(owner).workspace({ action: "create_invite", role: "member" })) as { url: string };
    const token = tokenOf(url);
    const outcomes = await Promise.allSettled(
      ["race1", "race2", "race3"].map((n) =>
        acceptInviteAsNewUser(server.db, token, { name: n, email: `${n}@example.test`, password: "long enough" }, new Date()),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes) if (o.status === "rejected") expect(o.reason).toMatchObject({ code: "INVITE_USED" });
    const roles = await rolesByEmail();
    expect(["race1", "race2", "race3"].filter((n) => roles[`${n}@example.test`])).toHaveLength(1);
  });

  test("the CLI creates links in the name of the first owner", async () => {
    const created = await createInviteFromCli(
      server.db,
      { role: "guest", email: "cli@example.test", expiresInDays: 3 },
      "https://quire.example.com/",
      new Date(),
    );
    expect(created.url).toMatch(/^https:\/\/quire\.example\.com\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(created.invite).toMatchObject({ role: "guest", email: "cli@example.test", createdBy: owner.userId });
    await expect(createInviteFromCli(server.db, { role: "emperor" }, "http://x", new Date())).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
  });
});

describe("API tokens", () => {
  test("created in a browser session, listed without the secret, revoked: MCP and tRPC refuse it at once", async () => {
    const web = as(grace);
    const created = (await web.apiTokens({ action: "create", label: "grace's agent", expiresInDays: 30 })) as {
      token: string;
      tokenInfo: { tokenId: string; label: string; status: string; lastUsedAt: string | null };
    };
    expect(created.token).toMatch(/^qk_[A-Za-z0-9_-]{43}$/);
    expect(created.tokenInfo).toMatchObject({ label: "grace's agent", status: "active", lastUsedAt: null });

    const agent = await server.mcpClient(created.token);
    expect((await callMcp<MemberPage>(agent, "members", { action: "search", query: "olive" })).members).toHaveLength(1);
    const trpc = server.trpcClient(created.token);
    expect(((await trpc.members.query({ action: "list", limit: 1 })) as MemberPage).members).toHaveLength(1);

    const listed = await listApiTokensForEmail(server.db, "Grace.Hopper@example.test", new Date());
    const mine = listed.find((t) => t.tokenId === created.tokenInfo.tokenId)!;
    expect(mine.lastUsedAt).not.toBeNull();
    expect(mine.status).toBe("active");
    expect(Object.keys(mine).sort()).toEqual(["createdAt", "expiresAt", "label", "lastUsedAt", "revokedAt", "status", "tokenId"]);
    expect(JSON.stringify(listed)).not.toContain(created.token);
    expect(JSON.stringify(listed)).not.toContain(sha256Hex(created.token));

    const revoked = await revokeApiTokenById(server.db, created.tokenInfo.tokenId, new Date());
    expect(revoked).toMatchObject({ alreadyRevoked: false, token: { status: "revoked" } });
    // The very next call on the already-connected client is refused.
    await expect(agent.callTool({ name: "members", arguments: { action: "list" } })).rejects.toThrow(/UNAUTHENTICATED/);
    expect(await mcpStatus(created.token)).toBe(401);
    await expect(trpc.members.query({ action: "list" })).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
    await agent.close().catch(() => {});

    expect((await revokeApiTokenById(server.db, created.tokenInfo.tokenId, new Date())).alreadyRevoked).toBe(true);
    expect(
      (await listApiTokensForEmail(server.db, "grace.hopper@example.test", new Date())).find(
        (t) => t.tokenId === created.tokenInfo.tokenId,
      ),
    ).toMatchObject({
      status: "revoked",
    });
    await expect(revokeApiTokenById(server.db, randomUUID(), new Date())).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(revokeApiTokenById(server.db, "nope", new Date())).rejects.toMatchObject({ code: "NOT_FOUND" });
  });

  test("revoking from the settings action works the same; someone else's token reads as not found", async () => {
    const created = (await as(grace).apiTokens({ action: "create", label: "short-lived" })) as {
      token: string;
      tokenInfo: { tokenId: string };
    };
    expect(await mcpStatus(created.token)).toBe(200);
    expect(await codeOf(as(owner).apiTokens({ action: "revoke", tokenId: created.tokenInfo.tokenId }))).toBe("NOT_FOUND");
    expect(await mcpStatus(created.token)).toBe(200);
    const revoked = (await as(grace).apiTokens({ action: "revoke", tokenId: created.tokenInfo.tokenId })) as {
      tokenInfo: { status: string };
    };
    expect(revoked.tokenInfo.status).toBe("revoked");
    expect(await mcpStatus(created.token)).toBe(401);
    const list = (await as(grace).apiTokens({ action: "list" })) as { tokens: Array<{ tokenId: string; status: string }> };
    expect(list.tokens.find((t) => t.tokenId === created.tokenInfo.tokenId)!.status).toBe("revoked");
  });

  test("a token cannot mint tokens; it may list its owner's", async () => {
    const trpc = server.trpcClient(grace.token);
    const failure = await trpc.apiTokens
      .mutate({ action: "create", label: "from a token" })
      .catch((e: { data?: { error?: { code: string } } }) => e);
    expect((failure as { data: { error: { code: string } } }).data.error.code).toBe("PERMISSION_DENIED");
    const listed = (await trpc.apiTokens.mutate({ action: "list" })) as { tokens: unknown[] };
    expect(listed.tokens.length).toBeGreaterThan(0);
    // In-process, the same rule holds for any agent call.
    await expect(
      runTool(
        apiTokensTool,
        { db: server.db, actor: { ...grace.actor, principal: "agent" }, clock: () => new Date() },
        { action: "create", label: "x" },
      ),
    ).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
  });

  test("an expired token gets 401", async () => {
    const past = await issueApiTokenForUser(
      server.db,
      { userId: grace.userId, label: "expired", expiresAt: new Date(Date.now() - 1_000) },
      new Date(),
    );
    expect(await mcpStatus(past.token)).toBe(401);
    await expect(server.trpcClient(past.token).members.query({ action: "list" })).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });

    const soon = await issueApiTokenForUser(
      server.db,
      { userId: grace.userId, label: "soon", expiresAt: new Date(Date.now() + 1_500) },
      new Date(),
    );
    expect(await mcpStatus(soon.token)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_700));
    expect(await mcpStatus(soon.token)).toBe(401);
    const listed = await listApiTokensForEmail(server.db, "grace.hopper@example.test", new Date());
    expect(listed.find((t) => t.tokenId === soon.tokenId)!.status).toBe("expired");
  });
});

describe("CSRF on cookie-authenticated tRPC calls", () => {
  let cookie: string;
  const input = JSON.stringify({ action: "list_members" });

  beforeAll(async () => {
    const secret = await ensureAuthSecret(server.db, undefined);
    const session = await encode({ token: { sub: owner.userId, name: "Olive Owner", email: "olive@example.test" }, secret });
    cookie = `next-auth.session-token=${session}`;
  });

  async function post(headers: Record<string, string>, body = input) {
    const res = await fetch(`${server.url}/api/trpc/workspace`, { method: "POST", headers: { cookie, ...headers }, body });
    return { status: res.status, body: (await res.json()) as { error?: { code?: string }; result?: { data?: { members?: unknown[] } } } };
  }

  test("same-origin JSON posts work, with or without an Origin header", async () => {
    const withOrigin = await post({ "content-type": "application/json", origin: server.url });
    expect(withOrigin.status).toBe(200);
    expect(withOrigin.body.result?.data?.members?.length).toBeGreaterThan(0);
    expect((await post({ "content-type": "application/json; charset=utf-8" })).status).toBe(200);
    const query = await fetch(`${server.url}/api/trpc/members?input=${encodeURIComponent(JSON.stringify({ action: "list" }))}`, {
      headers: { cookie, origin: server.url },
    });
    expect(query.status).toBe(200);
  });

  test.each(["text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""])(
    "a post with Content-Type %j is refused with 403 CSRF_REJECTED",
    async (contentType) => {
      const refused = await post(contentType ? { "content-type": contentType } : {});
      expect(refused.status).toBe(403);
      expect(refused.body.error?.code).toBe("CSRF_REJECTED");
    },
  );

  test("a foreign Origin is refused, for posts and queries alike; so is a cross-site fetch", async () => {
    for (const origin of ["http://evil.example", "null", `${server.url}.evil.example`, "http://localhost:1"]) {
      const refused = await post({ "content-type": "application/json", origin });
      expect(refused.status, origin).toBe(403);
      expect(refused.body.error?.code).toBe("CSRF_REJECTED");
    }
    const query = await fetch(`${server.url}/api/trpc/members?input=${encodeURIComponent(JSON.stringify({ action: "list" }))}`, {
      headers: { cookie, origin: "http://evil.example" },
    });
    expect(query.status).toBe(403);
    expect((await post({ "content-type": "application/json", "sec-fetch-site": "cross-site" })).status).toBe(403);
    // Refused requests changed nothing (a state-changing one, to be sure).
    const change = await fetch(`${server.url}/api/trpc/workspace`, {
      method: "POST",
      headers: { cookie, "content-type": "text/plain" },
      body: JSON.stringify({ action: "create_invite", role: "admin", email: "csrf@example.test" }),
    });
    expect(change.status).toBe(403);
    const pending = (await as(owner).workspace({ action: "list_invites" })) as { invites: Array<{ email: string | null }> };
    expect(pending.invites.map((i) => i.email)).not.toContain("csrf@example.test");
  });

  test("bearer-token calls are not cookie calls: no Origin rule applies", async () => {
    const res = await fetch(`${server.url}/api/trpc/workspace`, {
      method: "POST",
      headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json", origin: "http://elsewhere.example" },
      body: input,
    });
    expect(res.status).toBe(200);
  });

  test("without a valid session the request is simply unauthenticated", async () => {
    const res = await fetch(`${server.url}/api/trpc/workspace`, {
      method: "POST",
      headers: { cookie: "next-auth.session-token=forged", "content-type": "application/json", origin: "http://evil.example" },
      body: input,
    });
    expect(res.status).toBe(401);
  });
});
