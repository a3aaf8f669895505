/**
 * Issue 23, items 2 and 4, through the faces.
 *
 * An API token acts as an agent on MCP and tRPC alike, and an agent never
 * changes access: no section create or update with `defaultPermission` /
 * `aiAccess`, no revert that brings other overrides back, no merge (nor a
 * resolution of one) that changes a section's overrides — even with the
 * owner's token — while a person (a browser session) still sets overrides on
 * a non-default branch and merges them.
 *
 * A document that requires approvals protects its default branch: every
 * direct write to it (a person's or an agent's, a live draft's commit, a
 * revert, tags, properties, the document's own fields) is refused with
 * DEFAULT_BRANCH_PROTECTED and changes nothing, other branches take writes,
 * a merge request with its approval reaches it, and at 0 direct writes work again.
 */
import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isDomainError } from "@/server/core/errors";
import { connectLive, type LiveClient, roomName } from "../helpers/collab";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

const text = (t: string) => ({ blockType: "text" as const, text: t });
type Args = Record<string, unknown>;
// biome-ignore lint/suspicious/noExplicitAny: results are read field by field in each test
type Value = any;
type Outcome = { value: Value } | { error: { code: string; message: string } };

const PROCEDURES = { documents: "documents", sections: "sections", merge_requests: "mergeRequests", read: "read" } as const;
type Tool = keyof typeof PROCEDURES;

/** Who calls, through which face: every call answers an Outcome, so one test reads the same on each. */
interface Face {
  name: string;
  call(tool: Tool, args: Args): Promise<Outcome>;
}

let server: TestServer;
let owner: TestUser;
let rita: TestUser;
let ownerMcp: Client;
const live: LiveClient[] = [];

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  rita = await server.createUser("rita@example.test", "Rita Reviewer");
  ownerMcp = await server.mcpClient(owner.token);
});

afterAll(async () => {
  for (const client of live) client.close();
  await ownerMcp?.close();
  await server?.close();
});

/** The owner's API token over MCP: an agent. */
const ownerAgentMcp = (): Face => ({
  name: "the owner's agent over MCP",
  async call(tool, args) {
    const result = await ownerMcp.callTool({ name: tool, arguments: args });
    return result.isError ? { error: toolError(result) } : { value: result.structuredContent as Value };
  },
});

/** A user's API token over tRPC (HTTP): an agent too. */
const agentTrpc = (user: TestUser): Face => ({
  name: `${user.email}'s agent over tRPC`,
  async call(tool, args) {
    const client = server.trpcClient(user.token) as unknown as Record<
      string,
      { mutate(a: Args): Promise<Value>; query(a: Args): Promise<Value> }
    >;
    const procedure = client[PROCEDURES[tool]]!;
    try {
      return { value: await (tool === "read" ? procedure.query(args) : procedure.mutate(args)) };
    } catch (error) {
      const payload = (error as { data?: { error?: { code: string; message: string } } }).data?.error;
      if (!payload) throw error;
      return { error: payload };
    }
  },
});

/** A user signed in (a browser session) over tRPC: a person. */
const person = (user: TestUser): Face => ({
  name: `${user.email} in person`,
  async call(tool, args) {
    const caller = server.trpcCaller(user) as unknown as Record<string, (a: Args) => Promise<Value>>;
    try {
      return { value: await caller[PROCEDURES[tool]]!(args) };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      if (!isDomainError(cause)) throw error;
      return { error: { code: cause.code, message: cause.message } };
    }
  },
});

async function ok(face: Face, tool: Tool, args: Args): Promise<Value> {
  const outcome = await face.call(tool, args);
  if ("error" in outcome) throw new Error(`${face.name}: ${tool} ${String(args.action)} failed: ${JSON.stringify(outcome.error)}`);
  return outcome.value;
}

async function refused(face: Face, tool: Tool, args: Args): Promise<{ code: string; message: string }> {
  const outcome = await face.call(tool, args);
  if ("value" in outcome) throw new Error(`${face.name}: ${tool} ${String(args.action)} unexpectedly succeeded`);
  return outcome.error;
}

