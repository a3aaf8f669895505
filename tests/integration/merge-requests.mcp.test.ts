/** The merge request workflow end to end through a real MCP client. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type Database, preparingEveryStatement } from "@/db/client";
import { withCommitHooks } from "@/db/commit-hooks";
import * as schema from "@/db/schema";
import { tools } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { text } from "../helpers/blocks";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

let server: TestServer;
let owner: TestUser;
let reviewer: TestUser;
let mcp: Client;
let reviewerMcp: Client;

interface Analysis {
  hasConflicts: boolean;
  hasTagConflicts: boolean;
  hasPathCollision: boolean;
  hasDocumentDeletionConflict: boolean;
  propertyConflicts: Array<{ columnId: string; base: unknown; source: unknown; target: unknown }>;
  fastForward: boolean;
  upToDate: boolean;
  sections: Array<{ sectionId: string; name: string; status: string; sourceDiff: string; targetDiff: string }>;
}
interface Execution {
  mergeCommitId: string;
  fastForward: boolean;
  message: string;
  warnings: string[];
}
interface DocRead {
  headCommitId: string;
  path: string;
  deleted: boolean;
  tags: Array<{ tagId: string }>;
  properties: Record<string, unknown>;
  sections: Array<{ sectionId: string; name: string; content: unknown[]; contentHash: string }>;
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  reviewer = await server.createUser("rita@example.test", "Rita Reviewer");
  mcp = await server.mcpClient(owner.token);
  reviewerMcp = await server.mcpClient(reviewer.token);
});

afterAll(async () => {
  await mcp?.close();
  await reviewerMcp?.close();
  await server?.close();
});

/** A document with sections A, B, C on main and a branch `feature` from it. */
async function setup(path: string) {
  const doc = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
    action: "create",
    path,
    sections: ["A", "B", "C"].map((name) => ({ name, content: [text(`${name} original`)] })),
  });
  await callMcp(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
  const [a, b, c] = doc.sectionIds as [string, string, string];
  const update = (branchName: string, sectionId: string, t: string) =>
    callMcp(mcp, "sections", { action: "update", documentId: doc.documentId, branchName, sectionId, newContent: [text(t)] });
  const read = (branchName = "main") => callMcp<DocRead>(mcp, "read", { documentId: doc.documentId, branchName });
  const open = (sourceBranch = "feature", targetBranch = "main", extra: Record<string, unknown> = {}) =>
    callMcp<{ mergeRequestId: string; status: string }>(mcp, "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch,
      targetBranch,
      title: `Merge ${sourceBranch}`,
      ...extra,
    });
  return { documentId: doc.documentId, a, b, c, update, read, open };
}

const analyze = (mergeRequestId: string) => callMcp<Analysis>(mcp, "merge_requests", { action: "analyze", mergeRequestId });
const execute = (mergeRequestId: string, extra: Record<string, unknown> = {}) =>
  callMcp<Execution>(mcp, "merge_requests", { action: "execute", mergeRequestId, ...extra });

