/**
 * Review rules of merge requests over MCP and tRPC: an approval covers the
 * sections its approver saw, as they saw them; the document's required
 * approvals gate execute until every section the merge brings is covered by
 * people's approvals (an agent's is shown and never counts); heads the
 * reviewer did not see are never merged; and a conflicting section can be
 * resolved with content the reviewer wrote (starting from the server's
 * three-way merge).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let rita: TestUser;
let ownerMcp: Client;
let ritaMcp: Client;

const text = (t: string) => ({ blockType: "text" as const, text: t });

interface Reviewer {
  userId: string;
  state: string;
  stale: boolean;
  approvedSourceHeadCommitId: string | null;
  approvedTargetHeadCommitId: string | null;
  reviewedAs: "person" | "agent" | null;
}
interface SectionReview {
  sectionId: string;
  name: string;
  approvedBy: string[];
  needsReview: boolean;
}
interface MergeRequest {
  mergeRequestId: string;
  status: string;
  reviewers: Reviewer[];
  requiredApprovals: number;
  approvals: number;
  sectionReviews: SectionReview[];
  hiddenSectionsNeedingReview: number;
}
interface Analysis {
  hasConflicts: boolean;
  sourceHeadCommitId: string;
  targetHeadCommitId: string;
  sections: Array<{ sectionId: string; name: string; status: string; proposedMerge: { text: string; conflictingHunks: number } | null }>;
}
type Args = Record<string, unknown>;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  rita = await server.createUser("rita@example.test", "Rita Reviewer");
  ownerMcp = await server.mcpClient(owner.token);
  ritaMcp = await server.mcpClient(rita.token);
});

afterAll(async () => {
  await ownerMcp?.close();
  await ritaMcp?.close();
  await server?.close();
});

/** A document with sections A, B, C on main, a branch `feature`, and helpers that write and read through MCP as the owner. */
async function setup(path: string, contents: Record<"A" | "B" | "C", string> = { A: "A original", B: "B original", C: "C original" }) {
  const doc = await callMcp<{ documentId: string; sectionIds: string[] }>(ownerMcp, "documents", {
    action: "create",
    path,
    sections: (["A", "B", "C"] as const).map((name) => ({ name, content: [text(contents[name])] })),
  });
  await callMcp(ownerMcp, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
  const [a, b, c] = doc.sectionIds as [string, string, string];
  const update = (branchName: string, sectionId: string, t: string) =>
    callMcp(ownerMcp, "sections", { action: "update", documentId: doc.documentId, branchName, sectionId, newContent: [text(t)] });
  const open = () =>
    callMcp<MergeRequest>(ownerMcp, "merge_requests", {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Merge feature",
      reviewerIds: [rita.userId],
    });
  return { documentId: doc.documentId, a, b, c, update, open };
}

const ritaOf = (request: MergeRequest) => request.reviewers.find((r) => r.userId === rita.userId)!;

/** Rita reviewing in person, signed in (the web app's face): the only kind of review that counts. */
const ritaInPerson = (action: "approve" | "request_changes" | "reset", mergeRequestId: string) =>
  server.callTool("merge_requests", rita.userId, { action, mergeRequestId }) as Promise<MergeRequest>;

/** The document's rule, set in person by its owner. */
const requireApprovals = (documentId: string, requiredApprovals: number) =>
  server.callTool("merge_requests", owner.userId, { action: "set_required_approvals", documentId, requiredApprovals });

describe("over MCP", () => {
  const get = (mergeRequestId: string) => callMcp<MergeRequest>(ownerMcp, "merge_requests", { action: "get", mergeRequestId });

  test("an approval records both heads; a section it did not see needs its own review; one it saw that changes makes it stale", async () => {
    const doc = await setup("reviews/stale");
    await doc.update("feature", doc.a, "A reviewed");
    await doc.update("feature", doc.b, "B reviewed");
    const { mergeRequestId } = await doc.open();
    const analysis = await callMcp<Analysis>(ritaMcp, "merge_requests", { action: "analyze", mergeRequestId });

    const approved = (await server.callTool("merge_requests", rita.userId, {
      action: "approve",
      mergeRequestId,
      expectedSourceHeadCommitId: analysis.sourceHeadCommitId,
      expectedTargetHeadCommitId: analysis.targetHeadCommitId,
    })) as MergeRequest;
    expect(ritaOf(approved)).toMatchObject({
      state: "approved",
      stale: false,
      reviewedAs: "person",
      approvedSourceHeadCommitId: analysis.sourceHeadCommitId,
      approvedTargetHeadCommitId: analysis.targetHeadCommitId,
    });
    expect(approved.approvals).toBe(1);

    // C was identical on every side when Rita approved: she never saw it, so her approval stands but does not cover C.
    await doc.update("feature", doc.c, "C changed after the approval");
    const afterC = await get(mergeRequestId);
    expect(ritaOf(afterC)).toMatchObject({ state: "approved", stale: false });
    expect(afterC.sectionReviews.map((s) => [s.name, s.approvedBy])).toEqual([
      ["A", [rita.userId]],
      ["B", [rita.userId]],
      ["C", []],
    ]);
    expect(afterC.approvals).toBe(0);

    await doc.update("feature", doc.a, "A changed after the approval");
    const afterA = await get(mergeRequestId);
    expect(ritaOf(afterA)).toMatchObject({ state: "approved", stale: true });
    expect(afterA.sectionReviews.find((s) => s.sectionId === doc.a)!.approvedBy).toEqual([]);
    expect(afterA.approvals).toBe(0);

    // An approval of heads that have moved since is refused: nobody approves what they did not see.
    const refused = await callMcpError(ritaMcp, "merge_requests", {
      action: "approve",
      mergeRequestId,
      expectedSourceHeadCommitId: analysis.sourceHeadCommitId,
    });
    expect(refused.code).toBe("BRANCH_MOVED");
    expect(ritaOf(await get(mergeRequestId)).stale).toBe(true);

    const withdrawn = await callMcp<MergeRequest>(ritaMcp, "merge_requests", { action: "reset", mergeRequestId });
    expect(ritaOf(withdrawn)).toMatchObject({ state: "pending", stale: false, approvedSourceHeadCommitId: null });
  });

  test("a change on the target to a section the approver saw makes the approval stale too", async () => {
    const doc = await setup("reviews/stale-target");
    await doc.update("feature", doc.a, "A on feature");
    const { mergeRequestId } = await doc.open();
    await callMcp(ritaMcp, "merge_requests", { action: "approve", mergeRequestId });
    await doc.update("main", doc.b, "B on main, not seen");
    expect(ritaOf(await get(mergeRequestId)).stale).toBe(false);
    await doc.update("main", doc.a, "A on main");
    expect(ritaOf(await get(mergeRequestId)).stale).toBe(true);
  });

  test("required approvals: an API token may not set the rule; execute refuses until a person's approval covers the changes", async () => {
    const doc = await setup("reviews/required-mcp");
    await doc.update("feature", doc.a, "A for review");
    const { mergeRequestId } = await doc.open();

    const byToken = await callMcpError(ownerMcp, "merge_requests", {
      action: "set_required_approvals",
      documentId: doc.documentId,
      requiredApprovals: 1,
    });
    expect(byToken.code).toBe("PERMISSION_DENIED");
    expect(byToken.message).toMatch(/agent/);
    expect((await get(mergeRequestId)).requiredApprovals).toBe(0);

    await requireApprovals(doc.documentId, 1);
    expect((await get(mergeRequestId)).requiredApprovals).toBe(1);

    const unmet = await callMcpError(ownerMcp, "merge_requests", { action: "execute", mergeRequestId });
    expect(unmet.code).toBe("APPROVALS_REQUIRED");
    expect(unmet.details).toMatchObject({ requiredApprovals: 1, approvals: 0, sectionsNeedingReview: [doc.a] });

    await ritaInPerson("approve", mergeRequestId);
    await doc.update("feature", doc.a, "A changed after the approval");
    const changed = await callMcpError(ownerMcp, "merge_requests", { action: "execute", mergeRequestId });
    expect(changed.code).toBe("APPROVALS_REQUIRED");
    expect(changed.message).toContain(`"A" (${doc.a})`);

    await ritaInPerson("approve", mergeRequestId);
    const merged = await callMcp<{ status: string }>(ownerMcp, "merge_requests", { action: "execute", mergeRequestId });
    expect(merged.status).toBe("merged");
  });

  test("a conflict resolved as merged: the proposed three-way merge applies clean hunks and marks the rest; the written content lands", async () => {
    const doc = await setup("reviews/merged-mcp", { A: "one\ntwo\nthree\nfour\nfive", B: "B", C: "C" });
    await doc.update("feature", doc.a, "ONE\ntwo\nthree from feature\nfour\nfive");
    await doc.update("main", doc.a, "one\ntwo\nthree from main\nfour\nFIVE");
    const { mergeRequestId } = await doc.open();
    // Proposals are given on request only: a plain analyze stays lean.
    const plain = await callMcp<Analysis>(ownerMcp, "merge_requests", { action: "analyze", mergeRequestId });
    expect(plain.sections.every((s) => !("proposedMerge" in s))).toBe(true);
    const analysis = await callMcp<Analysis>(ownerMcp, "merge_requests", { action: "analyze", mergeRequestId, proposals: true });
    const conflict = analysis.sections.find((s) => s.sectionId === doc.a)!;
    expect(conflict.status).toBe("conflict");
    expect(analysis.sections.filter((s) => s.status !== "conflict").every((s) => s.proposedMerge === null)).toBe(true);
    expect({ ...plain, sections: plain.sections.map((s) => ({ ...s, proposedMerge: null })) }).toEqual({
      ...analysis,
      sections: analysis.sections.map((s) => ({ ...s, proposedMerge: null })),
    });
    expect(conflict.proposedMerge).toEqual({
      text: "ONE\ntwo\n<<<<<<< source\nthree from feature\n=======\nthree from main\n>>>>>>> target\nfour\nFIVE",
      conflictingHunks: 1,
    });

    const duplicate = await callMcpError(ownerMcp, "merge_requests", {
      action: "execute",
      mergeRequestId,
      resolutions: [{ sectionId: doc.a, resolution: "merged", content: [text("## A\nrepeated heading")] }],
    });
    expect(duplicate.code).toBe("DUPLICATE_HEADING");
    const missingContent = await callMcpError(ownerMcp, "merge_requests", {
      action: "execute",
      mergeRequestId,
      resolutions: [{ sectionId: doc.a, resolution: "merged" }],
    });
    expect(missingContent.code).toBe("VALIDATION_FAILED");

    const written = "ONE\ntwo\nthree from both\nfour\nFIVE";
    await callMcp(ownerMcp, "merge_requests", {
      action: "execute",
      mergeRequestId,
      expectedSourceHeadCommitId: analysis.sourceHeadCommitId,
      expectedTargetHeadCommitId: analysis.targetHeadCommitId,
      resolutions: [{ sectionId: doc.a, resolution: "merged", content: [text(written)] }],
    });
    const main = await callMcp<{ sections: Array<{ sectionId: string; name: string; content: unknown[] }> }>(ownerMcp, "read", {
      documentId: doc.documentId,
      branchName: "main",
    });
    expect(main.sections.find((s) => s.sectionId === doc.a)).toMatchObject({ name: "A", content: [text(written)] });
  });
});

describe("an approval covers the sections its approver saw", () => {
  const get = (mergeRequestId: string) => callMcp<MergeRequest>(ownerMcp, "merge_requests", { action: "get", mergeRequestId });
  const execute = (mergeRequestId: string) => callMcpError(ownerMcp, "merge_requests", { action: "execute", mergeRequestId });
  const merges = async (mergeRequestId: string) =>
    expect((await callMcp<{ status: string }>(ownerMcp, "merge_requests", { action: "execute", mergeRequestId })).status).toBe("merged");

  test("a person who saw every change approves: the request is approved and merges", async () => {
    const doc = await setup("coverage/happy");
    await doc.update("feature", doc.a, "A for review");
    await doc.update("feature", doc.b, "B for review");
    const { mergeRequestId } = await doc.open();
    await requireApprovals(doc.documentId, 1);
    expect((await get(mergeRequestId)).sectionReviews).toEqual([
      { sectionId: doc.a, name: "A", approvedBy: [], needsReview: true },
      { sectionId: doc.b, name: "B", approvedBy: [], needsReview: true },
    ]);

    const approved = await ritaInPerson("approve", mergeRequestId);
    expect(approved.sectionReviews.map((s) => [s.sectionId, s.approvedBy, s.needsReview])).toEqual([
      [doc.a, [rita.userId], false],
      [doc.b, [rita.userId], false],
    ]);
    expect(approved).toMatchObject({ approvals: 1, hiddenSectionsNeedingReview: 0 });
    await merges(mergeRequestId);
  });

  test("a section added after the approval blocks execute until someone reviews it", async () => {
    const doc = await setup("coverage/added");
    await doc.update("feature", doc.a, "A for review");
    const { mergeRequestId } = await doc.open();
    await requireApprovals(doc.documentId, 1);
    expect((await ritaInPerson("approve", mergeRequestId)).approvals).toBe(1);

    const added = await callMcp<{ sectionId: string }>(ownerMcp, "sections", {
      action: "create",
      documentId: doc.documentId,
      branchName: "feature",
      name: "D",
      content: [text("added after Rita approved")],
    });
    const after = await get(mergeRequestId);
    // Rita's approval still stands for A (she saw it as it is); D is not hers to have seen.
    expect(ritaOf(after)).toMatchObject({ state: "approved", stale: false });
    expect(after.sectionReviews.map((s) => [s.name, s.needsReview])).toEqual([
      ["A", false],
      ["D", true],
    ]);
    expect(after.approvals).toBe(0);
    const refused = await execute(mergeRequestId);
    expect(refused.code).toBe("APPROVALS_REQUIRED");
    expect(refused.details).toMatchObject({ approvals: 0, sectionsNeedingReview: [added.sectionId], hiddenSectionsNeedingReview: 0 });
    expect(refused.message).toContain(`"D" (${added.sectionId})`);
    expect(refused.message).not.toContain(`"A"`);

    await ritaInPerson("approve", mergeRequestId);
    await merges(mergeRequestId);
  });

  test("a changed section's new content needs a new approval", async () => {
    const doc = await setup("coverage/changed");
    await doc.update("feature", doc.a, "A for review");
    await doc.update("feature", doc.b, "B for review");
    const { mergeRequestId } = await doc.open();
    await requireApprovals(doc.documentId, 1);
    await ritaInPerson("approve", mergeRequestId);

    await doc.update("feature", doc.b, "B rewritten after the approval");
    const after = await get(mergeRequestId);
    expect(after.sectionReviews.map((s) => [s.name, s.approvedBy, s.needsReview])).toEqual([
      ["A", [rita.userId], false],
      ["B", [], true],
    ]);
    const refused = await execute(mergeRequestId);
    expect(refused.code).toBe("APPROVALS_REQUIRED");
    expect(refused.details).toMatchObject({ sectionsNeedingReview: [doc.b] });

    await ritaInPerson("approve", mergeRequestId);
    await merges(mergeRequestId);
  });

  test("a reviewer who may see none of the changed sections cannot approve; one who sees some covers only those", async () => {
    const doc = await setup("coverage/hidden");
    const hidden = await server.callTool("sections", owner.userId, {
      action: "create",
      documentId: doc.documentId,
      branchName: "feature",
      name: "H",
      content: [text("for managers only")],
      defaultPermission: "none",
    });
    const { mergeRequestId } = await doc.open();
    await requireApprovals(doc.documentId, 1);

    for (const approve of [
      () => ritaInPerson("approve", mergeRequestId),
      () => callMcp(ritaMcp, "merge_requests", { action: "approve", mergeRequestId }),
    ]) {
      await expect(approve()).rejects.toThrow(
        /You can see none of the sections merge request .* changes, so your approval would cover nothing/,
      );
    }
    const asRita = (await server.callTool("merge_requests", rita.userId, { action: "get", mergeRequestId })) as MergeRequest;
    expect(ritaOf(asRita).state).toBe("pending");
    expect(asRita).toMatchObject({ sectionReviews: [], hiddenSectionsNeedingReview: 1, approvals: 0 });

    // Once the request also changes A, which Rita may see, her approval covers A and nothing else.
    await doc.update("feature", doc.a, "A Rita can see");
    const approved = await ritaInPerson("approve", mergeRequestId);
    expect(approved).toMatchObject({ approvals: 0, hiddenSectionsNeedingReview: 1 });
    expect(approved.sectionReviews.map((s) => [s.name, s.approvedBy])).toEqual([["A", [rita.userId]]]);
    const refused = await execute(mergeRequestId);
    expect(refused.details).toMatchObject({ sectionsNeedingReview: [hidden.sectionId], hiddenSectionsNeedingReview: 0 });
    expect(refused.message).toContain(`"H" (${hidden.sectionId})`);
  });

  test("an agent's approval is recorded and shown, and counts for nothing", async () => {
    const doc = await setup("coverage/agent");
    await doc.update("feature", doc.a, "A for review");
    const { mergeRequestId } = await doc.open();
    await requireApprovals(doc.documentId, 1);

    const byAgent = await callMcp<MergeRequest>(ritaMcp, "merge_requests", { action: "approve", mergeRequestId });
    expect(ritaOf(byAgent)).toMatchObject({ state: "approved", reviewedAs: "agent", stale: false });
    expect(byAgent).toMatchObject({ approvals: 0, sectionReviews: [{ sectionId: doc.a, approvedBy: [], needsReview: true }] });
    const refused = await execute(mergeRequestId);
    expect(refused).toMatchObject({ code: "APPROVALS_REQUIRED", details: { sectionsNeedingReview: [doc.a] } });
    expect(refused.message).toMatch(/API token/);

    const withdrawn = await callMcp<MergeRequest>(ritaMcp, "merge_requests", { action: "reset", mergeRequestId });
    expect(ritaOf(withdrawn)).toMatchObject({ state: "pending", reviewedAs: null });
    expect(ritaOf(await ritaInPerson("approve", mergeRequestId)).reviewedAs).toBe("person");
    await merges(mergeRequestId);
  });
});

describe("list filters and the generated message", () => {
  test("authorId and awaitingReviewBy narrow the list; analyze's generatedCommitMessage is the message execute writes", async () => {
    const doc = await setup("reviews/filters");
    await doc.update("feature", doc.a, "A for the filters");
    const { mergeRequestId } = await doc.open();
    const list = (args: Args) =>
      callMcp<{ mergeRequests: MergeRequest[] }>(ownerMcp, "merge_requests", { action: "list", documentId: doc.documentId, ...args });
    const ids = async (args: Args) => (await list(args)).mergeRequests.map((r) => r.mergeRequestId);

    expect(await ids({ authorId: owner.userId })).toEqual([mergeRequestId]);
    expect(await ids({ authorId: rita.userId })).toEqual([]);
    expect(await ids({ awaitingReviewBy: rita.userId })).toEqual([mergeRequestId]);
    expect(await ids({ awaitingReviewBy: owner.userId })).toEqual([]);
    await callMcp(ritaMcp, "merge_requests", { action: "request_changes", mergeRequestId });
    expect(await ids({ awaitingReviewBy: rita.userId })).toEqual([]);

    await doc.update("main", doc.b, "B on main, so the merge needs a commit");
    const analysis = await callMcp<Analysis & { generatedCommitMessage: string | null }>(ownerMcp, "merge_requests", {
      action: "analyze",
      mergeRequestId,
    });
    expect(analysis.generatedCommitMessage).toMatch(/^Merge branch 'feature' into 'main'/);
    const execution = await callMcp<{ message: string }>(ownerMcp, "merge_requests", { action: "execute", mergeRequestId });
    expect(execution.message).toBe(analysis.generatedCommitMessage);
  });
});

describe("over tRPC", () => {
  type Trpc = { mergeRequests: { mutate(args: Args): Promise<unknown> } };
  const callTrpc = async <T>(token: string, args: Args): Promise<T> => {
    try {
      return (await (server.trpcClient(token) as unknown as Trpc).mergeRequests.mutate(args)) as T;
    } catch (error) {
      const payload = (error as { data?: { error?: { code: string; message: string } } }).data?.error;
      throw payload ? Object.assign(new Error(payload.message), payload) : error;
    }
  };

  test("required approvals set in person; the author's and an agent's approvals do not count; moved heads are refused; merged resolution", async () => {
    const doc = await setup("reviews/trpc", { A: "alpha\nbeta", B: "B", C: "C" });
    await doc.update("feature", doc.a, "alpha from feature\nbeta");
    await doc.update("main", doc.a, "alpha from main\nbeta");
    const { mergeRequestId } = await doc.open();
    await callMcp(ownerMcp, "merge_requests", { action: "update", mergeRequestId, reviewerIds: [owner.userId] });

    await expect(
      callTrpc(owner.token, { action: "set_required_approvals", documentId: doc.documentId, requiredApprovals: 1 }),
    ).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
    });
    // Main moves before the rule protects it; the analysis taken before is what BRANCH_MOVED is checked against below.
    const analysis = await callTrpc<Analysis>(owner.token, { action: "analyze", mergeRequestId });
    await doc.update("main", doc.b, "B moved on main");
    const inPerson = server.trpcCaller(owner);
    expect(await inPerson.mergeRequests({ action: "set_required_approvals", documentId: doc.documentId, requiredApprovals: 1 })).toEqual({
      documentId: doc.documentId,
      requiredApprovals: 1,
    });

    const resolutions = [{ sectionId: doc.a, resolution: "merged", content: [text("alpha from both\nbeta")] }];
    const ownApproval = (await inPerson.mergeRequests({ action: "approve", mergeRequestId })) as MergeRequest;
    expect(ownApproval.approvals).toBe(0);
    await expect(callTrpc(owner.token, { action: "execute", mergeRequestId, resolutions })).rejects.toMatchObject({
      code: "APPROVALS_REQUIRED",
    });

    // Rita's token makes her an agent: her approval is recorded and shown, and counts for nothing.
    const byAgent = await callTrpc<MergeRequest>(rita.token, { action: "approve", mergeRequestId });
    expect(ritaOf(byAgent)).toMatchObject({ state: "approved", reviewedAs: "agent" });
    expect(byAgent.approvals).toBe(0);
    await expect(callTrpc(owner.token, { action: "execute", mergeRequestId, resolutions })).rejects.toMatchObject({
      code: "APPROVALS_REQUIRED",
    });

    const signedIn = (await server.trpcCaller(rita).mergeRequests({ action: "approve", mergeRequestId })) as MergeRequest;
    expect(ritaOf(signedIn)).toMatchObject({ state: "approved", reviewedAs: "person" });
    expect(signedIn.approvals).toBe(1);
    await expect(
      callTrpc(owner.token, { action: "execute", mergeRequestId, resolutions, expectedTargetHeadCommitId: analysis.targetHeadCommitId }),
    ).rejects.toMatchObject({ code: "BRANCH_MOVED" });

    const execution = await callTrpc<{ status: string; fastForward: boolean }>(owner.token, {
      action: "execute",
      mergeRequestId,
      resolutions,
    });
    expect(execution).toMatchObject({ status: "merged", fastForward: false });
    const main = await inPerson.read({ documentId: doc.documentId, branchName: "main" });
    expect(main.sections.find((s) => s.sectionId === doc.a)?.content).toEqual([text("alpha from both\nbeta")]);
  });
});
