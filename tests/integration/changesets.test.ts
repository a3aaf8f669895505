/** Changesets end to end: through a real MCP client (an agent's token), tRPC over HTTP and in person (the web app's caller). */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { text } from "../helpers/blocks";
import { connectLive, roomName, waitFor } from "../helpers/collab";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let rita: TestUser;
let reader: TestUser;
let mcp: Client;

interface Item {
  documentId: string;
  path: string;
  mergeRequest: {
    mergeRequestId: string;
    status: string;
    mergedOntoCommitId: string | null;
    approvals: number;
    requiredApprovals: number;
    reviewers: Array<{ userId: string }>;
  };
}
interface Changeset {
  changesetId: string;
  status: string;
  items: Item[];
  hiddenItems: number;
  itemsNeedingApprovals: string[];
}
interface Analysis {
  analyses: Array<{
    documentId: string;
    path: string;
    analysis: {
      fastForward: boolean;
      sourceHeadCommitId: string;
      targetHeadCommitId: string;
      sections: Array<{ sectionId: string; status: string }>;
    } | null;
  }>;
  hiddenItems: number;
  totals: {
    items: number;
    openItems: number;
    fastForwardItems: number;
    itemsWithConflicts: number;
    conflicts: number;
    sectionsChanged: number;
  };
}
interface Failure {
  code: string;
  message: string;
  details?: { items?: Array<{ documentId: string; code: string }>; hiddenItems?: number };
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  rita = await server.createUser("rita@example.test", "Rita Reviewer");
  reader = await server.createUser("rae@example.test", "Rae Reader");
  mcp = await server.mcpClient(owner.token);
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

const asOwner = <T = Record<string, unknown>>(tool: string, args: Record<string, unknown>) => callMcp<T>(mcp, tool, args);
/** In person, as the web app calls (access changes and approvals need a person). */
const inPerson = async <T>(user: TestUser, tool: "changesets" | "documents" | "merge_requests", input: Record<string, unknown>) =>
  (await server.callToolAsSent(tool, user.userId, input)) as T;
const failureInPerson = async (user: TestUser, tool: "changesets", input: Record<string, unknown>): Promise<Failure> => {
  try {
    await server.callToolAsSent(tool, user.userId, input);
  } catch (error) {
    return error as Failure;
  }
  throw new Error("expected a failure");
};

/** A document with sections A and B on main and a branch `branch` where A is changed. */
async function documentWithChange(path: string, branch: string) {
  const doc = await asOwner<{ documentId: string; sectionIds: [string, string] }>("documents", {
    action: "create",
    path,
    sections: [
      { name: "A", content: [text(`A of ${path}`)] },
      { name: "B", content: [text(`B of ${path}`)] },
    ],
  });
  await asOwner("documents", { action: "create_branch", documentId: doc.documentId, branchName: branch });
  const [a, b] = doc.sectionIds;
  const update = (branchName: string, sectionId: string, t: string) =>
    asOwner("sections", { action: "update", documentId: doc.documentId, branchName, sectionId, newContent: [text(t)] });
  await update(branch, a, `A renamed in ${path}`);
  const head = async (branchName = "main") =>
    (await asOwner<{ headCommitId: string }>("read", { documentId: doc.documentId, branchName })).headCommitId;
  return { documentId: doc.documentId, path, a, b, update, head };
}

describe("changesets", () => {
  test("create by path prefix, analyze, all-or-nothing execute with per-document errors, approvals, access, fast-forward", async () => {
    const branch = "rename";
    const one = await documentWithChange("handbook/one", branch);
    const two = await documentWithChange("handbook/two", branch);
    const three = await documentWithChange("handbook/three", branch);
    const elsewhere = await documentWithChange("other/four", branch);
    // Rita may not read three: it is counted for her, never shown. Rae only reads one.
    await inPerson(owner, "documents", {
      action: "set_permissions",
      documentId: three.documentId,
      grants: [{ userId: rita.userId, permission: "none" }],
    });
    await inPerson(owner, "documents", {
      action: "set_permissions",
      documentId: one.documentId,
      grants: [{ userId: reader.userId, permission: "read" }],
    });
    // one: main changed A too (a conflict); two: main changed B (a merge commit); three: main unchanged (a fast-forward).
    await one.update("main", one.a, "A changed on main");
    await two.update("main", two.b, "B changed on main");

    const created = await asOwner<Changeset>("changesets", {
      action: "create",
      sourceBranch: branch,
      targetBranch: "main",
      title: "Rename the product",
      pathPrefix: "handbook/",
      reviewerIds: [rita.userId],
    });
    expect(created.status).toBe("open");
    expect(created.items.map((i) => i.path).sort()).toEqual(["handbook/one", "handbook/three", "handbook/two"]);
    expect(created.items.every((i) => i.mergeRequest.status === "open")).toBe(true);
    expect(created.items.map((i) => i.path)).not.toContain(elsewhere.path);
    const reviewedBy = (path: string) => created.items.find((i) => i.path === path)!.mergeRequest.reviewers.map((r) => r.userId);
    expect(reviewedBy("handbook/one")).toEqual([rita.userId]);
    expect(reviewedBy("handbook/three")).toEqual([]);
    const { changesetId } = created;

    // Rita sees two items and a count; nothing of three appears in what she is shown.
    const asRita = await inPerson<Changeset>(rita, "changesets", { action: "get", changesetId });
    expect(asRita.items.map((i) => i.path).sort()).toEqual(["handbook/one", "handbook/two"]);
    expect(asRita.hiddenItems).toBe(1);
    const ritaAnalysis = await inPerson<Analysis>(rita, "changesets", { action: "analyze", changesetId });
    expect(ritaAnalysis.hiddenItems).toBe(1);
    expect(ritaAnalysis.totals.items).toBe(3);
    expect(JSON.stringify([asRita, ritaAnalysis])).not.toMatch(new RegExp(`${three.documentId}|handbook/three`));
    // She cannot merge a document she cannot read; the refusal counts it without naming it.
    const ritaExecute = await failureInPerson(rita, "changesets", { action: "execute", changesetId });
    expect(ritaExecute.code).toBe("CHANGESET_NOT_MERGEABLE");
    expect(ritaExecute.details!.hiddenItems).toBe(1);
    expect(JSON.stringify(ritaExecute)).not.toMatch(new RegExp(`${three.documentId}|handbook/three`));

    const analysis = await asOwner<Analysis>("changesets", { action: "analyze", changesetId });
    expect(analysis.hiddenItems).toBe(0);
    expect(analysis.totals).toMatchObject({ items: 3, openItems: 3, fastForwardItems: 1, itemsWithConflicts: 1, conflicts: 1 });
    const conflictOf = analysis.analyses.find((a) => a.documentId === one.documentId)!.analysis!;
    expect(conflictOf.sections.find((s) => s.sectionId === one.a)!.status).toBe("conflict");

    const heads = async () => Promise.all([one.head(), two.head(), three.head()]);
    const before = await heads();

    // No resolution for one: the error names it, and three is not fast-forwarded either.
    const unresolved = await callMcpError(mcp, "changesets", { action: "execute", changesetId });
    expect(unresolved.code).toBe("UNRESOLVED_CONFLICTS");
    expect((unresolved as Failure).details!.items!.map((i) => i.documentId)).toEqual([one.documentId]);
    expect(unresolved.message).toMatch(/handbook\/one/);
    expect(await heads()).toEqual(before);

    const resolved = { itemResolutions: [{ documentId: one.documentId, resolutions: [{ sectionId: one.a, resolution: "source" }] }] };

    // A reader of some items cannot execute: their item is refused, nothing merges.
    const byReader = await failureInPerson(reader, "changesets", { action: "execute", changesetId, ...resolved });
    expect(byReader.code).toBe("PERMISSION_DENIED");
    expect(byReader.details!.items!.map((i) => i.documentId)).toEqual([one.documentId]);
    expect(await heads()).toEqual(before);

    // An agent is capped by aiAccess per item.
    await inPerson(owner, "documents", { action: "set_permissions", documentId: two.documentId, aiAccess: "read" });
    const capped = await callMcpError(mcp, "changesets", { action: "execute", changesetId, ...resolved });
    expect(capped.code).toBe("PERMISSION_DENIED");
    expect((capped as Failure).details!.items!.map((i) => i.documentId)).toEqual([two.documentId]);
    await inPerson(owner, "documents", { action: "set_permissions", documentId: two.documentId, aiAccess: "edit" });

    // two requires an approval; one lacks its resolution: both listed, under CHANGESET_NOT_MERGEABLE.
    await inPerson(owner, "merge_requests", { action: "set_required_approvals", documentId: two.documentId, requiredApprovals: 1 });
    const both = await callMcpError(mcp, "changesets", { action: "execute", changesetId });
    expect(both.code).toBe("CHANGESET_NOT_MERGEABLE");
    expect((both as Failure).details!.items!.map((i) => [i.documentId, i.code]).sort()).toEqual(
      [
        [one.documentId, "UNRESOLVED_CONFLICTS"],
        [two.documentId, "APPROVALS_REQUIRED"],
      ].sort(),
    );
    const approvals = await callMcpError(mcp, "changesets", { action: "execute", changesetId, ...resolved });
    expect(approvals.code).toBe("APPROVALS_REQUIRED");
    expect(await heads()).toEqual(before);
    expect((await asOwner<Changeset>("changesets", { action: "get", changesetId })).itemsNeedingApprovals).toEqual([two.documentId]);

    // Heads she did not see: nothing is approved.
    const stale = await failureInPerson(rita, "changesets", {
      action: "approve",
      changesetId,
      expectedHeads: [{ documentId: two.documentId, targetHeadCommitId: before[0] }],
    });
    expect(stale.code).toBe("BRANCH_MOVED");
    expect((await asOwner<Changeset>("changesets", { action: "get", changesetId })).itemsNeedingApprovals).toEqual([two.documentId]);
    // Rita approves the changeset once, in person: recorded on each item she reviews.
    const approved = await inPerson<Changeset & { reviewedItems: string[] }>(rita, "changesets", { action: "approve", changesetId });
    expect(approved.reviewedItems.sort()).toEqual([one.documentId, two.documentId].sort());
    expect(approved.items.find((i) => i.documentId === two.documentId)!.mergeRequest.approvals).toBe(1);
    // Someone reviewing nothing cannot approve.
    expect((await failureInPerson(reader, "changesets", { action: "approve", changesetId })).code).toBe("PERMISSION_DENIED");

    // Heads reviewed, then main of three moves: the whole changeset refuses with BRANCH_MOVED.
    const reviewed = await asOwner<Analysis>("changesets", { action: "analyze", changesetId });
    const expectedHeads = reviewed.analyses.map((a) => ({
      documentId: a.documentId,
      sourceHeadCommitId: a.analysis!.sourceHeadCommitId,
      targetHeadCommitId: a.analysis!.targetHeadCommitId,
    }));
    await three.update("main", three.b, "B moved on main");
    const moved = await callMcpError(mcp, "changesets", { action: "execute", changesetId, ...resolved, expectedHeads });
    expect(moved.code).toBe("BRANCH_MOVED");
    expect((moved as Failure).details!.items!.map((i) => i.documentId)).toEqual([three.documentId]);
    const afterMove = await heads();
    expect(afterMove.slice(0, 2)).toEqual(before.slice(0, 2));

    const merged = await asOwner<{ status: string; merged: Array<{ documentId: string; fastForward: boolean; mergeCommitId: string }> }>(
      "changesets",
      { action: "execute", changesetId, ...resolved },
    );
    expect(merged.status).toBe("merged");
    expect(merged.merged).toHaveLength(3);
    for (const doc of [one, two, three]) {
      const main = await asOwner<{ sections: Array<{ sectionId: string; content: Array<{ text: string }> }> }>("read", {
        documentId: doc.documentId,
        branchName: "main",
      });
      expect(main.sections.find((s) => s.sectionId === doc.a)!.content[0]!.text).toBe(`A renamed in ${doc.path}`);
    }
    const final = await asOwner<Changeset>("changesets", { action: "get", changesetId });
    expect(final.items.every((i) => i.mergeRequest.status === "merged")).toBe(true);
    // Each item's request records where its main stood before the changeset merged it (its merged changes start there).
    expect(
      [one, two, three].map((doc) => final.items.find((i) => i.documentId === doc.documentId)!.mergeRequest.mergedOntoCommitId),
    ).toEqual(afterMove);
    expect((await callMcpError(mcp, "changesets", { action: "execute", changesetId })).code).toBe("CHANGESET_NOT_OPEN");
    // elsewhere was never part of it.
    expect(await elsewhere.head()).not.toBe(await elsewhere.head(branch));
  });

  test("fast-forward items fast-forward; create by ids and by tag; adopting an open request; add, remove, list, close", async () => {
    const branch = "policy";
    const five = await documentWithChange("policies/five", branch);
    const six = await documentWithChange("policies/six", branch);
    const seven = await documentWithChange("policies/seven", branch);
    const open = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId: seven.documentId,
      sourceBranch: branch,
      targetBranch: "main",
      title: "Seven alone",
    });
    const tag = await asOwner<{ tagId: string }>("documents", { action: "create_tag", tagPath: "policy-update" });
    await asOwner("documents", { action: "assign_tag", documentId: seven.documentId, branchName: branch, tagId: tag.tagId });

    const byTag = await asOwner<Changeset>("changesets", {
      action: "create",
      sourceBranch: branch,
      targetBranch: "main",
      title: "Tagged",
      tagId: tag.tagId,
    });
    expect(byTag.items.map((i) => [i.documentId, i.mergeRequest.mergeRequestId])).toEqual([[seven.documentId, open.mergeRequestId]]);
    // An item of an open changeset is not adopted by another.
    const taken = await callMcpError(mcp, "changesets", {
      action: "create",
      sourceBranch: branch,
      targetBranch: "main",
      title: "Again",
      documentIds: [seven.documentId],
    });
    expect(taken.code).toBe("MERGE_REQUEST_EXISTS");
    const closed = await asOwner<Changeset>("changesets", { action: "close", changesetId: byTag.changesetId });
    expect(closed.status).toBe("closed");
    expect(closed.items[0]!.mergeRequest.status).toBe("open");

    const byIds = await asOwner<Changeset>("changesets", {
      action: "create",
      sourceBranch: branch,
      targetBranch: "main",
      title: "By ids",
      documentIds: [five.documentId, seven.documentId],
    });
    expect(byIds.items.map((i) => i.documentId).sort()).toEqual([five.documentId, seven.documentId].sort());
    expect(byIds.items.find((i) => i.documentId === seven.documentId)!.mergeRequest.mergeRequestId).toBe(open.mergeRequestId);
    const { changesetId } = byIds;
    // An item merges with its changeset, never alone.
    const alone = await callMcpError(mcp, "merge_requests", { action: "execute", mergeRequestId: open.mergeRequestId });
    expect(alone.code).toBe("MERGE_REQUEST_IN_CHANGESET");

    const added = await asOwner<Changeset>("changesets", { action: "add_items", changesetId, documentIds: [six.documentId] });
    expect(added.items).toHaveLength(3);
    const removed = await asOwner<Changeset>("changesets", { action: "remove_items", changesetId, documentIds: [seven.documentId] });
    expect(removed.items.map((i) => i.documentId).sort()).toEqual([five.documentId, six.documentId].sort());
    const seventh = await asOwner<{ status: string }>("merge_requests", { action: "get", mergeRequestId: open.mergeRequestId });
    expect(seventh.status).toBe("open");

    // Over tRPC (HTTP, the owner's token): list and get.
    const trpc = server.trpcClient(owner.token) as unknown as { changesets: { mutate(args: unknown): Promise<unknown> } };
    const listed = (await trpc.changesets.mutate({ action: "list", status: "open" })) as {
      changesets: Array<{ changesetId: string; itemCounts: { open: number } }>;
    };
    expect(listed.changesets.map((c) => c.changesetId)).toContain(changesetId);
    expect(listed.changesets.find((c) => c.changesetId === changesetId)!.itemCounts.open).toBe(2);
    const byDocument = (await trpc.changesets.mutate({ action: "list", documentId: seven.documentId })) as {
      changesets: Array<{ changesetId: string }>;
    };
    expect(byDocument.changesets.map((c) => c.changesetId)).toEqual([byTag.changesetId]);

    const sources = await Promise.all([five.head(branch), six.head(branch)]);
    // Live rooms of every target see their head move.
    const watchers = await Promise.all(
      [five, six].map((doc) => connectLive(server.url, roomName(doc.documentId, "main", doc.a), { token: owner.token })),
    );
    const merged = (await trpc.changesets.mutate({ action: "execute", changesetId })) as {
      merged: Array<{ documentId: string; fastForward: boolean; mergeCommitId: string }>;
    };
    try {
      for (const [i, doc] of [five, six].entries()) {
        await waitFor(() => watchers[i]!.text().toString() === `A renamed in ${doc.path}`, 5_000, `the live room of ${doc.path}`);
      }
    } finally {
      for (const watcher of watchers) watcher.close();
    }
    const byDoc = new Map(merged.merged.map((m) => [m.documentId, m]));
    expect(byDoc.get(five.documentId)).toMatchObject({ fastForward: true, mergeCommitId: sources[0] });
    expect(byDoc.get(six.documentId)).toMatchObject({ fastForward: true, mergeCommitId: sources[1] });
    expect([await five.head(), await six.head()]).toEqual(sources);

    // The remaining open request can still be closed with its changeset.
    const last = await asOwner<Changeset>("changesets", {
      action: "create",
      sourceBranch: branch,
      targetBranch: "main",
      title: "Seven",
      documentIds: [seven.documentId],
    });
    const closedWithItems = await asOwner<Changeset>("changesets", { action: "close", changesetId: last.changesetId, closeItems: true });
    expect(closedWithItems.items[0]!.mergeRequest.status).toBe("closed");
  });

