/**
 * Every action of every tool returns what its tool's outputSchema says. The
 * calls go through a real MCP SDK client, which validates each result's
 * structuredContent against the outputSchema from tools/list and throws on a
 * mismatch (McpServer validates successes on the server too). The actions an
 * API token may never run (permissions and share links, person only) are run
 * in person and their results checked against the same listed schema with the
 * client's own validator; over MCP they are refused with an isError result
 * whose error is in its text block (no structuredContent for the client to check).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type ToolName, tools as registeredTools } from "@/server/actions/registry";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";

let server: TestServer;
let owner: TestUser;
let reviewer: TestUser;
let ownerMcp: Client;
let reviewerMcp: Client;
const listedOutputSchemas = new Map<string, Record<string, unknown>>();

/** Every `tool.action` (or `tool` for a tool without actions) the registry offers. */
const everyAction = Object.entries(registeredTools).flatMap(([name, tool]) =>
  tool.input instanceof z.ZodDiscriminatedUnion
    ? (tool.input.options as z.ZodObject[]).map((option) => `${name}.${String(option.shape.action!.value)}`)
    : [name],
);
const covered = new Set<string>();

type Args = Record<string, unknown>;
const text = (t: string) => ({ blockType: "text", text: t });

/** Calls a tool over MCP; the SDK client throws if the result does not match the tool's outputSchema. */
async function call<T = Record<string, unknown>>(client: Client, tool: ToolName, args: Args): Promise<T> {
  const result = await callMcp<T>(client, tool, args);
  covered.add(typeof args.action === "string" ? `${tool}.${args.action}` : tool);
  return result;
}

/** Runs an action in person (in process) and checks its result against the outputSchema MCP clients were given. */
async function callInPerson(tool: ToolName, args: Args): Promise<Record<string, unknown>> {
  const result = (await server.callToolAsSent(tool, owner.userId, args)) as Record<string, unknown>;
  const validate = new AjvJsonSchemaValidator().getValidator(listedOutputSchemas.get(tool) as JsonSchemaType);
  const verdict = validate(result);
  expect(verdict.valid, `${tool}.${String(args.action)}: ${verdict.valid ? "" : verdict.errorMessage}`).toBe(true);
  // Over MCP an API token is refused these actions: an isError result the client takes without an output check.
  expect((await callMcpError(ownerMcp, tool, args)).code).toBe("PERMISSION_DENIED");
  covered.add(`${tool}.${String(args.action)}`);
  return result;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  reviewer = await server.createUser("rita@example.test", "Rita Reviewer");
  ownerMcp = await server.mcpClient(owner.token);
  reviewerMcp = await server.mcpClient(reviewer.token);
  for (const tool of (await ownerMcp.listTools()).tools) {
    if (tool.outputSchema) listedOutputSchemas.set(tool.name, tool.outputSchema);
  }
  // The SDK client validates results only against the schemas of tools it has listed.
  await reviewerMcp.listTools();
});

afterAll(async () => {
  await ownerMcp?.close();
  await reviewerMcp?.close();
  await server?.close();
});

