/**
 * Managing documents and branches through the real faces (an MCP SDK client
 * with API tokens, tRPC as a signed-in person): deleted documents listed and
 * restored, branches deleted under their rules, what a token may do, hidden
 * documents never named, and the live rooms of a deleted branch told.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { drafts, draftUpdates } from "@/db/schema";
import type { AppRouter } from "@/server/api/router";
import { text } from "../helpers/blocks";
import { connectLive, type LiveClient, roomName, waitFor } from "../helpers/collab";
import { type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { type QuireProcess, startQuireProcess } from "../helpers/quire-process";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let ownerMcp: Client;
let memberMcp: Client;
const clients: LiveClient[] = [];

type Deleted = { deletedDocuments: Array<{ documentId: string; path: string; deletedBy: { userId: string; name: string | null } }> };

const asOwner = <T = Record<string, unknown>>(tool: "documents" | "merge_requests", args: Record<string, unknown>) =>
  server.callToolAsSent(tool, owner.userId, args) as Promise<T>;

async function createDocument(path: string, extra: Record<string, unknown> = {}) {
  return asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
    action: "create",
    path,
    sections: [{ name: "Body", content: [text(`About ${path}`)] }],
    ...extra,
  });
}

/** Deletes a document the way the server asks: on a branch, merged by a merge request. */
async function deleteByMerge(documentId: string, branchName = "bin") {
  await asOwner("documents", { action: "create_branch", documentId, branchName });
  await asOwner("documents", { action: "delete", documentId, branchName });
  const request = await asOwner<{ mergeRequestId: string }>("merge_requests", {
    action: "create",
    documentId,
    sourceBranch: branchName,
    targetBranch: "main",
    title: "Delete it",
  });
  await asOwner("merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
}

/** The code of a refused tRPC call. */
async function trpcRefusal(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TRPCClientError);
  return ((error as TRPCClientError<never>).data as { error?: { code?: string } } | undefined)?.error?.code ?? "";
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  ownerMcp = await server.mcpClient(owner.token);
  memberMcp = await server.mcpClient(member.token);
});

afterAll(async () => {
  for (const client of clients) client.close();
  await ownerMcp?.close();
  await memberMcp?.close();
  await server?.close();
});