  test("uncommitted live edits on a gathered document's source branch are refused, naming it; committed, they are gathered", async () => {
    const doc = await documentWithChange("drafts/one", "live");
    const other = await documentWithChange("drafts/two", "live");
    const typist = await connectLive(server.url, roomName(doc.documentId, "live", doc.b), { token: owner.token });
    try {
      typist.text().insert(0, "typed live, not committed: ");
      for (let tries = 0; ; tries++) {
        const status = await inPerson<{ uncommittedChanges: boolean }>(owner, "documents", {
          action: "draft_status",
          documentId: doc.documentId,
          branchName: "live",
        });
        if (status.uncommittedChanges) break;
        if (tries > 200) throw new Error("the live edit never reached the draft");
        await new Promise((r) => setTimeout(r, 20));
      }
      const create = { action: "create", sourceBranch: "live", targetBranch: "main", title: "Live", pathPrefix: "drafts/" };
      const refused = await callMcpError(mcp, "changesets", create);
      expect(refused.code).toBe("UNCOMMITTED_DRAFT");
      expect(refused.message).toMatch(/drafts\/one/);
      expect(refused.message).not.toMatch(/drafts\/two/);
      expect((await asOwner<{ changesets: unknown[] }>("changesets", { action: "list", documentId: other.documentId })).changesets).toEqual(
        [],
      );
      await inPerson(owner, "documents", { action: "commit", documentId: doc.documentId, branchName: "live" });
      const created = await asOwner<Changeset>("changesets", create);
      expect(created.items.map((i) => i.path)).toEqual(["drafts/one", "drafts/two"]);
    } finally {
      typist.close();
    }
  });

