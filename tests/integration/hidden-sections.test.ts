/**
 * A section hidden from a caller never shows: not in read, not in analyze,
 * not in log messages, not in error text — for a member hidden by the
 * section's team override and for an AI hidden by the section's aiAccess —
 * nor on a branch made before it was hidden, through the API or the pages.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { text } from "../helpers/blocks";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ToolName } from "@/server/actions/registry";
import { readSharedDocument } from "@/server/actions/share-links";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

const SECRET_NAME = "Acquisition target";
const SECRET_TEXT = "We are buying Initech";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let ownerAi: Client;
let documentId: string;
let secretId: string;
let aiHiddenId: string;
let mergeRequestId: string;

const asOwner = <T = Record<string, unknown>>(tool: ToolName, args: Record<string, unknown>) =>
  server.callToolAsSent(tool, owner.userId, args) as Promise<T>;

/** Every response and error a caller sees is checked for these. */
function assertNoLeak(value: unknown): void {
  const json = JSON.stringify(value);
  expect(json).not.toContain(SECRET_NAME);
  expect(json).not.toContain(SECRET_TEXT);
  expect(json).not.toContain(secretId);
}

/** A human member's call through tRPC; returns the result or the error payload. */
async function asMember(tool: ToolName, args: Record<string, unknown>): Promise<unknown> {
  const caller = server.trpcCaller(member) as unknown as Record<string, (a: unknown) => Promise<unknown>>;
  try {
    return await caller[tool === "merge_requests" ? "mergeRequests" : tool]!(args);
  } catch (error) {
    const cause = (error as { cause?: { toPayload?: () => unknown } }).cause;
    return { error: cause?.toPayload?.() ?? String(error) };
  }
}

beforeAll(async () => {
  server = await startTestServer({ next: true });
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  ownerAi = await server.mcpClient(owner.token);
  const doc = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
    action: "create",
    path: "board/plans",
    sections: [
      { name: "Public", content: [text("Everyone may read this")] },
      { name: SECRET_NAME, content: [text(SECRET_TEXT)] },
      { name: "Model notes", content: [text("Not for the AI")] },
    ],
  });
  documentId = doc.documentId;
  [, secretId, aiHiddenId] = doc.sectionIds as [string, string, string];
  // Overrides are set on a branch and merged, as they must be.
  await asOwner("documents", { action: "create_branch", documentId, branchName: "lockdown" });
  await asOwner("sections", {
    action: "update",
    documentId,
    branchName: "lockdown",
    sectionId: secretId,
    defaultPermission: "none",
    commitMessage: `Hide ${SECRET_NAME}`,
  });
  await asOwner("sections", { action: "update", documentId, branchName: "lockdown", sectionId: aiHiddenId, aiAccess: "none" });
  const lockdown = await asOwner<{ mergeRequestId: string }>("merge_requests", {
    action: "create",
    documentId,
    sourceBranch: "lockdown",
    targetBranch: "main",
    title: "Lock down",
  });
  await asOwner("merge_requests", { action: "execute", mergeRequestId: lockdown.mergeRequestId });

  // Then a conflict inside the hidden section: both sides change it.
  await asOwner("documents", { action: "create_branch", documentId, branchName: "feature" });
  await asOwner("sections", {
    action: "update",
    documentId,
    branchName: "feature",
    sectionId: secretId,
    newContent: [text(`${SECRET_TEXT} for $5M`)],
  });
  await asOwner("sections", {
    action: "update",
    documentId,
    branchName: "main",
    sectionId: secretId,
    newContent: [text(`${SECRET_TEXT} for $6M`)],
  });
  await asOwner("sections", {
    action: "update",
    documentId,
    branchName: "feature",
    sectionId: doc.sectionIds[0],
    newContent: [text("Public, revised")],
  });
  const mr = await asOwner<{ mergeRequestId: string }>("merge_requests", {
    action: "create",
    documentId,
    sourceBranch: "feature",
    targetBranch: "main",
    title: "Feature",
  });
  mergeRequestId = mr.mergeRequestId;
}, 120_000);

afterAll(async () => {
  await ownerAi?.close();
  await server?.close();
});

