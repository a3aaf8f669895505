/**
 * The head-move seam (server/store/head-moves.ts): every committed change of
 * a branch head, made through the MCP face as agents make it, is announced
 * once, after its commit, with the right ids; refusals, no-ops and failed
 * merges announce nothing; concurrent writes on one branch announce a chain
 * of moves without gaps.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "vitest";
import { type HeadMove, onHeadMoved } from "@/server/store/head-moves";
import { findBranch } from "@/server/store/documents";
import { connectLive, roomName } from "../helpers/collab";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let reader: TestUser;
let mcp: Client;
let readerMcp: Client;
let moves: HeadMove[] = [];
let unsubscribe: () => void = () => {};

const text = (t: string) => ({ blockType: "text", text: t });

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  reader = await server.createUser("reader@example.test", "Rhea Reader");
  mcp = await server.mcpClient(owner.token);
  readerMcp = await server.mcpClient(reader.token);
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await readerMcp?.close();
  await server?.close();
});

beforeEach(() => {
  moves = [];
  unsubscribe = onHeadMoved((move) => moves.push(move));
});
afterEach(() => unsubscribe());

interface Created {
  documentId: string;
  commitId: string;
  sectionIds: string[];
}

async function newDocument(path: string, sectionNames = ["A", "B"]): Promise<Created> {
  return callMcp<Created>(mcp, "documents", {
    action: "create",
    path,
    sections: sectionNames.map((name) => ({ name, content: [text(`${name} v0`)] })),
  });
}

const head = async (documentId: string, branchName = "main") =>
  (await callMcp<{ headCommitId: string }>(mcp, "read", { documentId, branchName })).headCommitId;

const updateSection = (documentId: string, sectionId: string, t: string, branchName = "main") =>
  callMcp<{ commitId: string; changed: boolean }>(mcp, "sections", {
    action: "update",
    documentId,
    branchName,
    sectionId,
    newContent: [text(t)],
  });

/** Takes the moves recorded so far. */
function taken(): HeadMove[] {
  const seen = moves;
  moves = [];
  return seen;
}

