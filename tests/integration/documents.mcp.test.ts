/** The `documents` and `read` tools through a real MCP client over Streamable HTTP. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { text } from "../helpers/blocks";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { tools as registeredTools } from "@/server/actions/registry";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let mcp: Client;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  mcp = await server.mcpClient(owner.token);
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

interface Created {
  documentId: string;
  branchName: string;
  commitId: string;
  sectionIds: string[];
}

describe("authentication", () => {
  test("MCP without a token, or with a wrong one, is refused with 401", async () => {
    for (const authorization of [undefined, "Bearer qk_not-a-real-token", "Basic abc"]) {
      const res = await fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
    }
  });

  test("the health check needs no token and says whether the web app is served", async () => {
    const health = (await (await fetch(`${server.url}/api/health`)).json()) as { ok: boolean; web: string; tools: string[] };
    expect(health).toMatchObject({ ok: true, web: "disabled" });
    expect(health.tools).toContain("sections");
  });

  test("lists the tools with flat object schemas", async () => {
    const { tools } = await mcp.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(Object.keys(registeredTools).sort());
    expect(names).toEqual(expect.arrayContaining(["documents", "merge_requests", "read", "sections"]));
    const documents = tools.find((t) => t.name === "documents")!;
    expect(documents.inputSchema.type).toBe("object");
    const props = documents.inputSchema.properties as Record<string, { enum?: string[]; description?: string }>;
    expect(props.action!.enum).toContain("set_property");
    expect(props.path!.description).toMatch(/Required for: create/);
    expect(props.documentId!.description).toBeTruthy();
  });

  test("the flat schema keeps every action's description of a field, and every action's type", async () => {
    const { tools } = await mcp.listTools();
    for (const tool of tools) {
      const definition = registeredTools[tool.name as keyof typeof registeredTools].input;
      if (!(definition instanceof z.ZodDiscriminatedUnion)) continue;
      const flat = tool.inputSchema.properties as Record<string, { description?: string; anyOf?: unknown[] }>;
      for (const option of definition.options as z.ZodType[]) {
        const json = z.toJSONSchema(option, { io: "input", unrepresentable: "any" }) as {
          properties: Record<string, { description?: string }>;
        };
        for (const [name, property] of Object.entries(json.properties)) {
          if (name === "action" || !property.description) continue;
          expect(flat[name]?.description, `${tool.name}.${name}`).toContain(property.description);
        }
      }
    }
    const branchName = (tools.find((t) => t.name === "documents")!.inputSchema.properties as Record<string, { description: string }>)
      .branchName!;
    expect(branchName.description).toMatch(/create_branch: Name of the new branch/);
    expect(branchName.description).toMatch(/log: Default: the default branch/);
  });
});

describe("documents", () => {
  let doc: Created;

  test("create makes a document on main with a first commit and its sections", async () => {
    doc = await callMcp<Created>(mcp, "documents", {
      action: "create",
      path: "/handbook/pricing",
      description: "How we price",
      sections: [
        { name: "Intro", content: [text("Welcome.")] },
        {
          name: "Plans",
          content: [
            text("- Free\n- Pro"),
            { blockType: "image", type: "url", mediaType: "image/png", url: "https://example.com/a.png", alt: "chart" },
          ],
        },
      ],
    });
    expect(doc.branchName).toBe("main");
    expect(doc.sectionIds).toHaveLength(2);
    const read = await callMcp<{
      path: string;
      name: string;
      headCommitId: string;
      sections: Array<{ name: string; position: number; contentHash: string }>;
    }>(mcp, "read", { documentId: doc.documentId });
    expect(read.path).toBe("handbook/pricing");
    expect(read.name).toBe("pricing");
    expect(read.headCommitId).toBe(doc.commitId);
    expect(read.sections.map((s) => [s.name, s.position])).toEqual([
      ["Intro", 0],
      ["Plans", 1],
    ]);
    expect(read.sections[0]!.contentHash).toMatch(/^[0-9a-f]{64}$/);
  });

  test("a second live document cannot take the same path", async () => {
    const error = await callMcpError(mcp, "documents", { action: "create", path: "handbook/pricing" });
    expect(error.code).toBe("PATH_TAKEN");
    expect(error.message).toMatch(/different path/);
  });

  test("list pages through documents ordered by path and filters by prefix", async () => {
    for (const path of ["zeta", "handbook/alpha", "handbook/beta", "other/gamma"]) {
      await callMcp(mcp, "documents", { action: "create", path });
    }
    const first = await callMcp<{ documents: Array<{ path: string }>; nextCursor: string | null }>(mcp, "documents", {
      action: "list",
      pathPrefix: "handbook/",
      limit: 2,
    });
    expect(first.documents.map((d) => d.path)).toEqual(["handbook/alpha", "handbook/beta"]);
    const second = await callMcp<{ documents: Array<{ path: string }>; nextCursor: string | null }>(mcp, "documents", {
      action: "list",
      pathPrefix: "handbook/",
      limit: 2,
      cursor: first.nextCursor,
    });
    expect(second.documents.map((d) => d.path)).toEqual(["handbook/pricing"]);
    expect(second.nextCursor).toBeNull();
    const bad = await callMcpError(mcp, "documents", { action: "list", cursor: "garbage" });
    expect(bad.code).toBe("VALIDATION_FAILED");
  });

  test("show tells what a commit changed against its first parent, per section", async () => {
    type Shown = { commit: { commitId: string }; changes: Array<{ sectionId: string; name: string; status: string; diff: string }> };
    const created = await callMcp<Created>(mcp, "documents", {
      action: "create",
      path: "shown/doc",
      sections: [
        { name: "One", content: [text("first")] },
        { name: "Two", content: [text("second")] },
      ],
    });
    const root = await callMcp<Shown>(mcp, "documents", { action: "show", documentId: created.documentId, commitId: created.commitId });
    expect(root.changes.map((c) => [c.name, c.status])).toEqual([
      ["One", "added"],
      ["Two", "added"],
    ]);
    const edit = await callMcp<{ commitId: string }>(mcp, "sections", {
      action: "update",
      documentId: created.documentId,
      branchName: "main",
      sectionId: created.sectionIds[1],
      newContent: [text("second, edited")],
    });
    const shown = await callMcp<Shown>(mcp, "documents", { action: "show", documentId: created.documentId, commitId: edit.commitId });
    expect(shown.changes).toEqual([
      expect.objectContaining({
        sectionId: created.sectionIds[1],
        name: "Two",
        status: "modified",
        diff: expect.stringMatching(/-second\n\+second, edited/),
      }),
    ]);
  });

  test("list searches names and paths, and pages newest first without gaps or repeats", async () => {
    type Page = { documents: Array<{ path: string; name: string; updatedAt: string }>; nextCursor: string | null };
    const paths = ["recent/one", "recent/two", "recent/three", "recent/four", "recent/five"];
    const ids: string[] = [];
    for (const path of paths) {
      ids.push((await callMcp<Created>(mcp, "documents", { action: "create", path, name: `Report ${path.slice(7)}` })).documentId);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    // Touch "two" last: it becomes the newest.
    await callMcp(mcp, "documents", { action: "update", documentId: ids[1], branchName: "main", newDescription: "touched" });

    const seen: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page: Page = await callMcp<Page>(mcp, "documents", {
        action: "list",
        pathPrefix: "recent/",
        orderBy: "updated",
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.documents.map((d) => d.path));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["recent/two", "recent/five", "recent/four", "recent/three", "recent/one"]);

    const found = await callMcp<Page>(mcp, "documents", { action: "list", search: "REPORT T" });
    expect(found.documents.map((d) => d.path)).toEqual(["recent/three", "recent/two"]);
    const byPath = await callMcp<Page>(mcp, "documents", { action: "list", search: "ent/fi" });
    expect(byPath.documents.map((d) => d.name)).toEqual(["Report five"]);
    // LIKE wildcards are text, not patterns.
    expect((await callMcp<Page>(mcp, "documents", { action: "list", search: "%" })).documents).toEqual([]);
    const blank = await callMcpError(mcp, "documents", { action: "list", search: "  " });
    expect(blank.code).toBe("VALIDATION_FAILED");
  });

  test("updatedAt is the document's last change on its default branch, in get and in list", async () => {
    type Summary = { documentId: string; createdAt: string; updatedAt: string };
    const created = await callMcp<Created & Summary>(mcp, "documents", {
      action: "create",
      path: "timing/doc",
      sections: [{ name: "S", content: [text("a")] }],
    });
    expect(created.updatedAt).toBe(created.createdAt);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const before = Date.now();
    await callMcp(mcp, "sections", {
      action: "update",
      documentId: created.documentId,
      branchName: "main",
      sectionId: created.sectionIds[0],
      newContent: [text("b")],
    });
    const got = await callMcp<Summary>(mcp, "documents", { action: "get", documentId: created.documentId });
    expect(Date.parse(got.updatedAt)).toBeGreaterThanOrEqual(before);
    const listed = await callMcp<{ documents: Summary[] }>(mcp, "documents", { action: "list", pathPrefix: "timing/" });
    expect(listed.documents.find((d) => d.documentId === created.documentId)?.updatedAt).toBe(got.updatedAt);
    // A write on another branch is not a change of the document as the list shows it.
    await callMcp(mcp, "documents", { action: "create_branch", documentId: created.documentId, branchName: "draft" });
    await callMcp(mcp, "sections", {
      action: "update",
      documentId: created.documentId,
      branchName: "draft",
      sectionId: created.sectionIds[0],
      newContent: [text("c")],
    });
    expect((await callMcp<Summary>(mcp, "documents", { action: "get", documentId: created.documentId })).updatedAt).toBe(got.updatedAt);
  });

  test("branches: create, duplicate refused, list, and writes stay on their branch", async () => {
    const branch = await callMcp<{ branchName: string; headCommitId: string }>(mcp, "documents", {
      action: "create_branch",
      documentId: doc.documentId,
      branchName: "agent/rename",
    });
    expect(branch.headCommitId).toBe(doc.commitId);
    const dup = await callMcpError(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "agent/rename" });
    expect(dup.code).toBe("BRANCH_EXISTS");
    const badName = await callMcpError(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "bad..name" });
    expect(badName.code).toBe("VALIDATION_FAILED");

    const write = await callMcp<{ commitId: string; changed: boolean }>(mcp, "documents", {
      action: "update",
      documentId: doc.documentId,
      branchName: "agent/rename",
      newName: "Pricing",
      newDescription: null,
    });
    expect(write.changed).toBe(true);
    const onBranch = await callMcp<{ name: string; description: string | null }>(mcp, "read", {
      documentId: doc.documentId,
      branchName: "agent/rename",
    });
    expect(onBranch).toMatchObject({ name: "Pricing", description: null });
    const onMain = await callMcp<{ name: string }>(mcp, "read", { documentId: doc.documentId });
    expect(onMain.name).toBe("pricing");

    const same = await callMcp<{ commitId: string; changed: boolean }>(mcp, "documents", {
      action: "update",
      documentId: doc.documentId,
      branchName: "agent/rename",
      newName: "Pricing",
    });
    expect(same).toMatchObject({ changed: false, commitId: write.commitId });

    const branches = await callMcp<{ branches: Array<{ name: string; isDefault: boolean }> }>(mcp, "documents", {
      action: "list_branches",
      documentId: doc.documentId,
    });
    expect(branches.branches.map((b) => [b.name, b.isDefault])).toEqual([
      ["agent/rename", false],
      ["main", true],
    ]);
  });

  test("update to a path another live document holds is PATH_TAKEN and changes nothing", async () => {
    const before = await callMcp<{ headCommitId: string }>(mcp, "read", { documentId: doc.documentId, branchName: "agent/rename" });
    const error = await callMcpError(mcp, "documents", {
      action: "update",
      documentId: doc.documentId,
      branchName: "agent/rename",
      newPath: "zeta",
    });
    expect(error.code).toBe("PATH_TAKEN");
    const after = await callMcp<{ headCommitId: string }>(mcp, "read", { documentId: doc.documentId, branchName: "agent/rename" });
    expect(after.headCommitId).toBe(before.headCommitId);
  });

  test("delete is refused on main with guidance and works on a branch", async () => {
    const refused = await callMcpError(mcp, "documents", { action: "delete", documentId: doc.documentId, branchName: "main" });
    expect(refused.code).toBe("DEFAULT_BRANCH_PROTECTED");
    expect(refused.message).toMatch(/merge request/);
    await callMcp(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "remove-it" });
    await callMcp(mcp, "documents", { action: "delete", documentId: doc.documentId, branchName: "remove-it" });
    const read = await callMcp<{ deleted: boolean }>(mcp, "read", { documentId: doc.documentId, branchName: "remove-it" });
    expect(read.deleted).toBe(true);
    const writeAfter = await callMcpError(mcp, "documents", {
      action: "update",
      documentId: doc.documentId,
      branchName: "remove-it",
      newName: "x",
    });
    expect(writeAfter.code).toBe("DOCUMENT_DELETED");
    const list = await callMcp<{ documents: Array<{ documentId: string }> }>(mcp, "documents", { action: "list" });
    expect(list.documents.map((d) => d.documentId)).toContain(doc.documentId);
  });

  test("tags and properties are versioned per branch", async () => {
    const tag = await callMcp<{ tagId: string }>(mcp, "documents", { action: "create_tag", tagPath: "status/draft", tagColor: "#ff8800" });
    const dupTag = await callMcpError(mcp, "documents", { action: "create_tag", tagPath: "status/draft" });
    expect(dupTag.code).toBe("TAG_EXISTS");
    await callMcp(mcp, "documents", { action: "assign_tag", documentId: doc.documentId, branchName: "agent/rename", tagId: tag.tagId });
    const column = "2f1c6a58-5d0e-4a57-9a51-5b7b9a3f7c11";
    await callMcp(mcp, "documents", {
      action: "set_property",
      documentId: doc.documentId,
      branchName: "agent/rename",
      columnId: column,
      value: 42,
    });
    const branchRead = await callMcp<{ tags: Array<{ tagId: string; path: string; color: string }>; properties: Record<string, unknown> }>(
      mcp,
      "read",
      {
        documentId: doc.documentId,
        branchName: "agent/rename",
      },
    );
    expect(branchRead.tags).toEqual([{ tagId: tag.tagId, path: "status/draft", displayName: null, color: "#ff8800" }]);
    expect(branchRead.properties).toEqual({ [column]: 42 });
    const mainRead = await callMcp<{ tags: unknown[]; properties: Record<string, unknown> }>(mcp, "read", { documentId: doc.documentId });
    expect(mainRead.tags).toEqual([]);
    expect(mainRead.properties).toEqual({});

    await callMcp(mcp, "documents", {
      action: "set_property",
      documentId: doc.documentId,
      branchName: "agent/rename",
      columnId: column,
      value: null,
    });
    await callMcp(mcp, "documents", { action: "remove_tag", documentId: doc.documentId, branchName: "agent/rename", tagId: tag.tagId });
    const cleared = await callMcp<{ tags: unknown[]; properties: Record<string, unknown> }>(mcp, "read", {
      documentId: doc.documentId,
      branchName: "agent/rename",
    });
    expect(cleared).toMatchObject({ tags: [], properties: {} });
    const notAssigned = await callMcpError(mcp, "documents", {
      action: "remove_tag",
      documentId: doc.documentId,
      branchName: "agent/rename",
      tagId: tag.tagId,
    });
    expect(notAssigned.code).toBe("NOT_FOUND");
    const unknownTag = await callMcpError(mcp, "documents", {
      action: "assign_tag",
      documentId: doc.documentId,
      branchName: "agent/rename",
      tagId: "00000000-0000-4000-8000-000000000000",
    });
    expect(unknownTag.code).toBe("NOT_FOUND");
  });

  test("log pages newest first; show and revert restore an earlier state as a new commit", async () => {
    const all = await callMcp<{
      commits: Array<{ commitId: string; message: string; parentIds: string[]; authorId: string }>;
      nextCursor: string | null;
    }>(mcp, "documents", { action: "log", documentId: doc.documentId, branchName: "agent/rename", limit: 100 });
    expect(all.nextCursor).toBeNull();
    expect(all.commits.at(-1)!.commitId).toBe(doc.commitId);
    expect(all.commits.at(-1)!.parentIds).toEqual([]);
    expect(all.commits[0]!.message).toMatch(/Remove tag "status\/draft"/);
    expect(all.commits.every((c) => c.authorId === owner.userId)).toBe(true);

    const paged: string[] = [];
    let cursor: string | null | undefined;
    do {
      const page = await callMcp<{ commits: Array<{ commitId: string }>; nextCursor: string | null }>(mcp, "documents", {
        action: "log",
        documentId: doc.documentId,
        branchName: "agent/rename",
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      paged.push(...page.commits.map((c) => c.commitId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all.commits.map((c) => c.commitId));

    const shown = await callMcp<{ name: string; commit: { commitId: string } }>(mcp, "documents", {
      action: "show",
      documentId: doc.documentId,
      commitId: doc.commitId,
    });
    expect(shown).toMatchObject({ name: "pricing", commit: { commitId: doc.commitId } });

    const reverted = await callMcp<{ commitId: string; changed: boolean }>(mcp, "documents", {
      action: "revert",
      documentId: doc.documentId,
      branchName: "agent/rename",
      commitId: doc.commitId,
      commitMessage: "Back to the original",
    });
    expect(reverted.changed).toBe(true);
    const after = await callMcp<{ name: string; description: string }>(mcp, "read", {
      documentId: doc.documentId,
      branchName: "agent/rename",
    });
    expect(after).toMatchObject({ name: "pricing", description: "How we price" });
    const newest = await callMcp<{ commits: Array<{ message: string; kind: string }> }>(mcp, "documents", {
      action: "log",
      documentId: doc.documentId,
      branchName: "agent/rename",
      limit: 1,
    });
    expect(newest.commits[0]).toMatchObject({ message: "Back to the original", kind: "revert" });
  });

  test("read by commit, by section ids, and unknown sections", async () => {
    const atCommit = await callMcp<{ headCommitId: string; branchName: null }>(mcp, "read", {
      documentId: doc.documentId,
      commitId: doc.commitId,
    });
    expect(atCommit).toMatchObject({ headCommitId: doc.commitId, branchName: null });
    const one = await callMcp<{ sections: Array<{ sectionId: string; position: number }> }>(mcp, "read", {
      documentId: doc.documentId,
      sectionIds: [doc.sectionIds[1]],
    });
    expect(one.sections).toEqual([expect.objectContaining({ sectionId: doc.sectionIds[1], position: 1 })]);
    const missing = await callMcpError(mcp, "read", { documentId: doc.documentId, sectionIds: ["00000000-0000-4000-8000-000000000001"] });
    expect(missing.code).toBe("NOT_FOUND");
  });
});

describe("bad input gets a coded error and changes nothing", () => {
  test.each([
    ["an invalid UUID", "documents", { action: "get", documentId: "not-a-uuid" }, "VALIDATION_FAILED"],
    ["an unknown document", "documents", { action: "get", documentId: "00000000-0000-4000-8000-000000000000" }, "NOT_FOUND"],
    ["an unknown action", "documents", { action: "explode" }, "VALIDATION_FAILED"],
    ["an unknown field", "documents", { action: "list", bogus: 1 }, "VALIDATION_FAILED"],
    ["a path with ..", "documents", { action: "create", path: "a/../b" }, "VALIDATION_FAILED"],
    ["an empty path", "documents", { action: "create", path: "  " }, "VALIDATION_FAILED"],
    [
      "an oversize commit message",
      "documents",
      { action: "create", path: "long-msg", commitMessage: "x".repeat(1001) },
      "VALIDATION_FAILED",
    ],
    [
      "a non-http URL block",
      "documents",
      {
        action: "create",
        path: "js-url",
        sections: [{ name: "A", content: [{ blockType: "image", type: "url", mediaType: "image/png", url: "javascript:alert(1)" }] }],
      },
      "VALIDATION_FAILED",
    ],
    [
      "a local file block",
      "documents",
      {
        action: "create",
        path: "file-block",
        sections: [{ name: "A", content: [{ blockType: "image", type: "file", path: "/etc/passwd" }] }],
      },
      "VALIDATION_FAILED",
    ],
    [
      "a storage key that is no upload",
      "documents",
      {
        action: "create",
        path: "storage-block",
        sections: [
          { name: "A", content: [{ blockType: "file", type: "storage", mediaType: "application/pdf", key: "nope", filename: "a.pdf" }] },
        ],
      },
      "NOT_FOUND",
    ],
    [
      "a heading that repeats the section name",
      "documents",
      { action: "create", path: "dup-heading", sections: [{ name: "Intro", content: [text("## Intro\nbody")] }] },
      "DUPLICATE_HEADING",
    ],
    ["an unknown branch", "read", { documentId: "00000000-0000-4000-8000-000000000000", branchName: "main" }, "NOT_FOUND"],
    [
      "an update with nothing to change",
      "documents",
      { action: "update", documentId: "00000000-0000-4000-8000-000000000000", branchName: "main" },
      "VALIDATION_FAILED",
    ],
  ])("%s", async (_label, tool, args, code) => {
    const before = await callMcp<{ documents: unknown[] }>(mcp, "documents", { action: "list", limit: 200 });
    const error = await callMcpError(mcp, tool, args);
    expect(error.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(10);
    const after = await callMcp<{ documents: unknown[] }>(mcp, "documents", { action: "list", limit: 200 });
    expect(after.documents).toEqual(before.documents);
  });
});