describe("create, get, list, update, close, reviews", () => {
  test("the request lifecycle and reviewer states", async () => {
    const d = await setup("lifecycle");
    const empty = await callMcpError(mcp, "merge_requests", {
      action: "create",
      documentId: d.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Nothing yet",
    });
    expect(empty).toMatchObject({ code: "NOTHING_TO_MERGE", message: expect.stringMatching(/already contains every commit of "feature"/) });
    await d.update("feature", d.a, "A on feature");
    const created = await callMcp<{ mergeRequestId: string; status: string; reviewers: unknown[] }>(mcp, "merge_requests", {
      action: "create",
      documentId: d.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Lifecycle",
      description: "desc",
      reviewerIds: [reviewer.userId],
    });
    expect(created.status).toBe("open");
    const dup = await callMcpError(mcp, "merge_requests", {
      action: "create",
      documentId: d.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "again",
    });
    expect(dup.code).toBe("MERGE_REQUEST_EXISTS");
    const same = await callMcpError(mcp, "merge_requests", {
      action: "create",
      documentId: d.documentId,
      sourceBranch: "main",
      targetBranch: "main",
      title: "x",
    });
    expect(same.code).toBe("VALIDATION_FAILED");
    const noBranch = await callMcpError(mcp, "merge_requests", {
      action: "create",
      documentId: d.documentId,
      sourceBranch: "nope",
      targetBranch: "main",
      title: "x",
    });
    expect(noBranch.code).toBe("NOT_FOUND");
    const stranger = await callMcpError(mcp, "merge_requests", {
      action: "update",
      mergeRequestId: created.mergeRequestId,
      reviewerIds: ["33333333-3333-4333-8333-333333333333"],
    });
    expect(stranger.code).toBe("VALIDATION_FAILED");

    const got = await callMcp<{ reviewers: Array<{ userId: string; name: string; email: string; state: string }> }>(mcp, "merge_requests", {
      action: "get",
      mergeRequestId: created.mergeRequestId,
    });
    expect(got.reviewers).toEqual([
      expect.objectContaining({ userId: reviewer.userId, name: "Rita Reviewer", email: "rita@example.test", state: "pending" }),
    ]);

    const notReviewer = await callMcpError(mcp, "merge_requests", { action: "approve", mergeRequestId: created.mergeRequestId });
    expect(notReviewer.code).toBe("PERMISSION_DENIED");
    for (const [action, state] of [
      ["approve", "approved"],
      ["request_changes", "changes_requested"],
      ["reset", "pending"],
      ["approve", "approved"],
    ] as const) {
      const after = await callMcp<{ reviewers: Array<{ state: string; reviewedAt: string | null }> }>(reviewerMcp, "merge_requests", {
        action,
        mergeRequestId: created.mergeRequestId,
      });
      expect(after.reviewers[0]).toMatchObject({ state });
      expect(after.reviewers[0]!.reviewedAt).not.toBeNull();
    }

    const updated = await callMcp<{ title: string; description: string | null; reviewers: unknown[] }>(mcp, "merge_requests", {
      action: "update",
      mergeRequestId: created.mergeRequestId,
      newTitle: "Renamed",
      newDescription: null,
      reviewerIds: [owner.userId],
      removeReviewerIds: [reviewer.userId],
    });
    expect(updated).toMatchObject({ title: "Renamed", description: null });
    expect(updated.reviewers).toEqual([expect.objectContaining({ userId: owner.userId, state: "pending" })]);

    const listed = await callMcp<{ mergeRequests: Array<{ mergeRequestId: string }> }>(mcp, "merge_requests", {
      action: "list",
      documentId: d.documentId,
      status: "open",
    });
    expect(listed.mergeRequests.map((m) => m.mergeRequestId)).toEqual([created.mergeRequestId]);

    const closed = await callMcp<{ status: string }>(mcp, "merge_requests", { action: "close", mergeRequestId: created.mergeRequestId });
    expect(closed.status).toBe("closed");
    for (const action of ["close", "execute", "approve"]) {
      const error = await callMcpError(mcp, "merge_requests", { action, mergeRequestId: created.mergeRequestId });
      expect(error.code).toBe(action === "approve" ? "MERGE_REQUEST_NOT_OPEN" : "MERGE_REQUEST_NOT_OPEN");
    }
    const reopenedUpdate = await callMcpError(mcp, "merge_requests", {
      action: "update",
      mergeRequestId: created.mergeRequestId,
      newTitle: "x",
    });
    expect(reopenedUpdate.code).toBe("MERGE_REQUEST_NOT_OPEN");
  });

  test("list pages newest first", async () => {
    const d = await setup("listing");
    const ids: string[] = [];
    for (const branch of ["b1", "b2", "b3"]) {
      await callMcp(mcp, "documents", { action: "create_branch", documentId: d.documentId, branchName: branch });
      await d.update(branch, d.a, `A on ${branch}`);
      ids.push((await d.open(branch)).mergeRequestId);
    }
    const first = await callMcp<{ mergeRequests: Array<{ mergeRequestId: string }>; nextCursor: string }>(mcp, "merge_requests", {
      action: "list",
      documentId: d.documentId,
      limit: 2,
    });
    const second = await callMcp<{ mergeRequests: Array<{ mergeRequestId: string }>; nextCursor: string | null }>(mcp, "merge_requests", {
      action: "list",
      documentId: d.documentId,
      limit: 2,
      cursor: first.nextCursor,
    });
    expect([...first.mergeRequests, ...second.mergeRequests].map((m) => m.mergeRequestId)).toEqual([...ids].reverse());
    expect(second.nextCursor).toBeNull();
  });
});