describe("each kind of head move", () => {
  test("creating a document and a branch", async () => {
    const doc = await newDocument("moves/create");
    expect(taken()).toEqual([
      {
        documentId: doc.documentId,
        branchName: "main",
        previousCommitId: null,
        commitId: doc.commitId,
        authorId: owner.userId,
        kind: "create-document",
      },
    ]);
    await callMcp(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
    expect(taken()).toEqual([
      {
        documentId: doc.documentId,
        branchName: "feature",
        previousCommitId: null,
        commitId: doc.commitId,
        authorId: owner.userId,
        kind: "create-branch",
      },
    ]);
  });

  test("section writes, document updates, tags, properties, deletion and reverts", async () => {
    const doc = await newDocument("moves/writes");
    taken();
    let previous = doc.commitId;
    const expectOneMove = (commitId: string, kind: HeadMove["kind"], branchName = "main") => {
      expect(taken()).toEqual([
        { documentId: doc.documentId, branchName, previousCommitId: previous, commitId, authorId: owner.userId, kind },
      ]);
      previous = commitId;
    };

    expectOneMove((await updateSection(doc.documentId, doc.sectionIds[0]!, "A v1")).commitId, "write");
    const created = await callMcp<{ commitId: string }>(mcp, "sections", {
      action: "create",
      documentId: doc.documentId,
      branchName: "main",
      name: "C",
      content: [text("C v0")],
    });
    expectOneMove(created.commitId, "write");
    const renamed = await callMcp<{ commitId: string }>(mcp, "documents", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      newPath: "moves/writes-renamed",
    });
    expectOneMove(renamed.commitId, "write");
    const { tagId } = await callMcp<{ tagId: string }>(mcp, "documents", { action: "create_tag", tagPath: "moves/tag" });
    expect(taken()).toEqual([]);
    const tagged = await callMcp<{ commitId: string }>(mcp, "documents", {
      action: "assign_tag",
      documentId: doc.documentId,
      branchName: "main",
      tagId,
    });
    expectOneMove(tagged.commitId, "write");
    const property = await callMcp<{ commitId: string }>(mcp, "documents", {
      action: "set_property",
      documentId: doc.documentId,
      branchName: "main",
      columnId: "7b0e4f4e-1111-4c5e-9e8b-2f5d1c3a9b01",
      value: "high",
    });
    expectOneMove(property.commitId, "write");
    const reverted = await callMcp<{ commitId: string }>(mcp, "documents", {
      action: "revert",
      documentId: doc.documentId,
      branchName: "main",
      commitId: doc.commitId,
    });
    expectOneMove(reverted.commitId, "revert");
    expect(await head(doc.documentId)).toBe(reverted.commitId);

    await callMcp(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "doomed" });
    taken();
    const deleted = await callMcp<{ commitId: string }>(mcp, "documents", {
      action: "delete",
      documentId: doc.documentId,
      branchName: "doomed",
    });
    expect(taken()).toEqual([
      {
        documentId: doc.documentId,
        branchName: "doomed",
        previousCommitId: reverted.commitId,
        commitId: deleted.commitId,
        authorId: owner.userId,
        kind: "write",
      },
    ]);
  });

  test("merges and fast-forwards move the target once", async () => {
    const doc = await newDocument("moves/merges");
    const [a, b] = doc.sectionIds as [string, string];
    await callMcp(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
    const onFeature = await updateSection(doc.documentId, a, "A on feature", "feature");
    taken();

    const ff = await callMcp<{ mergeRequestId: string }>(mcp, "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Fast-forward",
    });
    const fastForward = await callMcp<{ mergeCommitId: string; fastForward: boolean }>(mcp, "merge_requests", {
      action: "execute",
      mergeRequestId: ff.mergeRequestId,
    });
    expect(fastForward).toMatchObject({ fastForward: true, mergeCommitId: onFeature.commitId });
    expect(taken()).toEqual([
      {
        documentId: doc.documentId,
        branchName: "main",
        previousCommitId: doc.commitId,
        commitId: onFeature.commitId,
        authorId: owner.userId,
        kind: "fast-forward",
      },
    ]);

    const onMain = await updateSection(doc.documentId, b, "B on main");
    await updateSection(doc.documentId, a, "A again on feature", "feature");
    taken();
    const mr = await callMcp<{ mergeRequestId: string }>(mcp, "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Merge",
    });
    // A listener that reads the branch when told sees the move committed (the merge runs in a transaction).
    const readsOnMove: Array<Promise<string | undefined>> = [];
    const stopReading = onHeadMoved((move) =>
      readsOnMove.push(findBranch(server.db, move.documentId, move.branchName).then((branch) => branch?.headCommitId)),
    );
    const merged = await callMcp<{ mergeCommitId: string; fastForward: boolean }>(mcp, "merge_requests", {
      action: "execute",
      mergeRequestId: mr.mergeRequestId,
    }).finally(stopReading);
    expect(merged.fastForward).toBe(false);
    expect(await Promise.all(readsOnMove)).toEqual([merged.mergeCommitId]);
    expect(taken()).toEqual([
      {
        documentId: doc.documentId,
        branchName: "main",
        previousCommitId: onMain.commitId,
        commitId: merged.mergeCommitId,
        authorId: owner.userId,
        kind: "merge",
      },
    ]);
    expect(await head(doc.documentId)).toBe(merged.mergeCommitId);
  });

  test("a live draft's commit is announced as a write, like any other (the rooms follow it as they follow every move)", async () => {
    const doc = await newDocument("moves/draft", ["A"]);
    const editor = await connectLive(server.url, roomName(doc.documentId, "main", doc.sectionIds[0]!), { token: owner.token });
    try {
      editor.text().insert(0, "typed live ");
      const drafted = () =>
        callMcp<{ uncommittedChanges: boolean }>(mcp, "documents", {
          action: "draft_status",
          documentId: doc.documentId,
          branchName: "main",
        });
      for (let tries = 0; !(await drafted()).uncommittedChanges; tries++) {
        if (tries > 100) throw new Error("the live edit never reached the draft");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      taken();
      const committed = await callMcp<{ commitId: string; changed: boolean }>(mcp, "documents", {
        action: "commit",
        documentId: doc.documentId,
        branchName: "main",
      });
      expect(committed.changed).toBe(true);
      expect(taken()).toEqual([
        {
          documentId: doc.documentId,
          branchName: "main",
          previousCommitId: doc.commitId,
          commitId: committed.commitId,
          authorId: owner.userId,
          kind: "write",
        },
      ]);
      // Following its own commit changed nothing in the editor's text.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(editor.text().toString()).toBe("typed live A v0");
    } finally {
      editor.close();
    }
  });
});