async function heads(documentId: string): Promise<Record<string, string>> {
  const listed = await ok(person(owner), "documents", { action: "list_branches", documentId });
  return Object.fromEntries(listed.branches.map((b: { name: string; headCommitId: string }) => [b.name, b.headCommitId]));
}

/** A document with sections A and B on main and a branch `work`, created by the owner in person. */
async function setup(path: string) {
  const doc = await ok(person(owner), "documents", {
    action: "create",
    path,
    sections: [
      { name: "A", content: [text("A original")] },
      { name: "B", content: [text("B original")] },
    ],
  });
  await ok(person(owner), "documents", { action: "create_branch", documentId: doc.documentId, branchName: "work" });
  const [a, b] = doc.sectionIds as [string, string];
  return { documentId: doc.documentId as string, a, b };
}

const sectionOn = async (documentId: string, branchName: string, sectionId: string) =>
  (await ok(person(owner), "read", { documentId, branchName, sectionIds: [sectionId] })).sections[0];

const AGENT_REFUSAL = /API token acts as an agent; agents cannot change access/;

describe("an API token never changes a section's access", () => {
  const agents = () => [ownerAgentMcp(), agentTrpc(owner)];

  test("sections create and update with defaultPermission or aiAccess are refused to an agent on every face, and change nothing", async () => {
    const doc = await setup("agent-access/fields");
    const before = await heads(doc.documentId);
    for (const agent of agents()) {
      for (const fields of [{ defaultPermission: "edit" }, { aiAccess: "edit" }, { defaultPermission: "none", aiAccess: "edit" }]) {
        const created = await refused(agent, "sections", {
          action: "create",
          documentId: doc.documentId,
          branchName: "work",
          name: "Open to all",
          content: [text("x")],
          ...fields,
        });
        expect(created.code, agent.name).toBe("PERMISSION_DENIED");
        expect(created.message).toMatch(AGENT_REFUSAL);
        expect(created.message).toMatch(/defaultPermission and aiAccess/);
        const updated = await refused(agent, "sections", {
          action: "update",
          documentId: doc.documentId,
          branchName: "work",
          sectionId: doc.a,
          ...fields,
        });
        expect(updated.code, agent.name).toBe("PERMISSION_DENIED");
        expect(updated.message).toMatch(AGENT_REFUSAL);
      }
      // On the default branch the agent rule is the reason given, not the branch (another branch would not help).
      const onMain = await refused(agent, "sections", {
        action: "update",
        documentId: doc.documentId,
        branchName: "main",
        sectionId: doc.a,
        newContent: [text("A by an agent")],
        aiAccess: "edit",
      });
      expect(onMain.code).toBe("PERMISSION_DENIED");
      expect(onMain.message).toMatch(AGENT_REFUSAL);
      // batch_create and documents create take no overrides at all.
      for (const [tool, args] of [
        [
          "sections",
          {
            action: "batch_create",
            documentId: doc.documentId,
            branchName: "work",
            sections: [{ name: "S", content: [], defaultPermission: "edit" }],
          },
        ],
        [
          "documents",
          { action: "create", path: `agent-access/new-${randomUUID()}`, sections: [{ name: "S", content: [], aiAccess: "edit" }] },
        ],
      ] as const) {
        expect((await refused(agent, tool, args)).code).toBe("VALIDATION_FAILED");
      }
    }
    expect(await heads(doc.documentId)).toEqual(before);
    expect(await sectionOn(doc.documentId, "work", doc.a)).toMatchObject({ defaultPermission: null, aiAccess: null });

    // The same agents still write content; a person still sets overrides on a non-default branch.
    for (const agent of agents()) {
      await ok(agent, "sections", {
        action: "update",
        documentId: doc.documentId,
        branchName: "work",
        sectionId: doc.a,
        newContent: [text(agent.name)],
      });
    }
    const created = await ok(person(owner), "sections", {
      action: "create",
      documentId: doc.documentId,
      branchName: "work",
      name: "Owners only",
      content: [text("secret")],
      defaultPermission: "none",
      aiAccess: "read",
    });
    expect(await sectionOn(doc.documentId, "work", created.sectionId)).toMatchObject({ defaultPermission: "none", aiAccess: "read" });
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "work",
      sectionId: doc.b,
      aiAccess: "none",
    });
    expect(await sectionOn(doc.documentId, "work", doc.b)).toMatchObject({ aiAccess: "none" });
  });

  test("a member's agent with an edit grant cannot open a section to the team either", async () => {
    const doc = await setup("agent-access/team");
    await ok(person(owner), "documents", { action: "set_permissions", documentId: doc.documentId, defaultPermission: "read" });
    await ok(person(owner), "documents", {
      action: "set_permissions",
      documentId: doc.documentId,
      grants: [{ userId: rita.userId, permission: "edit" }],
    });
    const refusal = await refused(agentTrpc(rita), "sections", {
      action: "create",
      documentId: doc.documentId,
      branchName: "work",
      name: "Everyone edits",
      content: [text("x")],
      defaultPermission: "edit",
    });
    expect(refusal.code).toBe("PERMISSION_DENIED");
    expect(refusal.message).toMatch(AGENT_REFUSAL);
  });

  test("an agent's revert that would bring back other overrides is refused; a person's works", async () => {
    const doc = await setup("agent-access/revert");
    const { work: unrestricted } = await heads(doc.documentId);
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "work",
      sectionId: doc.a,
      defaultPermission: "none",
    });
    const restricted = (await heads(doc.documentId)).work;
    for (const agent of agents()) {
      const refusal = await refused(agent, "documents", {
        action: "revert",
        documentId: doc.documentId,
        branchName: "work",
        commitId: unrestricted,
      });
      expect(refusal.code, agent.name).toBe("PERMISSION_DENIED");
      expect(refusal.message).toMatch(AGENT_REFUSAL);
    }
    expect((await heads(doc.documentId)).work).toBe(restricted);
    await ok(person(owner), "documents", { action: "revert", documentId: doc.documentId, branchName: "work", commitId: unrestricted });
    expect(await sectionOn(doc.documentId, "work", doc.a)).toMatchObject({ defaultPermission: null });
  });

  test("an agent may not execute a merge that changes a section's overrides (fast-forward or merge commit); a person merges it", async () => {
    const doc = await setup("agent-access/merge");
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "work",
      sectionId: doc.a,
      aiAccess: "none",
    });
    const request = await ok(person(owner), "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "work",
      targetBranch: "main",
      title: "Hide A from agents",
    });
    const before = await heads(doc.documentId);
    for (const agent of agents()) {
      const refusal = await refused(agent, "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
      expect(refusal.code, agent.name).toBe("PERMISSION_DENIED");
      expect(refusal.message).toMatch(AGENT_REFUSAL);
      expect(refusal.message).toMatch(/a person must merge/i);
    }
    // main moves on its own: the merge is no longer a fast-forward, and still an access change.
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: doc.b,
      newContent: [text("B on main")],
    });
    for (const agent of agents()) {
      expect((await refused(agent, "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId })).code).toBe(
        "PERMISSION_DENIED",
      );
    }
    expect((await heads(doc.documentId)).work).toBe(before.work);
    expect(await sectionOn(doc.documentId, "main", doc.a)).toMatchObject({ aiAccess: null });
    const open = await ok(person(owner), "merge_requests", { action: "get", mergeRequestId: request.mergeRequestId });
    expect(open.status).toBe("open");

    await ok(person(owner), "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
    expect(await sectionOn(doc.documentId, "main", doc.a)).toMatchObject({ aiAccess: "none" });
  });

  test("an agent's resolution of a conflict that would change access is refused; one that keeps access merges", async () => {
    const doc = await setup("agent-access/resolutions");
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "work",
      sectionId: doc.a,
      newContent: [text("A on work")],
      defaultPermission: "read",
    });
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "work",
      sectionId: doc.b,
      newContent: [text("B on work")],
    });
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: doc.a,
      newContent: [text("A on main")],
    });
    const request = await ok(person(owner), "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "work",
      targetBranch: "main",
      title: "A read-only",
    });
    const agent = ownerAgentMcp();
    for (const resolution of [
      { sectionId: doc.a, resolution: "source" },
      { sectionId: doc.a, resolution: "merged", content: [text("A written by the agent")] },
    ]) {
      const refusal = await refused(agent, "merge_requests", {
        action: "execute",
        mergeRequestId: request.mergeRequestId,
        resolutions: [resolution],
      });
      expect(refusal.code, resolution.resolution).toBe("PERMISSION_DENIED");
      expect(refusal.message).toMatch(AGENT_REFUSAL);
    }
    expect(await sectionOn(doc.documentId, "main", doc.a)).toMatchObject({
      content: [expect.objectContaining({ text: "A on main" })],
      defaultPermission: null,
    });
    // Keeping the target's version keeps access as it is: the agent may merge the rest.
    await ok(agent, "merge_requests", {
      action: "execute",
      mergeRequestId: request.mergeRequestId,
      resolutions: [{ sectionId: doc.a, resolution: "target" }],
    });
    expect(await sectionOn(doc.documentId, "main", doc.a)).toMatchObject({ defaultPermission: null });
    expect(await sectionOn(doc.documentId, "main", doc.b)).toMatchObject({ content: [expect.objectContaining({ text: "B on work" })] });
  });
});