describe("analyze and execute", () => {
  test("a clean three-way merge: statuses, diffs, merge commit with two parents", async () => {
    const d = await setup("clean");
    await d.update("feature", d.b, "B from feature");
    await d.update("main", d.c, "C from main");
    const added = await callMcp<{ sectionId: string }>(mcp, "sections", {
      action: "create",
      documentId: d.documentId,
      branchName: "feature",
      name: "D",
      content: [text("new")],
    });
    await callMcp(mcp, "sections", { action: "delete", documentId: d.documentId, branchName: "feature", sectionId: d.a });
    const mr = await d.open();
    const analysis = await analyze(mr.mergeRequestId);
    expect(analysis).toMatchObject({
      hasConflicts: false,
      hasTagConflicts: false,
      hasPathCollision: false,
      hasDocumentDeletionConflict: false,
      fastForward: false,
    });
    const byName = Object.fromEntries(analysis.sections.map((s) => [s.name, s]));
    expect(byName.A!.status).toBe("deleted");
    expect(byName.B!.status).toBe("modified");
    expect(byName.B!.sourceDiff).toMatch(/-B original\n\+B from feature/);
    expect(byName.B!.targetDiff).toBe("");
    expect(byName.C!.status).toBe("unchanged");
    // Changed on the target only: the merge brings nothing there, so it shows no diff.
    expect(byName.C!).toMatchObject({ sourceDiff: "", targetDiff: "" });
    expect(byName.D!).toMatchObject({ status: "added", sectionId: added.sectionId });

    const mainBefore = await d.read();
    const featureHead = (await d.read("feature")).headCommitId;
    const result = await execute(mr.mergeRequestId, { resolutions: [{ sectionId: d.b, resolution: "target" }] });
    expect(result.fastForward).toBe(false);
    expect(result.warnings).toEqual([expect.stringMatching(/not in conflict/)]);
    expect(result.message).toMatch(
      /^Merge branch 'feature' into 'main'\n\n\* Update section "B"\n\* Add section "D"\n\* Delete section "A"$/,
    );
    const main = await d.read();
    expect(main.sections.map((s) => [s.name, (s.content[0] as { text: string }).text])).toEqual([
      ["B", "B from feature"],
      ["C", "C from main"],
      ["D", "new"],
    ]);
    const log = await callMcp<{ commits: Array<{ commitId: string; parentIds: string[]; kind: string }> }>(mcp, "documents", {
      action: "log",
      documentId: d.documentId,
      limit: 1,
    });
    expect(log.commits[0]).toMatchObject({
      commitId: result.mergeCommitId,
      kind: "merge",
      parentIds: [mainBefore.headCommitId, featureHead],
    });
    const got = await callMcp<{ status: string; mergeCommitId: string; mergedAt: string }>(mcp, "merge_requests", {
      action: "get",
      mergeRequestId: mr.mergeRequestId,
    });
    expect(got).toMatchObject({ status: "merged", mergeCommitId: result.mergeCommitId });
    expect(got.mergedAt).toBeTruthy();

    // Right after the merge there is nothing to propose; new source commits merge alone.
    const tooSoon = await callMcpError(mcp, "merge_requests", {
      action: "create",
      documentId: d.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "again",
    });
    expect(tooSoon.code).toBe("NOTHING_TO_MERGE");
    await d.update("feature", d.b, "B again from feature");
    const again = await d.open();
    const next = await analyze(again.mergeRequestId);
    expect(next.sections.filter((s) => s.status !== "unchanged").map((s) => [s.name, s.status])).toEqual([["B", "modified"]]);
    expect(next.sections.find((s) => s.name === "B")!.targetDiff).toBe("");
    const second = await execute(again.mergeRequestId);
    expect(second.message).toBe(`Merge branch 'feature' into 'main'\n\n* Update section "B"`);

    // A request whose commits reach the target another way is up to date, and executing it merges nothing.
    await d.update("feature", added.sectionId, "D from feature");
    const standing = await d.open();
    await callMcp(mcp, "documents", { action: "create_branch", documentId: d.documentId, branchName: "shortcut", sourceBranch: "feature" });
    await execute((await d.open("shortcut")).mergeRequestId);
    const upToDate = await analyze(standing.mergeRequestId);
    expect(upToDate).toMatchObject({ upToDate: true, hasConflicts: false });
    expect(upToDate.sections.every((s) => s.status === "unchanged" && s.sourceDiff === "")).toBe(true);
    expect((await callMcpError(mcp, "merge_requests", { action: "execute", mergeRequestId: standing.mergeRequestId })).code).toBe(
      "NOTHING_TO_MERGE",
    );
  });

  test("conflicts must be resolved; resolutions pick a side", async () => {
    const d = await setup("conflict");
    await d.update("feature", d.a, "A from feature");
    await d.update("main", d.a, "A from main");
    await d.update("feature", d.b, "B from feature");
    await callMcp(mcp, "sections", { action: "delete", documentId: d.documentId, branchName: "main", sectionId: d.b });
    const mr = await d.open();
    const analysis = await analyze(mr.mergeRequestId);
    expect(analysis.hasConflicts).toBe(true);
    expect(analysis.sections.filter((s) => s.status === "conflict").map((s) => s.sectionId)).toEqual([d.a, d.b]);
    const conflictA = analysis.sections.find((s) => s.sectionId === d.a)!;
    expect(conflictA.sourceDiff).toMatch(/\+A from feature/);
    expect(conflictA.targetDiff).toMatch(/\+A from main/);

    const before = await d.read();
    const missing = await callMcpError(mcp, "merge_requests", {
      action: "execute",
      mergeRequestId: mr.mergeRequestId,
      resolutions: [{ sectionId: d.a, resolution: "source" }],
    });
    expect(missing.code).toBe("UNRESOLVED_CONFLICTS");
    expect(missing.details).toMatchObject({
      missing: { sections: [d.b], tags: false, properties: [], path: false, documentDeletion: false },
    });
    expect(missing.message).toContain(d.b);
    expect((await d.read()).headCommitId).toBe(before.headCommitId);

    await execute(mr.mergeRequestId, {
      resolutions: [
        { sectionId: d.a, resolution: "source" },
        { sectionId: d.b, resolution: "source" },
      ],
    });
    const merged = await d.read();
    expect(merged.sections.map((s) => [s.name, (s.content[0] as { text: string }).text])).toEqual([
      ["A", "A from feature"],
      ["B", "B from feature"],
      ["C", "C original"],
    ]);
  });

  test("fast-forward moves the target to the source head", async () => {
    const d = await setup("ff");
    await d.update("feature", d.a, "A ff");
    const featureHead = (await d.read("feature")).headCommitId;
    const mr = await d.open();
    expect(await analyze(mr.mergeRequestId)).toMatchObject({ fastForward: true, hasConflicts: false });
    const result = await execute(mr.mergeRequestId, { tagResolution: "source" });
    expect(result).toMatchObject({ fastForward: true, mergeCommitId: featureHead });
    expect(result.warnings).toEqual([expect.stringMatching(/tagResolution ignored/)]);
    expect((await d.read()).headCommitId).toBe(featureHead);
  });

  test("a merged request records where the target stood, and show from there gives what the merge brought, fast-forwards included", async () => {
    interface Show {
      commit: { kind: string };
      changes: Array<{ sectionId: string; status: string; diff: string }>;
    }
    const d = await setup("merged-onto");
    const get = (mergeRequestId: string) =>
      callMcp<{ mergeCommitId: string; mergedOntoCommitId: string | null }>(mcp, "merge_requests", { action: "get", mergeRequestId });
    const changesOf = async (mergeRequestId: string) => {
      const request = await get(mergeRequestId);
      const shown = await callMcp<Show>(mcp, "documents", {
        action: "show",
        documentId: d.documentId,
        commitId: request.mergeCommitId,
        baseCommitId: request.mergedOntoCommitId,
      });
      return { kind: shown.commit.kind, changes: shown.changes.map((c) => [c.sectionId, c.status, c.diff.includes("+")]) };
    };

    // Two commits on feature, main unchanged: a fast-forward, whose changes are both commits' together.
    await d.update("feature", d.a, "A first");
    await d.update("feature", d.b, "B second");
    const mainBefore = (await d.read()).headCommitId;
    const ff = await d.open();
    expect(await get(ff.mergeRequestId)).toMatchObject({ mergedOntoCommitId: null });
    expect(await execute(ff.mergeRequestId)).toMatchObject({ fastForward: true });
    expect((await get(ff.mergeRequestId)).mergedOntoCommitId).toBe(mainBefore);
    expect(await changesOf(ff.mergeRequestId)).toEqual({
      kind: "write",
      changes: [
        [d.a, "modified", true],
        [d.b, "modified", true],
      ],
    });

    // A merge commit: recorded as its first parent; main's own change since is not among the merge's.
    await d.update("feature", d.c, "C on feature");
    await d.update("main", d.a, "A on main");
    const mainBeforeMerge = (await d.read()).headCommitId;
    const merge = await d.open();
    expect(await execute(merge.mergeRequestId)).toMatchObject({ fastForward: false });
    expect((await get(merge.mergeRequestId)).mergedOntoCommitId).toBe(mainBeforeMerge);
    expect(await changesOf(merge.mergeRequestId)).toEqual({ kind: "merge", changes: [[d.c, "modified", true]] });

    // A base that is not one of the document's commits is refused with a coded error.
    const unknown = await callMcpError(mcp, "documents", {
      action: "show",
      documentId: d.documentId,
      commitId: mainBeforeMerge,
      baseCommitId: "0000000",
    });
    expect(unknown.code).toBe("NOT_FOUND");
  });

  test("document-level conflicts: tags, properties, path, deletion", async () => {
    const d = await setup("doc-level");
    const t1 = await callMcp<{ tagId: string }>(mcp, "documents", { action: "create_tag", tagPath: "area/one" });
    const t2 = await callMcp<{ tagId: string }>(mcp, "documents", { action: "create_tag", tagPath: "area/two" });
    const column = "44444444-4444-4444-8444-444444444444";
    await callMcp(mcp, "documents", { action: "assign_tag", documentId: d.documentId, branchName: "feature", tagId: t1.tagId });
    await callMcp(mcp, "documents", { action: "assign_tag", documentId: d.documentId, branchName: "main", tagId: t2.tagId });
    await callMcp(mcp, "documents", {
      action: "set_property",
      documentId: d.documentId,
      branchName: "feature",
      columnId: column,
      value: "source",
    });
    await callMcp(mcp, "documents", {
      action: "set_property",
      documentId: d.documentId,
      branchName: "main",
      columnId: column,
      value: "target",
    });
    await callMcp(mcp, "documents", { action: "update", documentId: d.documentId, branchName: "feature", newPath: "doc-level/feature" });
    await callMcp(mcp, "documents", { action: "update", documentId: d.documentId, branchName: "main", newPath: "doc-level/main" });
    const mr = await d.open();
    const analysis = await analyze(mr.mergeRequestId);
    expect(analysis).toMatchObject({
      hasConflicts: false,
      hasTagConflicts: true,
      hasPathCollision: true,
      hasDocumentDeletionConflict: false,
    });
    expect(analysis.propertyConflicts).toEqual([{ columnId: column, base: null, source: "source", target: "target" }]);
    const missing = await callMcpError(mcp, "merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
    expect(missing.details).toMatchObject({ missing: { tags: true, properties: [column], path: true } });
    await execute(mr.mergeRequestId, {
      tagResolution: "source",
      scalarPropertyResolutions: { [column]: "target" },
      resolvedPath: "doc-level/final",
    });
    const merged = await d.read();
    expect(merged.path).toBe("doc-level/final");
    expect(merged.tags.map((t) => t.tagId)).toEqual([t1.tagId]);
    expect(merged.properties).toEqual({ [column]: "target" });

    // The merged path held by another live document is a collision too.
    const other = await setup("taken-path");
    await callMcp(mcp, "documents", { action: "update", documentId: other.documentId, branchName: "feature", newPath: "future-path" });
    await callMcp(mcp, "documents", { action: "create", path: "future-path" });
    const taken = await other.open();
    expect(await analyze(taken.mergeRequestId)).toMatchObject({ hasPathCollision: true });
    const blocked = await callMcpError(mcp, "merge_requests", {
      action: "execute",
      mergeRequestId: taken.mergeRequestId,
      resolvedPath: "future-path",
    });
    expect(blocked.code).toBe("PATH_TAKEN");
    await execute(taken.mergeRequestId, { resolvedPath: "taken-path-renamed" });
    expect((await other.read()).path).toBe("taken-path-renamed");
  });

  test("deleted on one side, changed on the other", async () => {
    const d = await setup("deletion");
    await callMcp(mcp, "documents", { action: "delete", documentId: d.documentId, branchName: "feature" });
    await d.update("main", d.a, "changed on main");
    const mr = await d.open();
    expect(await analyze(mr.mergeRequestId)).toMatchObject({ hasDocumentDeletionConflict: true });
    const missing = await callMcpError(mcp, "merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
    expect(missing.details).toMatchObject({ missing: { documentDeletion: true } });
    await execute(mr.mergeRequestId, { documentDeletionResolution: "delete" });
    expect((await d.read()).deleted).toBe(true);
    const listed = await callMcp<{ documents: Array<{ documentId: string }> }>(mcp, "documents", {
      action: "list",
      pathPrefix: "deletion",
    });
    expect(listed.documents).toEqual([]);
    const reuse = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "deletion" });
    expect(reuse.documentId).not.toBe(d.documentId);
  });

  test("a reorder on one side carries over", async () => {
    const d = await setup("reorder");
    await callMcp(mcp, "sections", { action: "reorder", documentId: d.documentId, branchName: "feature", sectionOrder: [d.c, d.a, d.b] });
    await d.update("main", d.b, "B main");
    const mr = await d.open();
    await execute(mr.mergeRequestId);
    expect((await d.read()).sections.map((s) => s.name)).toEqual(["C", "A", "B"]);
  });

  test("criss-cross history: a change both sides share is no conflict", async () => {
    const d = await setup("criss-cross");
    await d.update("main", d.a, "A main 1");
    await d.update("feature", d.b, "B feature 1");
    await callMcp(mcp, "documents", { action: "create_branch", documentId: d.documentId, branchName: "main-copy", sourceBranch: "main" });
    // main merges feature while feature merges main-copy (the old main head): two merge bases.
    const m1 = await d.open("feature", "main");
    await execute(m1.mergeRequestId);
    const m2 = await d.open("main-copy", "feature");
    await execute(m2.mergeRequestId);
    await d.update("feature", d.c, "C feature 2");
    const m3 = await d.open("feature", "main");
    const analysis = await analyze(m3.mergeRequestId);
    expect(analysis.hasConflicts).toBe(false);
    expect(analysis.sections.map((s) => [s.name, s.status])).toEqual([["C", "modified"]]);
  });

  test("analyze asks the database six times, reading the default head's hiding once, for an agent as for a person", async () => {
    const d = await setup("round-trips");
    await d.update("feature", d.a, "A feature");
    await d.update("main", d.b, "B main");
    const { mergeRequestId } = await d.open();
    // The server's own connection answers the plain path; a second one counts what the same analyze asks.
    let queries = 0;
    const counted = postgres(server.database.url!, {
      max: 4,
      onnotice: () => {},
      debug: (_c: number, query: string) => {
        // A new connection first reads the server's array types; that is the pool's, not analyze's.
        if (!query.includes("pg_catalog.pg_type")) queries++;
      },
    });
    const countedDb = withCommitHooks(drizzlePostgres(preparingEveryStatement(counted), { schema }) as unknown as Database);
    try {
      for (const actor of [owner.actor, { ...owner.actor, principal: "person" as const }]) {
        const input = { action: "analyze", mergeRequestId } as const;
        const plain = await runTool(
          tools.merge_requests,
          { db: server.db, actor, clock: () => new Date(), files: server.files, live: server.live },
          input,
        );
        queries = 0;
        const result = await runTool(
          tools.merge_requests,
          { db: countedDb, actor, clock: () => new Date(), files: server.files, live: server.live },
          input,
        );
        expect(result).toEqual(plain);
        // The request with its document and grant, both branches, the commit graph, paths other documents hold, and the
        // default branch for its hiding (its head commit is remembered); the generated message is remembered too.
        expect(queries).toBe(6);
      }
    } finally {
      await counted.end();
    }
  });
});