  test("bad input is refused with codes and changes nothing", async () => {
    const doc = await documentWithChange("bad/one", "work");
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ action: "create", sourceBranch: "work", targetBranch: "main", title: "No selector" }, "VALIDATION_FAILED"],
      [{ action: "create", sourceBranch: "main", targetBranch: "main", title: "Same", pathPrefix: "bad/" }, "VALIDATION_FAILED"],
      [{ action: "create", sourceBranch: "work", targetBranch: "main", title: "", pathPrefix: "bad/" }, "VALIDATION_FAILED"],
      [{ action: "create", sourceBranch: "work", targetBranch: "main", title: "x", pathPrefix: "nothing-here/" }, "NOTHING_TO_MERGE"],
      [{ action: "create", sourceBranch: "nope", targetBranch: "main", title: "x", documentIds: [doc.documentId] }, "NOT_FOUND"],
      [{ action: "create", sourceBranch: "work", targetBranch: "main", title: "x", tagId: crypto.randomUUID() }, "NOT_FOUND"],
      [{ action: "create", sourceBranch: "work", targetBranch: "main", title: "x", documentIds: [crypto.randomUUID()] }, "NOT_FOUND"],
      [{ action: "get", changesetId: crypto.randomUUID() }, "NOT_FOUND"],
      [{ action: "get", changesetId: "not-a-uuid" }, "VALIDATION_FAILED"],
      [{ action: "execute", changesetId: crypto.randomUUID(), itemResolutions: [{ documentId: "x" }] }, "VALIDATION_FAILED"],
      [{ action: "frobnicate" }, "VALIDATION_FAILED"],
    ];
    for (const [args, code] of cases) expect([args, (await callMcpError(mcp, "changesets", args)).code]).toEqual([args, code]);
    const { changesetId } = await asOwner<Changeset>("changesets", {
      action: "create",
      sourceBranch: "work",
      targetBranch: "main",
      title: "Bad input",
      documentIds: [doc.documentId],
    });
    const stranger = await callMcpError(mcp, "changesets", {
      action: "execute",
      changesetId,
      itemResolutions: [{ documentId: crypto.randomUUID() }],
    });
    expect(stranger.code).toBe("VALIDATION_FAILED");
    expect((await callMcpError(mcp, "changesets", { action: "remove_items", changesetId, documentIds: [crypto.randomUUID()] })).code).toBe(
      "VALIDATION_FAILED",
    );
    // Another member (not the author, reading only) may not close it.
    await inPerson(owner, "documents", {
      action: "set_permissions",
      documentId: doc.documentId,
      grants: [{ userId: reader.userId, permission: "read" }],
    });
    expect((await failureInPerson(reader, "changesets", { action: "close", changesetId })).code).toBe("PERMISSION_DENIED");
    // Someone who cannot read its only document may not merge it, and is not told which document it is.
    await inPerson(owner, "documents", {
      action: "set_permissions",
      documentId: doc.documentId,
      grants: [{ userId: reader.userId, permission: "none" }],
    });
    const blind = await failureInPerson(reader, "changesets", { action: "execute", changesetId });
    expect([blind.code, blind.details!.hiddenItems]).toEqual(["PERMISSION_DENIED", 1]);
    expect(JSON.stringify(blind)).not.toMatch(new RegExp(`${doc.documentId}|bad/one`));
    expect((await asOwner<Changeset>("changesets", { action: "get", changesetId })).status).toBe("open");
  });
});