describe("a document that requires approvals protects its default branch", () => {
  const PROTECTED = /requires 1 approval.*merge request/s;

  /** Every kind of direct write to `branchName`, as a list of calls (sections named by the setup). */
  function directWrites(doc: { documentId: string; a: string; b: string }, branchName: string, tagId: string, revertTo: string) {
    const at = { documentId: doc.documentId, branchName };
    return [
      ["sections", { ...at, action: "reorder", sectionOrder: [doc.b, doc.a] }],
      ["sections", { ...at, action: "update", sectionId: doc.a, newContent: [text(`A on ${branchName}`)] }],
      ["sections", { ...at, action: "create", name: "New", content: [text("new")] }],
      ["sections", { ...at, action: "batch_create", sections: [{ name: "N1", content: [] }] }],
      ["sections", { ...at, action: "add_reference", sectionId: doc.b, targetDocumentId: doc.documentId }],
      ["documents", { ...at, action: "update", newName: `Renamed on ${branchName}` }],
      ["documents", { ...at, action: "assign_tag", tagId }],
      ["documents", { ...at, action: "set_property", columnId: randomUUID(), value: 3 }],
      ["documents", { ...at, action: "revert", commitId: revertTo }],
      ["sections", { ...at, action: "delete", sectionId: doc.b }],
    ] as const;
  }

  test("with requiredApprovals 1 every direct write to main is refused with DEFAULT_BRANCH_PROTECTED, by a person or an agent; other branches take them", async () => {
    const doc = await setup("protected/writes");
    const first = (await heads(doc.documentId)).main!;
    await ok(person(owner), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: doc.a,
      newContent: [text("A second")],
    });
    const tag = await ok(person(owner), "documents", { action: "create_tag", tagPath: `protected/${randomUUID()}` });
    await ok(person(owner), "merge_requests", { action: "set_required_approvals", documentId: doc.documentId, requiredApprovals: 1 });
    const before = await heads(doc.documentId);

    for (const face of [person(owner), ownerAgentMcp(), agentTrpc(owner), person(rita)]) {
      for (const [tool, args] of directWrites(doc, "main", tag.tagId, first)) {
        const refusal = await refused(face, tool, args);
        expect(refusal.code, `${face.name} ${args.action}`).toBe("DEFAULT_BRANCH_PROTECTED");
        expect(refusal.message).toMatch(PROTECTED);
        expect(refusal.message).toMatch(/create_branch/);
      }
      // Deleting the document on main says the same (it was already branch-only).
      expect((await refused(face, "documents", { action: "delete", documentId: doc.documentId, branchName: "main" })).code).toBe(
        "DEFAULT_BRANCH_PROTECTED",
      );
    }
    expect(await heads(doc.documentId)).toEqual({ ...before });

    // Other branches take every one of those writes.
    const work = (await heads(doc.documentId)).work;
    for (const [tool, args] of directWrites(doc, "work", tag.tagId, first)) {
      await ok(person(owner), tool, args);
    }
    expect((await heads(doc.documentId)).work).not.toBe(work);

    // At 0 the default branch takes direct writes again.
    await ok(person(owner), "merge_requests", { action: "set_required_approvals", documentId: doc.documentId, requiredApprovals: 0 });
    await ok(ownerAgentMcp(), "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: doc.a,
      newContent: [text("A direct")],
    });
  });

  test("a live draft on a protected main is not committed (the draft stays); a draft on a branch is", async () => {
    const doc = await setup("protected/draft");
    await ok(person(owner), "merge_requests", { action: "set_required_approvals", documentId: doc.documentId, requiredApprovals: 1 });
    const before = await heads(doc.documentId);
    for (const branchName of ["main", "work"]) {
      const editor = await connectLive(server.url, roomName(doc.documentId, branchName, doc.a), { token: owner.token });
      live.push(editor);
      editor.text().insert(editor.text().length, ` typed on ${branchName}`);
      await expect
        .poll(async () => {
          const listed = await ok(person(owner), "documents", { action: "list_branches", documentId: doc.documentId });
          return listed.branches.find((b: { name: string }) => b.name === branchName).draft.uncommittedChanges;
        })
        .toBe(true);
    }
    for (const face of [person(owner), ownerAgentMcp()]) {
      const refusal = await refused(face, "documents", { action: "commit", documentId: doc.documentId, branchName: "main" });
      expect(refusal.code, face.name).toBe("DEFAULT_BRANCH_PROTECTED");
      expect(refusal.message).toMatch(PROTECTED);
    }
    expect((await heads(doc.documentId)).main).toBe(before.main);
    const draft = await ok(person(owner), "read", { documentId: doc.documentId, branchName: "main", includeDraft: true });
    expect(draft.sections[0].content[0].text).toBe("A original typed on main");

    const committed = await ok(person(owner), "documents", { action: "commit", documentId: doc.documentId, branchName: "work" });
    expect(committed.changed).toBe(true);
    expect((await sectionOn(doc.documentId, "work", doc.a)).content[0].text).toBe("A original typed on work");
  });

  test("the way to a protected main is a merge request with its approval, which an agent may execute", async () => {
    const doc = await setup("protected/merge");
    await ok(person(owner), "merge_requests", { action: "set_required_approvals", documentId: doc.documentId, requiredApprovals: 1 });
    const direct = { action: "update", documentId: doc.documentId, sectionId: doc.a, newContent: [text("A reviewed")] };
    expect((await refused(agentTrpc(owner), "sections", { ...direct, branchName: "main" })).code).toBe("DEFAULT_BRANCH_PROTECTED");
    await ok(agentTrpc(owner), "sections", { ...direct, branchName: "work" });
    const request = await ok(person(owner), "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "work",
      targetBranch: "main",
      title: "Reviewed change",
      reviewerIds: [rita.userId],
    });
    expect((await refused(person(owner), "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId })).code).toBe(
      "APPROVALS_REQUIRED",
    );
    const analysis = await ok(person(rita), "merge_requests", { action: "analyze", mergeRequestId: request.mergeRequestId });
    await ok(person(rita), "merge_requests", {
      action: "approve",
      mergeRequestId: request.mergeRequestId,
      expectedSourceHeadCommitId: analysis.sourceHeadCommitId,
      expectedTargetHeadCommitId: analysis.targetHeadCommitId,
    });
    await ok(ownerAgentMcp(), "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
    expect((await sectionOn(doc.documentId, "main", doc.a)).content[0].text).toBe("A reviewed");
  });
});
