/** The `sections` tool through a real MCP client (and tRPC), on PostgreSQL when configured. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { text } from "../helpers/blocks";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { uploads } from "@/db/schema";
import { openDatabase } from "@/db/client";
import type { ToolInput } from "@/server/actions/registry";
import { type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { asSent } from "../helpers/as-sent";
import { toolError } from "../helpers/tool-error";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let mcp: Client;

interface SectionRead {
  sectionId: string;
  name: string;
  content: Array<Record<string, unknown>>;
  contentHash: string;
  position: number;
  defaultPermission: string | null;
  aiAccess: string | null;
  references: Array<{ referenceId: string; targetDocumentId: string; targetSectionId: string | null; displayTitle: string | null }>;
  comments: Array<{ commentId: string; body: string; authorId: string; mentions: string[]; branchName: string }>;
}
interface DocRead {
  headCommitId: string;
  sections: SectionRead[];
}

let documentId: string;

async function read(branchName = "main"): Promise<DocRead> {
  return callMcp<DocRead>(mcp, "read", { documentId, branchName });
}

async function logLength(branchName: string): Promise<number> {
  const log = await callMcp<{ commits: unknown[] }>(mcp, "documents", { action: "log", documentId, branchName, limit: 200 });
  return log.commits.length;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  mcp = await server.mcpClient(owner.token);
  ({ documentId } = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "guide" }));
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe("create and batch_create", () => {
  test("create appends, or inserts at a position, and commits with a generated message", async () => {
    const a = await callMcp<{ sectionId: string; position: number; contentHash: string; commitId: string; changed: boolean }>(
      mcp,
      "sections",
      {
        action: "create",
        documentId,
        branchName: "main",
        name: "Alpha",
        content: [text("first")],
      },
    );
    expect(a).toMatchObject({ position: 0, changed: true });
    const c = await callMcp<{ position: number }>(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Gamma",
      content: [],
    });
    expect(c.position).toBe(1);
    const b = await callMcp<{ sectionId: string; position: number }>(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Beta",
      content: [text("between")],
      position: 1,
      commitMessage: "Insert Beta",
    });
    expect(b.position).toBe(1);
    const doc = await read();
    expect(doc.sections.map((s) => s.name)).toEqual(["Alpha", "Beta", "Gamma"]);
    expect(doc.sections[0]!.contentHash).toBe(a.contentHash);
    expect(doc.headCommitId).not.toBe(a.commitId);
    const log = await callMcp<{ commits: Array<{ message: string }> }>(mcp, "documents", { action: "log", documentId, limit: 3 });
    expect(log.commits.map((c) => c.message)).toEqual(["Insert Beta", 'Add section "Gamma"', 'Add section "Alpha"']);
  });

  test("a position past the end is a clear error", async () => {
    const error = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "X",
      content: [],
      position: 99,
    });
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.message).toMatch(/position 99 is out of range.*0-3/);
  });

  test("batch_create adds all sections in order in one commit", async () => {
    const before = await logLength("main");
    const result = await callMcp<{ sectionIds: string[]; positions: number[]; contentHashes: string[]; commitId: string }>(
      mcp,
      "sections",
      {
        action: "batch_create",
        documentId,
        branchName: "main",
        sections: [
          { name: "One", content: [text("1")] },
          { name: "Two", content: [text("2")] },
        ],
      },
    );
    expect(result.positions).toEqual([3, 4]);
    expect(await logLength("main")).toBe(before + 1);
    const doc = await read();
    expect(doc.sections.slice(3).map((s) => [s.sectionId, s.name, s.contentHash])).toEqual([
      [result.sectionIds[0], "One", result.contentHashes[0]],
      [result.sectionIds[1], "Two", result.contentHashes[1]],
    ]);
  });

  test("batch_create is all or nothing: one bad section stores none", async () => {
    const before = await read();
    const error = await callMcpError(mcp, "sections", {
      action: "batch_create",
      documentId,
      branchName: "main",
      sections: [
        { name: "Fine", content: [text("ok")] },
        { name: "Dup", content: [text("## Dup\nrepeats its name")] },
      ],
    });
    expect(error.code).toBe("DUPLICATE_HEADING");
    expect(error.message).toMatch(/sections\[1\]/);
    expect((await read()).headCommitId).toBe(before.headCommitId);
  });
});

describe("every block variant", () => {
  test("is accepted and read back exactly", async () => {
    await server.db.insert(uploads).values([
      {
        key: "ws/abc/report.pdf",
        workspaceId: owner.actor.workspaceId,
        filename: "report.pdf",
        mediaType: "application/pdf",
        createdBy: owner.userId,
        completedAt: new Date(),
      },
    ]);
    const content = [
      text("Some **markdown**"),
      { blockType: "image", type: "url", mediaType: "image/png", url: "https://example.com/x.png", alt: "x" },
      { blockType: "image", type: "url", mediaType: "image/jpeg", url: "http://example.com/y.jpg" },
      { blockType: "image", type: "base64", mediaType: "image/png", data: "iVBORw0KGgo=" },
      { blockType: "image", type: "storage", mediaType: "image/png", key: "ws/abc/report.pdf" },
      { blockType: "document", type: "url", mediaType: "application/pdf", url: "https://example.com/a.pdf", filename: "a.pdf" },
      {
        blockType: "csv",
        type: "storage",
        mediaType: "text/csv",
        key: "ws/abc/report.pdf",
        filename: "d.csv",
        headers: ["a", "b"],
        rowCount: 3,
      },
      { blockType: "file", type: "storage", mediaType: "application/pdf", key: "ws/abc/report.pdf", filename: "report.pdf" },
      { blockType: "database_embed", databaseId: "7d1c3f0e-31a4-4f0f-9d8e-0d1b8a4e2c11" },
    ];
    const created = await callMcp<{ sectionId: string }>(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Blocks",
      content,
    });
    const doc = await callMcp<DocRead>(mcp, "read", { documentId, sectionIds: [created.sectionId] });
    expect(doc.sections[0]!.content).toEqual(content);
  });

  test.each([
    ["unknown blockType", { blockType: "video", url: "https://x" }, "content.0"],
    ["text without text", { blockType: "text" }, "content.0.text"],
    ["image without type", { blockType: "image", mediaType: "image/png", url: "https://x" }, "content.0.type"],
    [
      "image url with non-image media type",
      { blockType: "image", type: "url", mediaType: "text/html", url: "https://x.com" },
      "content.0.mediaType",
    ],
    ["image url with ftp URL", { blockType: "image", type: "url", mediaType: "image/png", url: "ftp://x.com/a.png" }, "content.0.url"],
    ["base64 with junk", { blockType: "image", type: "base64", mediaType: "image/png", data: "not base64!" }, "content.0.data"],
    [
      "document without filename",
      { blockType: "document", type: "url", mediaType: "application/pdf", url: "https://x.com/a.pdf" },
      "content.0.filename",
    ],
    [
      "csv with negative rowCount",
      { blockType: "csv", type: "storage", mediaType: "text/csv", key: "k", filename: "a.csv", headers: [], rowCount: -1 },
      "content.0.rowCount",
    ],
    [
      "file with url type",
      { blockType: "file", type: "url", mediaType: "application/pdf", url: "https://x.com", filename: "a" },
      "content.0.type",
    ],
    ["database_embed with bad id", { blockType: "database_embed", databaseId: "nope" }, "content.0.databaseId"],
    ["an extra field", { blockType: "text", text: "x", color: "red" }, "content.0"],
  ])("rejects %s naming the block and field", async (_label, block, path) => {
    const error = await callMcpError(mcp, "sections", { action: "create", documentId, branchName: "main", name: "Bad", content: [block] });
    expect(error.code).toBe("VALIDATION_FAILED");
    const issues = (error.details as { issues: Array<{ path: string }> }).issues;
    expect(issues.some((i) => i.path.startsWith(path))).toBe(true);
  });

  test("image type file is refused with guidance to use the proxy or upload_url", async () => {
    const error = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Local",
      content: [{ blockType: "image", type: "file", path: "/tmp/a.png" }],
    });
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.message).toMatch(/mcp-proxy/);
    expect(error.message).toMatch(/upload_url/);
  });

  test("a storage key that is not an upload of this workspace is NOT_FOUND", async () => {
    const error = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Missing",
      content: [{ blockType: "file", type: "storage", mediaType: "application/pdf", key: "../../etc/passwd", filename: "x" }],
    });
    expect(error.code).toBe("NOT_FOUND");
  });
});

describe("update, delete, optimistic locking", () => {
  test("update needs newContent or newName, replaces content, renames", async () => {
    const doc = await read();
    const alpha = doc.sections[0]!;
    const nothing = await callMcpError(mcp, "sections", { action: "update", documentId, branchName: "main", sectionId: alpha.sectionId });
    expect(nothing.code).toBe("VALIDATION_FAILED");
    const renamed = await callMcp<{ contentHash: string; name: string }>(mcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: alpha.sectionId,
      newName: "Alpha One",
      newContent: [text("replaced"), text("twice")],
      expectedContentHash: alpha.contentHash,
    });
    expect(renamed.name).toBe("Alpha One");
    const after = (await read()).sections[0]!;
    expect(after).toMatchObject({ name: "Alpha One", contentHash: renamed.contentHash, content: [text("replaced"), text("twice")] });
    const log = await callMcp<{ commits: Array<{ message: string }> }>(mcp, "documents", { action: "log", documentId, limit: 1 });
    expect(log.commits[0]!.message).toBe('Rename section "Alpha" to "Alpha One"');
  });

  test("a stale expectedContentHash changes nothing and returns the current hash", async () => {
    const doc = await read();
    const alpha = doc.sections[0]!;
    const error = await callMcpError(mcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: alpha.sectionId,
      newContent: [text("lost update")],
      expectedContentHash: "0".repeat(64),
    });
    expect(error.code).toBe("CONTENT_HASH_MISMATCH");
    expect(error.details).toMatchObject({ currentContentHash: alpha.contentHash });
    expect(error.message).toMatch(/read/);
    expect((await read()).headCommitId).toBe(doc.headCommitId);
  });

  test("16 concurrent updates with the same expected hash: exactly one wins, one commit", async () => {
    const doc = await read();
    const target = doc.sections[1]!;
    const before = await logLength("main");
    const clients = await Promise.all(Array.from({ length: 4 }, () => server.mcpClient(owner.token)));
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        clients[i % clients.length]!.callTool({
          name: "sections",
          arguments: {
            action: "update",
            documentId,
            branchName: "main",
            sectionId: target.sectionId,
            newContent: [text(`writer ${i}`)],
            expectedContentHash: target.contentHash,
          },
        }),
      ),
    );
    await Promise.all(clients.map((c) => c.close()));
    const winners = results.filter((r) => !r.isError);
    const losers = results.filter((r) => r.isError).map((r) => toolError(r).code);
    expect(winners).toHaveLength(1);
    expect(losers).toEqual(Array(15).fill("CONTENT_HASH_MISMATCH"));
    expect(await logLength("main")).toBe(before + 1);
    const winnerHash = (winners[0]!.structuredContent as { contentHash: string }).contentHash;
    expect((await read()).sections[1]!.contentHash).toBe(winnerHash);
  });

  test("delete removes the section; unknown sections are NOT_FOUND", async () => {
    const doc = await read();
    const gamma = doc.sections.find((s) => s.name === "Gamma")!;
    await callMcp(mcp, "sections", {
      action: "delete",
      documentId,
      branchName: "main",
      sectionId: gamma.sectionId,
      expectedContentHash: gamma.contentHash,
    });
    expect((await read()).sections.map((s) => s.name)).not.toContain("Gamma");
    const again = await callMcpError(mcp, "sections", { action: "delete", documentId, branchName: "main", sectionId: gamma.sectionId });
    expect(again.code).toBe("NOT_FOUND");
    const badBranch = await callMcpError(mcp, "sections", { action: "delete", documentId, branchName: "nope", sectionId: gamma.sectionId });
    expect(badBranch.code).toBe("NOT_FOUND");
    const badDoc = await callMcpError(mcp, "sections", {
      action: "delete",
      documentId: "00000000-0000-4000-8000-000000000000",
      branchName: "main",
      sectionId: gamma.sectionId,
    });
    expect(badDoc.code).toBe("NOT_FOUND");
  });
});

describe("reorder", () => {
  test("sets the order when every id is listed once", async () => {
    const ids = (await read()).sections.map((s) => s.sectionId);
    const reversed = [...ids].reverse();
    const result = await callMcp<{ sectionOrder: string[] }>(mcp, "sections", {
      action: "reorder",
      documentId,
      branchName: "main",
      sectionOrder: reversed,
    });
    expect(result.sectionOrder).toEqual(reversed);
    expect((await read()).sections.map((s) => s.sectionId)).toEqual(reversed);
    await callMcp(mcp, "sections", { action: "reorder", documentId, branchName: "main", sectionOrder: ids });
  });

  test("missing, extra, duplicated and unknown ids are named", async () => {
    const ids = (await read()).sections.map((s) => s.sectionId);
    const stranger = "11111111-1111-4111-8111-111111111111";
    const error = await callMcpError(mcp, "sections", {
      action: "reorder",
      documentId,
      branchName: "main",
      sectionOrder: [ids[0], ids[0], ...ids.slice(2), stranger],
    });
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.details).toMatchObject({ missing: [ids[1]], unknown: [stranger], duplicated: [ids[0]] });
    expect(error.message).toContain(ids[1]!);
    expect(error.message).toContain(stranger);
  });
});

describe("headings, permissions, references, comments", () => {
  test("content starting with the section name as H2 is DUPLICATE_HEADING (ATX and setext)", async () => {
    for (const t of ["## Pricing\nbody", "  ##   pricing  ##\n", "Pricing\n-------\nbody"]) {
      const error = await callMcpError(mcp, "sections", {
        action: "create",
        documentId,
        branchName: "main",
        name: "Pricing",
        content: [text(t)],
      });
      expect(error.code).toBe("DUPLICATE_HEADING");
    }
    await callMcp(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Pricing",
      content: [text("## Details\nok")],
    });
  });

  // Set in person: an API token (an agent) never changes access (agent-access-and-protected-branches.test.ts).
  test("section permissions only on a non-default branch, versioned there", async () => {
    const section = (await read()).sections[0]!;
    await expect(
      server.callTool("sections", owner.userId, {
        action: "update",
        documentId,
        branchName: "main",
        sectionId: section.sectionId,
        aiAccess: "read",
      }),
    ).rejects.toMatchObject({ code: "DEFAULT_BRANCH_PROTECTED" });
    await callMcp(mcp, "documents", { action: "create_branch", documentId, branchName: "perms" });
    await server.callTool("sections", owner.userId, {
      action: "update",
      documentId,
      branchName: "perms",
      sectionId: section.sectionId,
      aiAccess: "read",
      defaultPermission: "edit",
    });
    const created = await server.callTool("sections", owner.userId, {
      action: "create",
      documentId,
      branchName: "perms",
      name: "Secret",
      content: [],
      defaultPermission: "none",
    });
    const onBranch = await read("perms");
    expect(onBranch.sections[0]).toMatchObject({ aiAccess: "read", defaultPermission: "edit" });
    expect(onBranch.sections.find((s) => s.sectionId === created.sectionId)).toMatchObject({ defaultPermission: "none", aiAccess: null });
    expect((await read()).sections[0]).toMatchObject({ aiAccess: null, defaultPermission: null });
  });

  test("add_reference / remove_reference", async () => {
    const other = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
      action: "create",
      path: "other",
      sections: [{ name: "Target", content: [] }],
    });
    const section = (await read()).sections[0]!;
    const added = await callMcp<{ referenceId: string }>(mcp, "sections", {
      action: "add_reference",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      targetDocumentId: other.documentId,
      targetSectionId: other.sectionIds[0],
      displayTitle: "See target",
    });
    const wholeDoc = await callMcp<{ referenceId: string }>(mcp, "sections", {
      action: "add_reference",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      targetDocumentId: other.documentId,
    });
    expect((await read()).sections[0]!.references).toEqual([
      {
        referenceId: added.referenceId,
        targetDocumentId: other.documentId,
        targetSectionId: other.sectionIds[0],
        displayTitle: "See target",
      },
      { referenceId: wholeDoc.referenceId, targetDocumentId: other.documentId, targetSectionId: null, displayTitle: null },
    ]);
    const badSection = await callMcpError(mcp, "sections", {
      action: "add_reference",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      targetDocumentId: other.documentId,
      targetSectionId: section.sectionId,
    });
    expect(badSection.code).toBe("NOT_FOUND");
    const badDoc = await callMcpError(mcp, "sections", {
      action: "add_reference",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      targetDocumentId: "00000000-0000-4000-8000-000000000000",
    });
    expect(badDoc.code).toBe("NOT_FOUND");
    await callMcp(mcp, "sections", { action: "remove_reference", documentId, branchName: "main", referenceId: added.referenceId });
    expect((await read()).sections[0]!.references.map((r) => r.referenceId)).toEqual([wholeDoc.referenceId]);
    const gone = await callMcpError(mcp, "sections", {
      action: "remove_reference",
      documentId,
      branchName: "main",
      referenceId: added.referenceId,
    });
    expect(gone.code).toBe("NOT_FOUND");
  });

  test("new comments are stored, anchored, returned by read, and must be kept intact", async () => {
    const section = (await read()).sections[0]!;
    await callMcp(mcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      newContent: [
        text(`Prices <svc:comment-new body="Is this &quot;final&quot;?" mentions="${member.userId}">rise in May</svc:comment-new>.`),
      ],
    });
    const commented = (await read()).sections[0]!;
    const textBlock = commented.content[0] as { text: string };
    const match = /<svc:comment id="([0-9a-f-]{36})">rise in May<\/svc:comment>/.exec(textBlock.text);
    expect(match).not.toBeNull();
    expect(commented.comments).toEqual([
      expect.objectContaining({
        commentId: match![1],
        body: 'Is this "final"?',
        authorId: owner.userId,
        mentions: [member.userId],
        branchName: "main",
      }),
    ]);

    const dropped = await callMcpError(mcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      newContent: [text("Prices rise in May.")],
    });
    expect(dropped.code).toBe("COMMENT_TAGS_REMOVED");
    expect(dropped.details).toEqual({ commentIds: [match![1]] });
    const altered = await callMcpError(mcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      newContent: [text(textBlock.text.replace("rise in May", "rise in June"))],
    });
    expect(altered.code).toBe("COMMENT_TAGS_REMOVED");
    await callMcp(mcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      newContent: [text(`${textBlock.text} More text after.`)],
    });

    const stranger = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Mention",
      content: [text('<svc:comment-new body="hi" mentions="22222222-2222-4222-8222-222222222222">x</svc:comment-new>')],
    });
    expect(stranger.code).toBe("VALIDATION_FAILED");
    const noBody = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "NoBody",
      content: [text("<svc:comment-new>x</svc:comment-new>")],
    });
    expect(noBody.code).toBe("VALIDATION_FAILED");
    const forged = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Forged",
      content: [text(`<svc:comment id="${match![1]}">rise in May</svc:comment>`)],
    });
    expect(forged.code).toBe("VALIDATION_FAILED");
  });
});

describe("parallel batch_create", () => {
  test("8 parallel batches are each all-or-nothing, in order, with no duplicates", async () => {
    const { documentId: fresh } = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "parallel" });
    const clients = await Promise.all(Array.from({ length: 4 }, () => server.mcpClient(owner.token)));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, batch) =>
        callMcp<{ sectionIds: string[] }>(clients[batch % 4]!, "sections", {
          action: "batch_create",
          documentId: fresh,
          branchName: "main",
          sections: Array.from({ length: 5 }, (_, i) => ({ name: `b${batch}-s${i}`, content: [text(`${batch}.${i}`)] })),
        }),
      ),
    );
    await Promise.all(clients.map((c) => c.close()));
    const doc = await callMcp<DocRead>(mcp, "read", { documentId: fresh });
    expect(doc.sections).toHaveLength(40);
    const names = doc.sections.map((s) => s.name);
    expect(new Set(names).size).toBe(40);
    for (let start = 0; start < 40; start += 5) {
      const batch = names[start]!.split("-")[0];
      expect(names.slice(start, start + 5)).toEqual(Array.from({ length: 5 }, (_, i) => `${batch}-s${i}`));
    }
    for (const r of results) {
      const positions = r.sectionIds.map((id) => doc.sections.findIndex((s) => s.sectionId === id));
      expect(positions).toEqual(positions.map((_, i) => positions[0]! + i));
    }
    const log = await callMcp<{ commits: unknown[] }>(mcp, "documents", { action: "log", documentId: fresh, limit: 50 });
    expect(log.commits).toHaveLength(9);
  });
});

describe("group commit", () => {
  test("concurrent writes on one branch: a refused write fails alone, every other one is its own commit on one chain", async () => {
    const { documentId: busy, sectionIds } = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
      action: "create",
      path: "group-commit",
      sections: Array.from({ length: 4 }, (_, i) => ({ name: `S${i}`, content: [text("start")] })),
    });
    const staleHash = "0".repeat(64);
    const calls = Array.from({ length: 24 }, (_, n) => ({
      action: "update",
      documentId: busy,
      branchName: "main",
      sectionId: sectionIds[n % 4],
      newContent: [text(`write ${n}`)],
      // Every fifth write carries a stale hash and must fail alone.
      ...(n % 5 === 4 ? { expectedContentHash: staleHash } : {}),
    }));
    const results = await Promise.all(calls.map((args) => mcp.callTool({ name: "sections", arguments: args })));
    const failed = results.flatMap((r, n) => (r.isError ? [n] : []));
    expect(failed).toEqual([4, 9, 14, 19]);
    for (const n of failed) expect(toolError(results[n]!).code).toBe("CONTENT_HASH_MISMATCH");
    const log = await callMcp<{ commits: Array<{ commitId: string; parentIds: string[] }> }>(mcp, "documents", {
      action: "log",
      documentId: busy,
      limit: 50,
    });
    expect(log.commits).toHaveLength(1 + 20);
    // One linear chain holding exactly the successful writes' commits (in the order the server received them).
    log.commits.slice(0, -1).forEach((c, i) => {
      expect(c.parentIds).toEqual([log.commits[i + 1]!.commitId]);
    });
    const commitOf = new Map(
      results.flatMap((r, n) => (r.isError ? [] : [[(r.structuredContent as { commitId: string }).commitId, n] as const])),
    );
    expect(new Set(log.commits.slice(0, 20).map((c) => c.commitId))).toEqual(new Set(commitOf.keys()));
    // Each section holds its write that landed last.
    const newestFirst = log.commits.slice(0, 20).map((c) => commitOf.get(c.commitId)!);
    const doc = await callMcp<DocRead>(mcp, "read", { documentId: busy });
    expect(doc.sections.map((s) => s.content)).toEqual(sectionIds.map((_, k) => [text(`write ${newestFirst.find((n) => n % 4 === k)}`)]));
  });

  test.skipIf(!testDatabaseUrl())("two server processes writing one branch: no write lost, each its own commit", async () => {
    const second = await openDatabase({ url: (server.database as TestDatabase).url!, maxConnections: 4 });
    const other = await startTestServer({ database: second });
    try {
      const { documentId: busy, sectionIds } = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
        action: "create",
        path: "two-processes",
        sections: Array.from({ length: 8 }, (_, i) => ({ name: `S${i}`, content: [text("start")] })),
      });
      const clients = [await server.mcpClient(owner.token), await other.mcpClient(owner.token)];
      const writesPerSection = 6;
      const ok = await Promise.all(
        sectionIds.map(async (sectionId, i) => {
          const client = clients[i % 2]!;
          for (let n = 0; n < writesPerSection; n++) {
            await callMcp(client, "sections", {
              action: "update",
              documentId: busy,
              branchName: "main",
              sectionId,
              newContent: [text(`s${i} w${n}`)],
            });
          }
          return writesPerSection;
        }),
      );
      await Promise.all(clients.map((c) => c.close()));
      const log = await callMcp<{ commits: unknown[] }>(mcp, "documents", { action: "log", documentId: busy, limit: 100 });
      expect(log.commits).toHaveLength(1 + ok.reduce((a, b) => a + b, 0));
      const doc = await callMcp<DocRead>(mcp, "read", { documentId: busy });
      expect(doc.sections.map((s) => s.content)).toEqual(sectionIds.map((_, i) => [text(`s${i} w${writesPerSection - 1}`)]));
    } finally {
      await other.close();
      await second.close();
    }
  });

  test.skipIf(!testDatabaseUrl())(
    "a busy server sees a change another process made: refusals and no-ops are judged on the stored head",
    async () => {
      const second = await openDatabase({ url: (server.database as TestDatabase).url!, maxConnections: 4 });
      const other = await startTestServer({ database: second });
      const busyClients = await Promise.all(Array.from({ length: 4 }, () => server.mcpClient(owner.token)));
      const otherClient = await other.mcpClient(owner.token);
      try {
        const { documentId: doc, sectionIds } = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
          action: "create",
          path: "busy-and-elsewhere",
          sections: [
            { name: "Target", content: [text("original")] },
            ...Array.from({ length: 4 }, (_, i) => ({ name: `Busy ${i}`, content: [text("x")] })),
          ],
        });
        const [target, ...busy] = sectionIds;
        let running = true;
        // Keep this server's queue for the branch alive (and its remembered tip in use).
        const load = busy.map(async (sectionId, i) => {
          for (let n = 0; running; n++) {
            await callMcp(busyClients[i]!, "sections", {
              action: "update",
              documentId: doc,
              branchName: "main",
              sectionId,
              newContent: [text(`busy ${n}`)],
            });
          }
        });
        const before = (await callMcp<DocRead>(mcp, "read", { documentId: doc, sectionIds: [target] })).sections[0]!.contentHash;
        const changed = await callMcp<{ contentHash: string }>(otherClient, "sections", {
          action: "update",
          documentId: doc,
          branchName: "main",
          sectionId: target,
          newContent: [text("changed elsewhere")],
        });
        // The stale hash is refused with the current one; rewriting what is stored is a no-op; the current hash is accepted.
        const updateTarget = (content: string, expectedContentHash: string) =>
          mcp.callTool({
            name: "sections",
            arguments: {
              action: "update",
              documentId: doc,
              branchName: "main",
              sectionId: target,
              newContent: [text(content)],
              expectedContentHash,
            },
          });
        const stale = await updateTarget("mine", before);
        expect(toolError(stale)).toMatchObject({
          code: "CONTENT_HASH_MISMATCH",
          details: { currentContentHash: changed.contentHash },
        });
        expect((await updateTarget("changed elsewhere", changed.contentHash)).structuredContent).toMatchObject({ changed: false });
        expect((await updateTarget("mine", changed.contentHash)).isError).toBeFalsy();
        running = false;
        await Promise.all(load);
        expect((await callMcp<DocRead>(mcp, "read", { documentId: doc, sectionIds: [target] })).sections[0]!.content).toEqual([
          text("mine"),
        ]);
      } finally {
        await Promise.all([...busyClients, otherClient].map((c) => c.close()));
        await other.close();
        await second.close();
      }
    },
  );
});

describe("access changes reach writes at once", () => {
  test("a member's writes stop the moment their grant or the AI limit is lowered, and resume when raised", async () => {
    const { documentId: shared } = await callMcp<{ documentId: string }>(mcp, "documents", {
      action: "create",
      path: "access-changes",
      sections: [{ name: "Notes", content: [text("v0")] }],
    });
    const [sectionId] = (await callMcp<DocRead>(mcp, "read", { documentId: shared })).sections.map((s) => s.sectionId);
    const memberMcp = await server.mcpClient(member.token);
    // Permissions are managed by people (AI calls never may), so through tRPC as the owner.
    const setPermissions = (input: Record<string, unknown>) =>
      server.trpcCaller(owner).documents({ action: "set_permissions", documentId: shared, ...input } as ToolInput<"documents">);
    const update = (n: number) =>
      memberMcp.callTool({
        name: "sections",
        arguments: { action: "update", documentId: shared, branchName: "main", sectionId, newContent: [text(`v${n}`)] },
      });
    const codeOfResult = (result: Awaited<ReturnType<typeof update>>) => (result.isError ? toolError(result).code : "ok");
    try {
      expect(codeOfResult(await update(1))).toBe("ok");
      await setPermissions({ grants: [{ userId: member.userId, permission: "read" }] });
      expect(codeOfResult(await update(2))).toBe("PERMISSION_DENIED");
      await setPermissions({ grants: [{ userId: member.userId, permission: null }] });
      expect(codeOfResult(await update(3))).toBe("ok");
      await setPermissions({ aiAccess: "read" });
      expect(codeOfResult(await update(4))).toBe("PERMISSION_DENIED");
      const doc = await callMcp<DocRead>(mcp, "read", { documentId: shared });
      expect(doc.sections[0]!.content).toEqual([text("v3")]);
    } finally {
      await memberMcp.close();
    }
  });
});

describe("the tRPC face", () => {
  test("the same actions and errors through a tRPC caller and over HTTP with a bearer token", async () => {
    const caller = server.trpcCaller(owner);
    const created = (await caller.sections({
      action: "create",
      documentId,
      branchName: "main",
      name: "Via tRPC",
      content: [text("hi")],
    })) as {
      sectionId: string;
    };
    const doc = await caller.read({ documentId, sectionIds: [created.sectionId] });
    expect(doc.sections[0]!.name).toBe("Via tRPC");
    await expect(caller.sections(asSent({ action: "delete", documentId, branchName: "main", sectionId: "bad" }))).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    const http = server.trpcClient(owner.token);
    const viaHttp = await http.read.query({ documentId, sectionIds: [created.sectionId] });
    expect(viaHttp.sections[0]!.sectionId).toBe(created.sectionId);
    const failure = await http.sections
      .mutate({
        action: "update",
        documentId,
        branchName: "main",
        sectionId: created.sectionId,
        newContent: [],
        expectedContentHash: "f".repeat(64),
      })
      .catch((e: { data?: { error?: { code: string } } }) => e);
    expect((failure as { data: { error: { code: string } } }).data.error.code).toBe("CONTENT_HASH_MISMATCH");
    await expect(server.trpcClient().read.query({ documentId })).rejects.toMatchObject({ data: { code: "UNAUTHORIZED" } });
  });
});