describe("every action's result matches its tool's outputSchema", () => {
  test("every tool advertises an object outputSchema", () => {
    expect([...listedOutputSchemas.keys()].sort()).toEqual(Object.keys(registeredTools).sort());
    for (const schema of listedOutputSchemas.values()) expect(schema.type).toBe("object");
  });

  test("documents, sections, read, members and upload_url", async () => {
    const doc = await call<{ documentId: string; sectionIds: string[]; commitId: string }>(ownerMcp, "documents", {
      action: "create",
      path: "schemas/handbook",
      description: "Every shape",
      sections: [
        { name: "Intro", content: [text("Welcome.")] },
        {
          name: "Chart",
          content: [{ blockType: "image", type: "url", mediaType: "image/png", url: "https://example.com/a.png", alt: "chart" }],
        },
      ],
    });
    const documentId = doc.documentId;
    const other = await call<{ documentId: string }>(ownerMcp, "documents", { action: "create", path: "schemas/other" });
    await call(ownerMcp, "documents", { action: "list", pathPrefix: "schemas/", limit: 1 });
    await call(ownerMcp, "documents", { action: "get", documentId });
    await call(ownerMcp, "documents", { action: "create_branch", documentId, branchName: "work" });
    await call(ownerMcp, "documents", { action: "list_branches", documentId });
    await call(ownerMcp, "documents", { action: "update", documentId, branchName: "work", newName: "Handbook", newDescription: null });
    const tag = await call<{ tagId: string }>(ownerMcp, "documents", {
      action: "create_tag",
      tagPath: "schemas/draft",
      tagColor: "#ff8800",
    });
    await call(ownerMcp, "documents", { action: "assign_tag", documentId, branchName: "work", tagId: tag.tagId });
    await call(ownerMcp, "documents", {
      action: "set_property",
      documentId,
      branchName: "work",
      columnId: "55555555-5555-4555-8555-555555555555",
      value: 3,
    });

    const created = await call<{ sectionId: string }>(ownerMcp, "sections", {
      action: "create",
      documentId,
      branchName: "work",
      name: "Notes",
      content: [text(`<svc:comment-new body="look" mentions="${reviewer.userId}">here</svc:comment-new>`)],
    });
    await call(ownerMcp, "sections", {
      action: "batch_create",
      documentId,
      branchName: "work",
      sections: [
        { name: "A", content: [] },
        { name: "B", content: [text("b")] },
      ],
    });
    await call(ownerMcp, "sections", {
      action: "update",
      documentId,
      branchName: "work",
      sectionId: doc.sectionIds[0],
      newName: "Welcome",
    });
    const reference = await call<{ referenceId: string }>(ownerMcp, "sections", {
      action: "add_reference",
      documentId,
      branchName: "work",
      sectionId: doc.sectionIds[0],
      targetDocumentId: other.documentId,
      displayTitle: "Other",
    });
    const read = await call<{ sections: Array<{ sectionId: string; comments: unknown[]; references: unknown[] }> }>(ownerMcp, "read", {
      documentId,
      branchName: "work",
    });
    expect(read.sections.some((section) => section.comments.length > 0)).toBe(true);
    expect(read.sections.some((section) => section.references.length > 0)).toBe(true);
    await call(ownerMcp, "sections", { action: "remove_reference", documentId, branchName: "work", referenceId: reference.referenceId });
    await call(ownerMcp, "sections", {
      action: "reorder",
      documentId,
      branchName: "work",
      sectionOrder: read.sections.map((section) => section.sectionId).reverse(),
    });
    await call(ownerMcp, "sections", {
      action: "move",
      documentId,
      branchName: "work",
      sectionId: doc.sectionIds[0],
      beforeSectionId: null,
    });
    await call(ownerMcp, "sections", { action: "delete", documentId, branchName: "work", sectionId: created.sectionId });

    await call(ownerMcp, "documents", { action: "commit", documentId, branchName: "work", commitMessage: "Nothing live" });
    await call(ownerMcp, "documents", { action: "discard", documentId, branchName: "work" });
    await call(ownerMcp, "documents", { action: "draft_status", documentId, branchName: "work" });
    await call(ownerMcp, "documents", { action: "log", documentId, branchName: "work", limit: 3 });
    await call(ownerMcp, "documents", { action: "show", documentId, commitId: doc.commitId });
    await call(ownerMcp, "documents", { action: "remove_tag", documentId, branchName: "work", tagId: tag.tagId });
    const reverted = await call<{ commitId: string }>(ownerMcp, "documents", {
      action: "revert",
      documentId,
      branchName: "work",
      commitId: doc.commitId,
    });
    await call(ownerMcp, "documents", { action: "undo", documentId, branchName: "work", expectedHeadCommitId: reverted.commitId });
    await call(ownerMcp, "documents", { action: "create_branch", documentId, branchName: "gone" });
    await call(ownerMcp, "documents", { action: "delete", documentId, branchName: "gone" });
    // A deletion merged into main: listed as deleted, restored there, and its branch deleted.
    await call(ownerMcp, "documents", { action: "create_branch", documentId: other.documentId, branchName: "bin" });
    await call(ownerMcp, "documents", { action: "delete", documentId: other.documentId, branchName: "bin" });
    const binned = await call<{ mergeRequestId: string }>(ownerMcp, "merge_requests", {
      action: "create",
      documentId: other.documentId,
      sourceBranch: "bin",
      targetBranch: "main",
      title: "Delete other",
    });
    await call(ownerMcp, "merge_requests", { action: "execute", mergeRequestId: binned.mergeRequestId });
    const deleted = await call<{ deletedDocuments: unknown[] }>(ownerMcp, "documents", { action: "list_deleted", pathPrefix: "schemas/" });
    expect(deleted.deletedDocuments).toHaveLength(1);
    await call(ownerMcp, "documents", { action: "restore", documentId: other.documentId, branchName: "main" });
    await call(ownerMcp, "documents", { action: "delete_branch", documentId: other.documentId, branchName: "bin" });
    await call(ownerMcp, "read", { documentId, commitId: doc.commitId });

    await call(ownerMcp, "members", { action: "list" });
    await call(ownerMcp, "members", { action: "search", query: "rit" });
    await call(ownerMcp, "members", { action: "get", userIds: [owner.userId] });
    await call(ownerMcp, "upload_url", { filename: "notes.txt", mediaType: "text/plain", size: 10 });
  });

  test("comments: a thread with a reply, resolved and reopened", async () => {
    const doc = await call<{ documentId: string; sectionIds: string[] }>(ownerMcp, "documents", {
      action: "create",
      path: "schemas/threads",
      sections: [
        { name: "Notes", content: [text(`Look <svc:comment-new body="look" mentions="${reviewer.userId}">here</svc:comment-new>`)] },
      ],
    });
    const { documentId } = doc;
    const listed = await call<{ threads: Array<{ commentId: string }> }>(ownerMcp, "comments", { action: "list", documentId });
    const commentId = listed.threads[0]!.commentId;
    await call(ownerMcp, "comments", { action: "reply", documentId, commentId, body: "seen", mentions: [reviewer.userId] });
    await call(ownerMcp, "comments", { action: "resolve", documentId, commentId });
    // A resolved thread with a reply, in every shape that carries threads.
    const resolved = await call<{ threads: Array<{ status: string; replies: unknown[]; resolvedByName: string | null }> }>(
      ownerMcp,
      "comments",
      { action: "list", documentId, status: "resolved" },
    );
    expect(resolved.threads).toMatchObject([{ status: "resolved", replies: [{}], resolvedByName: "Olive Owner" }]);
    const read = await call<{ sections: Array<{ comments: Array<{ status: string; replies: unknown[] }> }> }>(ownerMcp, "read", {
      documentId,
    });
    expect(read.sections[0]!.comments).toMatchObject([{ status: "resolved", replies: [{}] }]);
    await call(ownerMcp, "comments", { action: "reopen", documentId, commentId });
    // Posted: saved at once, anchored in the draft.
    const posted = await call<{ thread: { anchored: boolean } }>(ownerMcp, "comments", {
      action: "post",
      documentId,
      sectionId: doc.sectionIds[0]!,
      blockIndex: 0,
      quote: "Look",
      body: "markup?",
    });
    expect(posted.thread.anchored).toBe(true);
  });

  test("merge_requests, with a conflict and a property conflict", async () => {
    const doc = await call<{ documentId: string; sectionIds: string[] }>(ownerMcp, "documents", {
      action: "create",
      path: "schemas/merging",
      sections: [{ name: "Shared", content: [text("base")] }],
    });
    const { documentId } = doc;
    const columnId = "66666666-6666-4666-8666-666666666666";
    await call(ownerMcp, "documents", { action: "set_property", documentId, branchName: "main", columnId, value: "base" });
    await call(ownerMcp, "documents", { action: "create_branch", documentId, branchName: "source" });
    for (const [branchName, side] of [
      ["source", "source"],
      ["main", "target"],
    ] as const) {
      await call(ownerMcp, "sections", {
        action: "update",
        documentId,
        branchName,
        sectionId: doc.sectionIds[0],
        newContent: [text(side)],
      });
      await call(ownerMcp, "documents", { action: "set_property", documentId, branchName, columnId, value: side === "source" });
    }
    const request = await call<{ mergeRequestId: string }>(ownerMcp, "merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "source",
      targetBranch: "main",
      title: "Merge source",
      reviewerIds: [reviewer.userId],
    });
    const { mergeRequestId } = request;
    await call(ownerMcp, "merge_requests", { action: "list", documentId });
    await call(ownerMcp, "merge_requests", { action: "get", mergeRequestId });
    await call(ownerMcp, "merge_requests", { action: "update", mergeRequestId, newTitle: "Merge the source", newDescription: "Why" });
    await call(reviewerMcp, "merge_requests", { action: "request_changes", mergeRequestId });
    await call(reviewerMcp, "merge_requests", { action: "reset", mergeRequestId });
    await call(reviewerMcp, "merge_requests", { action: "approve", mergeRequestId });
    await call(ownerMcp, "merge_requests", { action: "analyze", mergeRequestId });
    const analysis = await call<{ hasConflicts: boolean; propertyConflicts: unknown[] }>(ownerMcp, "merge_requests", {
      action: "analyze",
      mergeRequestId,
      proposals: true,
    });
    expect(analysis.hasConflicts).toBe(true);
    expect(analysis.propertyConflicts).toHaveLength(1);
    await call(ownerMcp, "merge_requests", {
      action: "execute",
      mergeRequestId,
      resolutions: [{ sectionId: doc.sectionIds[0], resolution: "source" }],
      scalarPropertyResolutions: { [columnId]: "target" },
    });

    await call(ownerMcp, "documents", { action: "create_branch", documentId, branchName: "abandoned" });
    await call(ownerMcp, "documents", { action: "update", documentId, branchName: "abandoned", newName: "Abandoned" });
    const abandoned = await call<{ mergeRequestId: string }>(ownerMcp, "merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "abandoned",
      targetBranch: "main",
      title: "Never mind",
    });
    await call(ownerMcp, "merge_requests", { action: "close", mergeRequestId: abandoned.mergeRequestId });
  });

  test("notifications: the reviewer's inbox (asked for reviews and mentioned above), marked read, and the email setting", async () => {
    const inbox = await call<{ notifications: Array<{ notificationId: string }> }>(reviewerMcp, "notifications", { action: "list" });
    expect(inbox.notifications.length).toBeGreaterThan(0);
    await call(reviewerMcp, "notifications", { action: "mark_read", notificationIds: [inbox.notifications[0]!.notificationId] });
    await call(reviewerMcp, "notifications", { action: "mark_all_read" });
    await call(reviewerMcp, "notifications", { action: "get_settings" });
    await callInPerson("notifications", { action: "set_settings", email: "direct" });
  });

  test("changesets: gathered by ids, items added and removed, analyzed with a conflict, reviewed, executed and closed", async () => {
    const documentIds: string[] = [];
    for (const name of ["one", "two", "three"]) {
      const doc = await call<{ documentId: string; sectionIds: string[] }>(ownerMcp, "documents", {
        action: "create",
        path: `changeset-schemas/${name}`,
        sections: [{ name: "A", content: [text(`A of ${name}`)] }],
      });
      await call(ownerMcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "cs" });
      const update = (branchName: string, t: string) =>
        call(ownerMcp, "sections", {
          action: "update",
          documentId: doc.documentId,
          branchName,
          sectionId: doc.sectionIds[0],
          newContent: [text(t)],
        });
      await update("cs", `A of ${name}, on cs`);
      if (name === "one") await update("main", "A of one, on main");
      documentIds.push(doc.documentId);
    }
    const [one, two, three] = documentIds as [string, string, string];
    const created = await call<{ changesetId: string; items: Array<{ mergeRequest: { mergeRequestId: string } }> }>(
      ownerMcp,
      "changesets",
      {
        action: "create",
        sourceBranch: "cs",
        targetBranch: "main",
        title: "Schemas",
        documentIds: [one, two],
        reviewerIds: [reviewer.userId],
      },
    );
    const { changesetId } = created;
    await call(ownerMcp, "changesets", { action: "list", status: "open" });
    await call(ownerMcp, "changesets", { action: "get", changesetId });
    await call(ownerMcp, "changesets", { action: "add_items", changesetId, documentIds: [three] });
    await call(ownerMcp, "changesets", { action: "remove_items", changesetId, documentIds: [three] });
    const analysis = await call<{
      analyses: Array<{ documentId: string; analysis: { sections: Array<{ sectionId: string; status: string }> } }>;
    }>(ownerMcp, "changesets", { action: "analyze", changesetId, proposals: true });
    const conflict = analysis.analyses.find((a) => a.documentId === one)!.analysis.sections.find((s) => s.status === "conflict")!;
    await call(reviewerMcp, "changesets", { action: "request_changes", changesetId });
    await call(reviewerMcp, "changesets", { action: "approve", changesetId });
    await call(ownerMcp, "changesets", {
      action: "execute",
      changesetId,
      itemResolutions: [{ documentId: one, resolutions: [{ sectionId: conflict.sectionId, resolution: "source" }] }],
    });
    const other = await call<{ changesetId: string }>(ownerMcp, "changesets", {
      action: "create",
      sourceBranch: "cs",
      targetBranch: "main",
      title: "Closed",
      documentIds: [three],
    });
    await call(ownerMcp, "changesets", { action: "close", changesetId: other.changesetId, closeItems: true });
  });

  test("permissions, share links and merge rules, which only a signed-in person may manage", async () => {
    const { documentId } = await call<{ documentId: string }>(ownerMcp, "documents", { action: "create", path: "schemas/shared" });
    await callInPerson("documents", { action: "get_permissions", documentId });
    await callInPerson("documents", {
      action: "set_permissions",
      documentId,
      defaultPermission: "read",
      aiAccess: "edit",
      grants: [{ userId: reviewer.userId, permission: "edit" }],
    });
    const link = await callInPerson("documents", { action: "create_share_link", documentId, permission: "read", expiresInDays: 7 });
    await callInPerson("documents", { action: "list_share_links", documentId });
    await callInPerson("documents", { action: "revoke_share_link", documentId, shareLinkId: link.shareLinkId });
    await callInPerson("merge_requests", { action: "set_required_approvals", documentId, requiredApprovals: 1 });
  });

  test("search: hits of every kind", async () => {
    const found = await call<{ total: number; hits: Array<{ kind: string }> }>(ownerMcp, "search", { query: "schemas", limit: 50 });
    expect(found.hits.some((h) => h.kind === "document")).toBe(true);
    await call(ownerMcp, "search", { query: "welcome", kind: "section" });
  });

  test("the tests above ran every action of every tool", () => {
    expect([...covered].sort()).toEqual([...everyAction].sort());
  });
});

describe("the outputSchema describes successful results only", () => {
  test("a refusal reaches the SDK client as an isError result with the coded error in its text block", async () => {
    // callMcpError also requires the result to carry no structuredContent.
    const failure = await callMcpError(ownerMcp, "read", { documentId: "00000000-0000-4000-8000-000000000000" });
    expect(failure.code).toBe("NOT_FOUND");
    expect(failure.message).toBeTruthy();
  });

  test("a result missing a field every action returns, or with a field no action returns, is refused", () => {
    const validate = new AjvJsonSchemaValidator().getValidator(listedOutputSchemas.get("sections") as JsonSchemaType);
    const write = { documentId: "d", branchName: "main", commitId: "c", changed: true };
    expect(validate(write).valid).toBe(true);
    expect(validate({ ...write, changed: undefined, commitId: undefined }).valid).toBe(false);
    expect(validate({ ...write, surprise: 1 }).valid).toBe(false);
    expect(validate({ error: { code: "NOT_FOUND", message: "gone" } }).valid).toBe(false);
  });
});