describe("deleted documents", () => {
  test("a merged deletion is listed with who deleted it, and restore brings it back on main as a commit", async () => {
    const { documentId } = await createDocument("manage/typo doc");
    await deleteByMerge(documentId);
    const person = server.trpcClient(member.token);
    const listed = await callMcp<Deleted>(memberMcp, "documents", { action: "list_deleted", pathPrefix: "manage/" });
    expect(listed.deletedDocuments.map((d) => [d.documentId, d.path, d.deletedBy.name])).toEqual([
      [documentId, "manage/typo doc", "Olive Owner"],
    ]);
    // Gone from the live list.
    const live = (await person.documents.mutate({ action: "list", pathPrefix: "manage/" })) as { documents: unknown[] };
    expect(live.documents).toHaveLength(0);

    // A member with edit, through an API token over MCP: restoring loses nothing, so it goes straight to the unprotected main.
    const restored = await callMcp<{ changed: boolean; commitId: string; path: string }>(memberMcp, "documents", {
      action: "restore",
      documentId,
      branchName: "main",
    });
    expect(restored).toMatchObject({ changed: true, path: "manage/typo doc" });
    const log = await callMcp<{ commits: Array<{ commitId: string; message: string }> }>(memberMcp, "documents", {
      action: "log",
      documentId,
      limit: 1,
    });
    expect(log.commits[0]).toMatchObject({ commitId: restored.commitId, message: 'Restore document "manage/typo doc"' });
    expect((await callMcp<Deleted>(memberMcp, "documents", { action: "list_deleted", pathPrefix: "manage/" })).deletedDocuments).toEqual(
      [],
    );
    const read = await callMcp<{ sections: Array<{ name: string }> }>(memberMcp, "read", { documentId });
    expect(read.sections.map((s) => s.name)).toEqual(["Body"]);
    // Restoring what is not deleted changes nothing.
    expect(await callMcp(memberMcp, "documents", { action: "restore", documentId, branchName: "main" })).toMatchObject({ changed: false });
  });

  test("PATH_TAKEN when a live document took the path, with newPath as the way out", async () => {
    const { documentId } = await createDocument("manage/taken");
    await deleteByMerge(documentId);
    await createDocument("manage/taken");
    const refusal = await callMcpError(ownerMcp, "documents", { action: "restore", documentId, branchName: "main" });
    expect(refusal.code).toBe("PATH_TAKEN");
    expect(refusal.message).toContain("newPath");
    expect(
      (await callMcp<Deleted>(ownerMcp, "documents", { action: "list_deleted", pathPrefix: "manage/taken" })).deletedDocuments,
    ).toHaveLength(1);
    const restored = await callMcp(ownerMcp, "documents", { action: "restore", documentId, branchName: "main", newPath: "manage/taken-2" });
    expect(restored).toMatchObject({ changed: true, path: "manage/taken-2" });
    const got = await callMcp<{ path: string }>(ownerMcp, "documents", { action: "get", documentId });
    expect(got.path).toBe("manage/taken-2");
  });

  test("on a protected default branch restore is refused and goes through a branch and a merge request", async () => {
    const { documentId } = await createDocument("manage/protected");
    await deleteByMerge(documentId);
    await asOwner("merge_requests", { action: "set_required_approvals", documentId, requiredApprovals: 1 });
    const refusal = await callMcpError(ownerMcp, "documents", { action: "restore", documentId, branchName: "main" });
    expect(refusal.code).toBe("DEFAULT_BRANCH_PROTECTED");
    await callMcp(ownerMcp, "documents", { action: "create_branch", documentId, branchName: "undelete" });
    expect(await callMcp(ownerMcp, "documents", { action: "restore", documentId, branchName: "undelete" })).toMatchObject({
      changed: true,
    });
    // Still deleted on main until that branch is merged.
    const listed = await callMcp<Deleted>(ownerMcp, "documents", { action: "list_deleted", pathPrefix: "manage/protected" });
    expect(listed.deletedDocuments.map((d) => d.documentId)).toEqual([documentId]);
  });

  test("a document hidden from someone is never listed as deleted to them; an agent is capped by aiAccess", async () => {
    const secret = await createDocument("manage/secret");
    await asOwner("documents", { action: "set_permissions", documentId: secret.documentId, defaultPermission: "none" });
    await deleteByMerge(secret.documentId);
    const noAi = await createDocument("manage/no-ai");
    await asOwner("documents", { action: "set_permissions", documentId: noAi.documentId, aiAccess: "none" });
    await deleteByMerge(noAi.documentId);

    const asMemberPerson = (await server
      .trpcCaller(member)
      .documents({ action: "list_deleted", pathPrefix: "manage/", limit: 1 })) as Deleted & { nextCursor: string | null };
    const everyPage = [...asMemberPerson.deletedDocuments];
    let cursor = asMemberPerson.nextCursor;
    while (cursor) {
      const page = (await server
        .trpcCaller(member)
        .documents({ action: "list_deleted", pathPrefix: "manage/", limit: 1, cursor })) as Deleted & {
        nextCursor: string | null;
      };
      everyPage.push(...page.deletedDocuments);
      cursor = page.nextCursor;
    }
    const memberSees = everyPage.map((d) => d.documentId);
    expect(memberSees).toContain(noAi.documentId);
    expect(memberSees).not.toContain(secret.documentId);
    // The owner's own token is an agent: the document AI may not see is not listed to it; in person it is.
    const ownerToken = await callMcp<Deleted>(ownerMcp, "documents", { action: "list_deleted", pathPrefix: "manage/" });
    expect(ownerToken.deletedDocuments.map((d) => d.documentId)).toContain(secret.documentId);
    expect(ownerToken.deletedDocuments.map((d) => d.documentId)).not.toContain(noAi.documentId);
    const ownerPerson = (await server.trpcCaller(owner).documents({ action: "list_deleted", pathPrefix: "manage/" })) as Deleted;
    expect(ownerPerson.deletedDocuments.map((d) => d.documentId)).toContain(noAi.documentId);
    // Restoring a hidden one is NOT_FOUND, worded as for a missing id.
    const hidden = await callMcpError(memberMcp, "documents", { action: "restore", documentId: secret.documentId, branchName: "main" });
    expect(hidden.code).toBe("NOT_FOUND");
  });
});