describe("nothing is announced without a committed move", () => {
  test("refused writes, no-op writes, an existing branch and a failing merge", async () => {
    const doc = await newDocument("moves/refused");
    const [a] = doc.sectionIds as [string];
    await callMcp(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
    // Access changes are a person's (signed in), not an agent's.
    await server.callTool("documents", owner.userId, {
      action: "set_permissions",
      documentId: doc.documentId,
      grants: [{ userId: reader.userId, permission: "read" }],
    });
    taken();

    const stale = await callMcpError(mcp, "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: a,
      newContent: [text("never")],
      expectedContentHash: "0".repeat(64),
    });
    expect(stale.code).toBe("CONTENT_HASH_MISMATCH");
    const notAllowed = await callMcpError(readerMcp, "sections", {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: a,
      newContent: [text("never")],
    });
    expect(notAllowed.code).toBe("PERMISSION_DENIED");
    expect(await updateSection(doc.documentId, a, "A v0")).toMatchObject({ changed: false, commitId: doc.commitId });
    expect(
      (await callMcpError(mcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" })).code,
    ).toBe("BRANCH_EXISTS");
    expect(taken()).toEqual([]);

    // Both sides change section A: executing without a resolution fails and moves nothing.
    await updateSection(doc.documentId, a, "A on main");
    await updateSection(doc.documentId, a, "A on feature", "feature");
    const mr = await callMcp<{ mergeRequestId: string }>(mcp, "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Conflicting",
    });
    taken();
    const failed = await callMcpError(mcp, "merge_requests", { action: "execute", mergeRequestId: mr.mergeRequestId });
    expect(failed.code).toBe("UNRESOLVED_CONFLICTS");
    expect(taken()).toEqual([]);
  });
});

describe("concurrent writes", () => {
  test("announce a chain of moves that links up with no gap", async () => {
    const names = ["A", "B", "C", "D", "E", "F", "G", "H"];
    const doc = await newDocument("moves/concurrent", names);
    taken();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => updateSection(doc.documentId, doc.sectionIds[i % names.length]!, `write ${i}`)),
    );
    const seen = taken();
    expect(seen).toHaveLength(40);
    expect(new Set(seen.map((m) => m.commitId))).toEqual(new Set(results.map((r) => r.commitId)));
    expect(seen[0]!.previousCommitId).toBe(doc.commitId);
    for (const [i, move] of seen.entries()) {
      expect(move).toMatchObject({ documentId: doc.documentId, branchName: "main", kind: "write", authorId: owner.userId });
      if (i > 0) expect(move.previousCommitId).toBe(seen[i - 1]!.commitId);
    }
    expect(seen.at(-1)!.commitId).toBe(await head(doc.documentId));
  });
});

describe("listeners", () => {
  test("a throwing listener is logged and neither fails the write nor stops other listeners", async () => {
    const doc = await newDocument("moves/throwing");
    taken();
    const stop = onHeadMoved(() => {
      throw new Error("listener broke");
    });
    const logged: unknown[] = [];
    const originalError = console.error;
    console.error = (...args: unknown[]) => logged.push(args);
    try {
      const written = await updateSection(doc.documentId, doc.sectionIds[0]!, "despite the listener");
      expect(written.changed).toBe(true);
      expect(taken().map((m) => m.commitId)).toEqual([written.commitId]);
      expect(logged).toHaveLength(1);
    } finally {
      console.error = originalError;
      stop();
    }
  });

  test("an unsubscribed listener hears nothing more, and a move cannot be changed by a listener", async () => {
    const doc = await newDocument("moves/unsubscribe");
    const heard: HeadMove[] = [];
    const stop = onHeadMoved((move) => heard.push(move));
    await updateSection(doc.documentId, doc.sectionIds[0]!, "heard");
    stop();
    await updateSection(doc.documentId, doc.sectionIds[0]!, "not heard");
    expect(heard).toHaveLength(1);
    expect(Object.isFrozen(heard[0])).toBe(true);
    expect(taken()).toHaveLength(3);
  });
});