describe("a member hidden from a section by its team override", () => {
  test("read leaves it out, positions have no gap", async () => {
    const view = (await asMember("read", { documentId })) as { sections: Array<{ name: string; position: number }> };
    expect(view.sections.map((s) => [s.name, s.position])).toEqual([
      ["Public", 0],
      ["Model notes", 1],
    ]);
    assertNoLeak(view);
  });

  test("naming it reads exactly like a missing section, and writes change nothing", async () => {
    for (const [tool, args] of [
      ["read", { documentId, sectionIds: [secretId] }],
      ["sections", { action: "update", documentId, branchName: "main", sectionId: secretId, newContent: [text("overwrite")] }],
      ["sections", { action: "delete", documentId, branchName: "main", sectionId: secretId }],
    ] as const) {
      const result = (await asMember(tool, args)) as { error: { code: string; message: string } };
      expect(result.error.code).toBe("NOT_FOUND");
      expect(JSON.stringify(result)).not.toContain(SECRET_NAME);
    }
    const stillThere = await asOwner<{ sections: Array<{ sectionId: string; content: unknown[] }> }>("read", {
      documentId,
      sectionIds: [secretId],
    });
    expect(JSON.stringify(stillThere.sections[0]!.content)).toContain(SECRET_TEXT);
  });

  test("older versions do not reveal it: hiding it on the default branch hides its past, also through a share link", async () => {
    const log = await asOwner<{ commits: Array<{ commitId: string }> }>("documents", {
      action: "log",
      documentId,
      branchName: "main",
      limit: 200,
    });
    const created = log.commits.at(-1)!.commitId;
    const ownersView = await asOwner<{ sections: Array<{ name: string }> }>("read", { documentId, commitId: created });
    expect(ownersView.sections.map((s) => s.name)).toContain(SECRET_NAME);

    const old = (await asMember("read", { documentId, commitId: created })) as { sections: Array<{ name: string; position: number }> };
    expect(old.sections.map((s) => [s.name, s.position])).toEqual([
      ["Public", 0],
      ["Model notes", 1],
    ]);
    assertNoLeak(old);
    assertNoLeak(await asMember("documents", { action: "show", documentId, commitId: created }));
    const named = (await asMember("read", { documentId, commitId: created, sectionIds: [secretId] })) as { error: { code: string } };
    expect(named.error.code).toBe("NOT_FOUND");

    const link = await asOwner<{ path: string; shareLinkId: string }>("documents", {
      action: "create_share_link",
      documentId,
      permission: "read",
    });
    try {
      const shared = await readSharedDocument(server.db, link.path.replace(/^.*\/share\//, ""), { commitId: created }, new Date());
      expect(shared.sections.map((s) => s.name)).toEqual(["Public", "Model notes"]);
      assertNoLeak(shared);
    } finally {
      await asOwner("documents", { action: "revoke_share_link", documentId, shareLinkId: link.shareLinkId });
    }
  });

  test("log hides the messages of commits that touched it", async () => {
    const log = (await asMember("documents", { action: "log", documentId, limit: 50 })) as { commits: Array<{ message: string }> };
    expect(log.commits.some((c) => c.message === "Changes to sections you cannot see")).toBe(true);
    assertNoLeak(log);
    const ownerLog = await asOwner<{ commits: Array<{ message: string }> }>("documents", { action: "log", documentId, limit: 50 });
    expect(ownerLog.commits.some((c) => c.message.includes(SECRET_NAME))).toBe(true);
  });

  test("reorder moves only what the member sees; the hidden section keeps its slot", async () => {
    await asOwner("documents", { action: "create_branch", documentId, branchName: "member-order" });
    const view = (await asMember("read", { documentId, branchName: "member-order" })) as { sections: Array<{ sectionId: string }> };
    const ids = view.sections.map((s) => s.sectionId);
    const result = await asMember("sections", {
      action: "reorder",
      documentId,
      branchName: "member-order",
      sectionOrder: [...ids].reverse(),
    });
    assertNoLeak(result);
    const full = await asOwner<{ sections: Array<{ sectionId: string }> }>("read", { documentId, branchName: "member-order" });
    expect(full.sections.map((s) => s.sectionId)).toEqual([ids[1], secretId, ids[0]]);
  });

  test("analyze leaves it out but says a hidden conflict blocks; execute refuses without naming it", async () => {
    const analysis = (await asMember("merge_requests", { action: "analyze", mergeRequestId })) as {
      hasConflicts: boolean;
      hiddenConflicts: number;
      sections: Array<{ name: string }>;
    };
    expect(analysis.hasConflicts).toBe(true);
    expect(analysis.hiddenConflicts).toBe(1);
    expect(analysis.sections.map((s) => s.name)).toEqual(["Public"]);
    assertNoLeak(analysis);
    const execute = (await asMember("merge_requests", {
      action: "execute",
      mergeRequestId,
      resolutions: [{ sectionId: secretId, resolution: "source" }],
    })) as {
      error: { code: string; message: string };
    };
    expect(execute.error.code).toBe("UNRESOLVED_CONFLICTS");
    expect(execute.error.message).toMatch(/not allowed to see/);
    assertNoLeak(execute);
    const ownerView = await asOwner<{ sections: Array<{ name: string; status: string }>; hiddenConflicts: number }>("merge_requests", {
      action: "analyze",
      mergeRequestId,
    });
    expect(ownerView.hiddenConflicts).toBe(0);
    expect(ownerView.sections.find((s) => s.name === SECRET_NAME)!.status).toBe("conflict");
  });
});

describe("an AI hidden from a section by its aiAccess", () => {
  test("the owner's own token over MCP cannot see or touch it", async () => {
    const view = await callMcp<{ sections: Array<{ sectionId: string; name: string }> }>(ownerAi, "read", { documentId });
    expect(view.sections.map((s) => s.name)).toEqual(["Public", SECRET_NAME]);
    expect(JSON.stringify(view)).not.toContain("Not for the AI");
    const update = await ownerAi.callTool({
      name: "sections",
      arguments: { action: "update", documentId, branchName: "main", sectionId: aiHiddenId, newContent: [text("AI was here")] },
    });
    expect(toolError(update).code).toBe("NOT_FOUND");
    expect(JSON.stringify(update)).not.toContain("Model notes");
  });
});

describe("history tells no one about sections they cannot see", () => {
  const FALCON = "Project Falcon";
  const BUDGET = "Falcon budget";
  let docId: string;
  let publicSectionId: string;
  let createCommitId: string;
  let onlyHiddenCommitId: string;
  let deleteCommitId: string;
  let mergeCommitId: string;

  const noFalcon = (value: unknown) => {
    const json = JSON.stringify(value);
    expect(json).not.toContain("Falcon");
    expect(json).not.toContain("Hangar 18");
  };

  beforeAll(async () => {
    const doc = await asOwner<{ documentId: string; sectionIds: string[]; commitId: string }>("documents", {
      action: "create",
      path: "history/leaks",
      sections: [{ name: "Public", content: [text("Open to all")] }],
    });
    docId = doc.documentId;
    [publicSectionId] = doc.sectionIds as [string];
    createCommitId = doc.commitId;

    // A section hidden from the team and from agents arrives on main through review.
    await asOwner("documents", { action: "create_branch", documentId: docId, branchName: "falcon" });
    const falcon = await asOwner<{ sectionId: string }>("sections", {
      action: "create",
      documentId: docId,
      branchName: "falcon",
      name: FALCON,
      content: [text("Hangar 18")],
      defaultPermission: "none",
      aiAccess: "none",
    });
    const hide = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId: docId,
      sourceBranch: "falcon",
      targetBranch: "main",
      title: "Falcon",
    });
    await asOwner("merge_requests", { action: "execute", mergeRequestId: hide.mergeRequestId });

    // A commit that touches only the hidden section, then one by the member.
    const onlyHidden = await asOwner<{ commitId: string }>("sections", {
      action: "update",
      documentId: docId,
      branchName: "main",
      sectionId: falcon.sectionId,
      newContent: [text("Hangar 18, level 2")],
    });
    onlyHiddenCommitId = onlyHidden.commitId;
    await asMember("sections", {
      action: "update",
      documentId: docId,
      branchName: "main",
      sectionId: publicSectionId,
      newContent: [text("Open to all, edited")],
    });

    // The hidden section is deleted: the head no longer has it, its name stays in the commit message.
    const deleted = await asOwner<{ commitId: string }>("sections", {
      action: "delete",
      documentId: docId,
      branchName: "main",
      sectionId: falcon.sectionId,
    });
    deleteCommitId = deleted.commitId;

    // A branch adds and removes another hidden section and changes a visible one; main moves on, so the merge is a real merge.
    await asOwner("documents", { action: "create_branch", documentId: docId, branchName: "budget" });
    const budget = await asOwner<{ sectionId: string }>("sections", {
      action: "create",
      documentId: docId,
      branchName: "budget",
      name: BUDGET,
      content: [text("Hangar 18 costs")],
      defaultPermission: "none",
    });
    await asOwner("sections", { action: "delete", documentId: docId, branchName: "budget", sectionId: budget.sectionId });
    await asOwner("sections", {
      action: "update",
      documentId: docId,
      branchName: "budget",
      sectionId: publicSectionId,
      newContent: [text("Open to all, from the budget branch")],
    });
    await asOwner("sections", {
      action: "create",
      documentId: docId,
      branchName: "main",
      name: "Main moves on",
      content: [text("meanwhile")],
    });
    const merge = await asOwner<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId: docId,
      sourceBranch: "budget",
      targetBranch: "main",
      title: "Budget",
    });
    mergeCommitId = (
      await asOwner<{ mergeCommitId: string }>("merge_requests", { action: "execute", mergeRequestId: merge.mergeRequestId })
    ).mergeCommitId;
  }, 120_000);

  test("a member's log and show name no hidden section, deleted or merged, and say that something is hidden", async () => {
    const log = (await asMember("documents", { action: "log", documentId: docId, limit: 50 })) as {
      commits: Array<{ commitId: string; message: string }>;
    };
    noFalcon(log);
    const byId = new Map(log.commits.map((c) => [c.commitId, c.message]));
    expect(byId.get(deleteCommitId)).toBe("Changes to sections you cannot see");
    expect(byId.get(onlyHiddenCommitId)).toBe("Changes to sections you cannot see");
    expect(byId.get(mergeCommitId)).toBe(
      "Merge branch 'budget' into 'main'\n\n* (changes to sections not everyone can see)\n* (changes to sections not everyone can see)\n* Update section \"Public\"",
    );
    for (const commitId of [deleteCommitId, onlyHiddenCommitId, mergeCommitId]) {
      const shown = await asMember("documents", { action: "show", documentId: docId, commitId });
      noFalcon(shown);
    }
    // The owner's history keeps every name.
    const ownerLog = await asOwner<{ commits: Array<{ commitId: string; message: string }> }>("documents", {
      action: "log",
      documentId: docId,
      limit: 50,
    });
    expect(ownerLog.commits.find((c) => c.commitId === deleteCommitId)!.message).toBe(`Delete section "${FALCON}"`);
  });

  test("an agent (the owner's token over MCP) reads history without the section hidden from agents", async () => {
    // The owner's agent sees what the owner sees (the team-hidden budget section too), capped by aiAccess: not Project Falcon.
    const log = await callMcp<{ commits: Array<{ commitId: string; message: string }> }>(ownerAi, "documents", {
      action: "log",
      documentId: docId,
      limit: 50,
    });
    expect(JSON.stringify(log)).not.toContain(FALCON);
    expect(log.commits.find((c) => c.commitId === deleteCommitId)!.message).toBe("Changes to sections you cannot see");
    expect(log.commits.find((c) => c.commitId === onlyHiddenCommitId)!.message).toBe("Changes to sections you cannot see");
    for (const commitId of [deleteCommitId, onlyHiddenCommitId]) {
      const shown = await callMcp(ownerAi, "documents", { action: "show", documentId: docId, commitId });
      expect(JSON.stringify(shown)).not.toContain(FALCON);
      expect(JSON.stringify(shown)).not.toContain("Hangar 18");
    }
  });

  test("reverting to a commit the member cannot see is NOT_FOUND, worded like a missing commit, and changes nothing", async () => {
    const before = await asOwner<{ commits: Array<{ commitId: string }> }>("documents", { action: "log", documentId: docId, limit: 1 });
    const refused = (await asMember("documents", {
      action: "revert",
      documentId: docId,
      branchName: "main",
      commitId: onlyHiddenCommitId,
    })) as {
      error: { code: string; message: string };
    };
    expect(refused.error.code).toBe("NOT_FOUND");
    noFalcon(refused);
    const missing = (await asMember("documents", {
      action: "revert",
      documentId: docId,
      branchName: "main",
      commitId: "00000000-0000-4000-8000-000000000000",
    })) as {
      error: { message: string };
    };
    expect(refused.error.message.replace(onlyHiddenCommitId, "X")).toBe(
      missing.error.message.replace("00000000-0000-4000-8000-000000000000", "X"),
    );
    const refusedAi = await ownerAi.callTool({
      name: "documents",
      arguments: { action: "revert", documentId: docId, branchName: "main", commitId: onlyHiddenCommitId },
    });
    expect(toolError(refusedAi).code).toBe("NOT_FOUND");
    const after = await asOwner<{ commits: Array<{ commitId: string }> }>("documents", { action: "log", documentId: docId, limit: 1 });
    expect(after.commits[0]!.commitId).toBe(before.commits[0]!.commitId);
  });

  test("revert messages quote the reverted subject as text, and never a subject that names a hidden section", async () => {
    await asOwner("documents", { action: "create_branch", documentId: docId, branchName: "reverts" });
    const toCreate = await asOwner<{ commitId: string }>("documents", {
      action: "revert",
      documentId: docId,
      branchName: "reverts",
      commitId: createCommitId,
    });
    const toHidden = await asOwner<{ commitId: string }>("documents", {
      action: "revert",
      documentId: docId,
      branchName: "reverts",
      commitId: onlyHiddenCommitId,
    });
    const log = await asOwner<{ commits: Array<{ commitId: string; message: string }> }>("documents", {
      action: "log",
      documentId: docId,
      branchName: "reverts",
      limit: 2,
    });
    const messages = new Map(log.commits.map((c) => [c.commitId, c.message]));
    expect(messages.get(toCreate.commitId)).toBe(`Revert to ${createCommitId.slice(0, 8)} ("Create document "history/leaks"")`);
    expect(messages.get(toHidden.commitId)).toBe(`Revert to ${onlyHiddenCommitId.slice(0, 8)}`);
  });
});