describe("delete_branch", () => {
  let documentId: string;
  let sectionId: string;

  beforeAll(async () => {
    const doc = await createDocument("manage/branches");
    documentId = doc.documentId;
    sectionId = doc.sectionIds[0]!;
  });

  const branchNames = async () =>
    (await asOwner<{ branches: Array<{ name: string }> }>("documents", { action: "list_branches", documentId })).branches.map(
      (b) => b.name,
    );

  test("never the default branch, never one with an open merge request (source or target), never a missing one", async () => {
    expect((await callMcpError(ownerMcp, "documents", { action: "delete_branch", documentId, branchName: "main" })).code).toBe(
      "DEFAULT_BRANCH_PROTECTED",
    );
    await asOwner("documents", { action: "create_branch", documentId, branchName: "source" });
    await asOwner("documents", { action: "create_branch", documentId, branchName: "target" });
    await server.callTool("sections", owner.userId, {
      action: "update",
      documentId,
      branchName: "source",
      sectionId,
      content: [text("changed")],
    });
    const request = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "source",
      targetBranch: "target",
      title: "Between branches",
    });
    for (const branchName of ["source", "target"]) {
      const refusal = await callMcpError(ownerMcp, "documents", { action: "delete_branch", documentId, branchName });
      expect(refusal.code).toBe("BRANCH_IN_USE");
      expect(refusal.details?.mergeRequestIds).toEqual([request.mergeRequestId]);
    }
    const person = server.trpcClient(owner.token);
    expect(await trpcRefusal(person.documents.mutate({ action: "delete_branch", documentId, branchName: "source" }))).toBe("BRANCH_IN_USE");
    expect(await branchNames()).toEqual(["main", "source", "target"]);

    await asOwner("merge_requests", { action: "close", mergeRequestId: request.mergeRequestId });
    const deleted = await server.trpcCaller(owner).documents({ action: "delete_branch", documentId, branchName: "source" });
    expect(deleted).toMatchObject({ documentId, branchName: "source", discardedDraft: false });
    expect(await branchNames()).toEqual(["main", "target"]);
    expect((await callMcpError(ownerMcp, "documents", { action: "delete_branch", documentId, branchName: "source" })).code).toBe(
      "NOT_FOUND",
    );
    // The name is free again.
    await asOwner("documents", { action: "create_branch", documentId, branchName: "source" });
    expect(await branchNames()).toEqual(["main", "source", "target"]);
  });

  test("needs edit: a reader is refused, a hidden document is NOT_FOUND, a token is capped by aiAccess", async () => {
    const readable = await createDocument("manage/readable");
    await asOwner("documents", { action: "create_branch", documentId: readable.documentId, branchName: "b" });
    await asOwner("documents", { action: "set_permissions", documentId: readable.documentId, defaultPermission: "read" });
    const args = { action: "delete_branch", documentId: readable.documentId, branchName: "b" };
    expect((await callMcpError(memberMcp, "documents", args)).code).toBe("PERMISSION_DENIED");
    await asOwner("documents", { action: "set_permissions", documentId: readable.documentId, defaultPermission: "none" });
    expect((await callMcpError(memberMcp, "documents", args)).code).toBe("NOT_FOUND");
    await asOwner("documents", { action: "set_permissions", documentId: readable.documentId, defaultPermission: "edit", aiAccess: "read" });
    const capped = await callMcpError(memberMcp, "documents", args);
    expect(capped.code).toBe("PERMISSION_DENIED");
    expect(capped.message).toContain("aiAccess");
    // In person the member may; an API token may too once aiAccess allows edits (deleting a branch changes content, not access).
    await asOwner("documents", { action: "set_permissions", documentId: readable.documentId, aiAccess: "edit" });
    expect(await callMcp(memberMcp, "documents", args)).toMatchObject({ branchName: "b", discardedDraft: false });
  });

  test("uncommitted live edits are refused unless discardDraft, and the branch's open rooms are closed and told", async () => {
    await asOwner("documents", { action: "create_branch", documentId, branchName: "live" });
    const editor = await connectLive(server.url, roomName(documentId, "live", sectionId), { token: owner.token });
    const outline = await connectLive(server.url, roomName(documentId, "live"), { token: member.token });
    clients.push(editor, outline);
    const closes = [editor, outline].map(
      (client) =>
        new Promise<number>((resolve) =>
          client.provider.on("connection-close", (event: { code: number } | null) => {
            client.provider.shouldConnect = false;
            resolve(event?.code ?? 0);
          }),
        ),
    );
    editor.text().insert(0, "Unsaved: ");
    await expect
      .poll(
        async () =>
          (await asOwner<{ uncommittedChanges: boolean }>("documents", { action: "draft_status", documentId, branchName: "live" }))
            .uncommittedChanges,
      )
      .toBe(true);

    const refusal = await callMcpError(ownerMcp, "documents", { action: "delete_branch", documentId, branchName: "live" });
    expect(refusal.code).toBe("UNCOMMITTED_DRAFT");
    expect(refusal.message).toContain("discardDraft");
    expect(await branchNames()).toContain("live");

    const deleted = await callMcp(ownerMcp, "documents", { action: "delete_branch", documentId, branchName: "live", discardDraft: true });
    expect(deleted).toMatchObject({ branchName: "live", discardedDraft: true });
    expect(await Promise.all(closes)).toEqual([4410, 4410]);
    expect(await branchNames()).not.toContain("live");
    const key = and(eq(drafts.documentId, documentId), eq(drafts.branchName, "live"));
    expect(await server.db.select().from(drafts).where(key)).toEqual([]);
    expect(
      await server.db
        .select()
        .from(draftUpdates)
        .where(and(eq(draftUpdates.documentId, documentId), eq(draftUpdates.branchName, "live"))),
    ).toEqual([]);
    // A room of the deleted branch cannot be opened again; a branch made anew under the name starts clean.
    await asOwner("documents", { action: "create_branch", documentId, branchName: "live" });
    const fresh = await connectLive(server.url, roomName(documentId, "live", sectionId), { token: owner.token });
    clients.push(fresh);
    await waitFor(() => fresh.text().toString() === "About manage/branches", 5_000, "the new branch's own content");
  });
});