describe("commit message limit and races", () => {
  test("a generated message over 1000 characters fails with guidance; a custom one works", async () => {
    const d = await setup("long-history");
    for (let i = 0; i < 25; i++) {
      await callMcp(mcp, "sections", {
        action: "update",
        documentId: d.documentId,
        branchName: "feature",
        sectionId: d.a,
        newContent: [text(`v${i}`)],
        commitMessage: `Rewrite the opening section, iteration ${i}, with a deliberately long explanation`,
      });
    }
    await d.update("main", d.c, "diverge");
    const mr = await d.open();
    const before = await d.read();
    const error = await callMcpError(mcp, "merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
    expect(error.code).toBe("COMMIT_MESSAGE_TOO_LONG");
    expect(error.message).toMatch(/commitMessage/);
    expect((await d.read()).headCommitId).toBe(before.headCommitId);
    const tooLong = await callMcpError(mcp, "merge_requests", {
      action: "execute",
      mergeRequestId: mr.mergeRequestId,
      commitMessage: "x".repeat(1001),
    });
    expect(tooLong.code).toBe("VALIDATION_FAILED");
    const ok = await execute(mr.mergeRequestId, { commitMessage: "Merge the long rewrite" });
    expect(ok.message).toBe("Merge the long rewrite");
  });

  test("two executes of one request race: one merges, the other is told", async () => {
    const d = await setup("race-one");
    await d.update("feature", d.a, "A f");
    await d.update("main", d.b, "B m");
    const mr = await d.open();
    const clients = [await server.mcpClient(owner.token), await server.mcpClient(owner.token)];
    const results = await Promise.all(
      clients.map((c) => c.callTool({ name: "merge_requests", arguments: { action: "execute", mergeRequestId: mr.mergeRequestId } })),
    );
    await Promise.all(clients.map((c) => c.close()));
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    expect(results.filter((r) => r.isError).map((r) => toolError(r).code)).toEqual(["MERGE_REQUEST_NOT_OPEN"]);
    const log = await callMcp<{ commits: Array<{ kind: string }> }>(mcp, "documents", {
      action: "log",
      documentId: d.documentId,
      limit: 50,
    });
    expect(log.commits.filter((c) => c.kind === "merge")).toHaveLength(1);
  });

  test("two requests merging into one target concurrently lose no commit", async () => {
    const d = await setup("race-two");
    await callMcp(mcp, "documents", { action: "create_branch", documentId: d.documentId, branchName: "other" });
    await d.update("feature", d.a, "A feature");
    await d.update("other", d.b, "B other");
    await d.update("main", d.c, "C main");
    const one = await d.open("feature");
    const two = await d.open("other");
    const clients = [await server.mcpClient(owner.token), await server.mcpClient(owner.token)];
    const results = await Promise.all(
      [one, two].map((mr, i) =>
        clients[i]!.callTool({ name: "merge_requests", arguments: { action: "execute", mergeRequestId: mr.mergeRequestId } }),
      ),
    );
    await Promise.all(clients.map((c) => c.close()));
    expect(results.every((r) => !r.isError)).toBe(true);
    const main = await d.read();
    expect(main.sections.map((s) => (s.content[0] as { text: string }).text)).toEqual(["A feature", "B other", "C main"]);
  });
});