describe("a branch made before the hiding (issue 23)", () => {
  const BID = "Hostile bid";
  const BID_TEXT = "We offer 40 a share";
  let docId: string;
  let publicSectionId: string;
  let bidId: string;
  let bidOnOldBranchCommitId: string;
  let bidMergeRequestId: string;

  const noBid = (value: unknown) => {
    const json = typeof value === "string" ? value : JSON.stringify(value);
    expect(json).not.toContain(BID);
    expect(json).not.toContain(BID_TEXT);
  };

  /** Signs in through the credentials form and returns the session cookie. */
  async function sessionCookie(email: string): Promise<string> {
    const csrf = await fetch(`${server.url}/api/auth/csrf`);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const cookie = csrf.headers
      .getSetCookie()
      .map((c) => c.split(";", 1)[0])
      .join("; ");
    const signedIn = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, origin: server.url },
      body: new URLSearchParams({ csrfToken, email, password: "correct horse battery", json: "true" }),
    });
    await signedIn.arrayBuffer();
    return signedIn.headers
      .getSetCookie()
      .map((c) => c.split(";", 1)[0])
      .join("; ");
  }

  async function page(path: string, cookie: string): Promise<string> {
    const response = await fetch(`${server.url}${path}`, { headers: { cookie }, redirect: "manual" });
    expect(response.status, path).toBe(200);
    return response.text();
  }

  beforeAll(async () => {
    const doc = await asOwner<{ documentId: string; sectionIds: string[] }>("documents", {
      action: "create",
      path: "board/takeover",
      sections: [
        { name: "Timeline", content: [text("Everyone may read this")] },
        { name: BID, content: [text(BID_TEXT)] },
      ],
    });
    docId = doc.documentId;
    [publicSectionId, bidId] = doc.sectionIds as [string, string];
    const onDoc = (args: Record<string, unknown>) => ({ documentId: docId, ...args });
    // o3 is made, and changes the section (the message names it), before main hides it.
    await asOwner("documents", onDoc({ action: "create_branch", branchName: "o3" }));
    bidOnOldBranchCommitId = (
      await asOwner<{ commitId: string }>(
        "sections",
        onDoc({ action: "update", branchName: "o3", sectionId: bidId, newContent: [text(`${BID_TEXT}, first draft`)] }),
      )
    ).commitId;
    await asOwner("documents", onDoc({ action: "create_branch", branchName: "hide-bid" }));
    await asOwner("sections", onDoc({ action: "update", branchName: "hide-bid", sectionId: bidId, defaultPermission: "none" }));
    const hide = await asOwner<{ mergeRequestId: string }>(
      "merge_requests",
      onDoc({ action: "create", sourceBranch: "hide-bid", targetBranch: "main", title: "Hide the bid" }),
    );
    await asOwner("merge_requests", { action: "execute", mergeRequestId: hide.mergeRequestId });

    // The member branches m3 off o3; someone who may see the section changes it there and on o3: a conflict.
    const created = (await asMember("documents", onDoc({ action: "create_branch", branchName: "m3", sourceBranch: "o3" }))) as {
      error?: unknown;
    };
    expect(created.error).toBeUndefined();
    await asOwner("sections", onDoc({ action: "update", branchName: "m3", sectionId: bidId, newContent: [text(`${BID_TEXT}, raised`)] }));
    await asMember(
      "sections",
      onDoc({ action: "update", branchName: "m3", sectionId: publicSectionId, newContent: [text("Timeline, m3")] }),
    );
    await asOwner("sections", onDoc({ action: "update", branchName: "o3", sectionId: bidId, newContent: [text(`${BID_TEXT}, lowered`)] }));
    bidMergeRequestId = (
      await asOwner<{ mergeRequestId: string }>(
        "merge_requests",
        onDoc({ action: "create", sourceBranch: "m3", targetBranch: "o3", title: "Bring m3 back" }),
      )
    ).mergeRequestId;
  }, 120_000);

  test("the member cannot rename it on m3, and log and analyze leave it out", async () => {
    const rename = (await asMember("sections", {
      action: "update",
      documentId: docId,
      branchName: "m3",
      sectionId: bidId,
      newName: "Renamed by the member",
    })) as { error: { code: string } };
    expect(rename.error.code).toBe("NOT_FOUND");
    noBid(rename);
    const log = (await asMember("documents", { action: "log", documentId: docId, branchName: "m3", limit: 50 })) as {
      commits: Array<{ commitId: string; message: string }>;
    };
    noBid(log);
    expect(log.commits.find((c) => c.commitId === bidOnOldBranchCommitId)!.message).toBe("Changes to sections you cannot see");
    const analysis = (await asMember("merge_requests", { action: "analyze", mergeRequestId: bidMergeRequestId })) as {
      hiddenConflicts: number;
      sections: Array<{ sectionId: string }>;
    };
    noBid(analysis);
    expect(analysis.hiddenConflicts).toBe(1);
    expect(analysis.sections.map((s) => s.sectionId)).toEqual([publicSectionId]);
  });

  test("the document, history and merge-request pages of those branches show nothing of it to the member", async () => {
    const memberCookie = await sessionCookie(member.email);
    const hiddenCommit = "Changes to sections you cannot see";
    // Each page with something it must show, so an empty page cannot pass.
    const pages: Array<[string, string]> = [
      [`/documents/${docId}?branch=m3`, "Timeline, m3"],
      [`/documents/${docId}?branch=o3`, hiddenCommit],
      [`/documents/${docId}/history?branch=m3`, hiddenCommit],
      [`/documents/${docId}/history?branch=o3&commit=${bidOnOldBranchCommitId}`, hiddenCommit],
      [`/merge-requests/${bidMergeRequestId}`, "Timeline, m3"],
    ];
    for (const [path, shown] of pages) {
      const html = await page(path, memberCookie);
      expect(html, path).toContain(shown);
      noBid(html);
    }
    // The owner's pages show it: what the member's leave out is there to leave out.
    const ownerCookie = await sessionCookie(owner.email);
    expect(await page(`/documents/${docId}/history?branch=m3`, ownerCookie)).toContain(BID);
    expect(await page(`/merge-requests/${bidMergeRequestId}`, ownerCookie)).toContain(BID_TEXT);
  }, 60_000);
});