describe.skipIf(!testDatabaseUrl())("delete_branch with two processes on one Redis", () => {
  const processes: QuireProcess[] = [];

  afterAll(async () => {
    for (const p of processes) await p.stop("SIGTERM");
  });

  test("an editor connected to the other process is told too", async () => {
    // The server's own database (isolated for this file), which the two processes share.
    const databaseUrl = (server.database as TestDatabase).url!;
    processes.push(await startQuireProcess({ databaseUrl, redisUrl: "redis://127.0.0.1:6379" }));
    processes.push(await startQuireProcess({ databaseUrl, redisUrl: "redis://127.0.0.1:6379" }));
    const [one, two] = processes as [QuireProcess, QuireProcess];
    const doc = await createDocument("manage/two-processes");
    await asOwner("documents", { action: "create_branch", documentId: doc.documentId, branchName: "elsewhere" });
    const editor = await connectLive(two.url, roomName(doc.documentId, "elsewhere", doc.sectionIds[0]), { token: owner.token });
    clients.push(editor);
    const closed = new Promise<number>((resolve) =>
      editor.provider.on("connection-close", (event: { code: number } | null) => {
        editor.provider.shouldConnect = false;
        resolve(event?.code ?? 0);
      }),
    );
    // Deleted through the first process: the second hears of it through Redis.
    const onFirst = createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${one.url}/api/trpc`, headers: { authorization: `Bearer ${owner.token}` } })],
    });
    const deleted = await onFirst.documents.mutate({ action: "delete_branch", documentId: doc.documentId, branchName: "elsewhere" });
    expect(deleted).toMatchObject({ branchName: "elsewhere" });
    expect(await closed).toBe(4410);
  }, 60_000);
});
