/**
 * Agents named in history: a commit, merge request, comment, reply or review
 * made with an API token records the token's name beside the person it acts
 * for, and `log`/`show` (MCP and tRPC), merge requests and comment threads
 * say "Claude via Olivia Owner"; a person's own actions, and rows made before
 * agents were recorded, name the person alone.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { commits } from "@/db/schema";
import { issueApiToken } from "@/server/auth/accounts";
import { eq } from "drizzle-orm";
import { text } from "../helpers/blocks";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

interface CommitSummary {
  commitId: string;
  message: string;
  authorName: string | null;
  agentName: string | null;
  madeBy: string;
}

let server: TestServer;
let olivia: TestUser;
let rita: TestUser;
let claude: Client;
let claudeToken: string;
let documentId: string;
let sectionId: string;

beforeAll(async () => {
  server = await startTestServer();
  olivia = await server.createUser("olivia@example.test", "Olivia Owner");
  rita = await server.createUser("rita@example.test", "Rita Reviewer");
  claudeToken = (await issueApiToken(server.db, { email: olivia.email, label: "Claude" }, new Date())).token;
  claude = await server.mcpClient(claudeToken);
  const created = await callMcp<{ documentId: string; sectionIds: string[] }>(claude, "documents", {
    action: "create",
    path: "agents/plan",
    sections: [{ name: "Plan", content: [text("Ship in May.")] }],
  });
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
});

afterAll(async () => {
  await claude?.close();
  await server?.close();
});

const log = async (client: Client, branchName = "main") =>
  (await callMcp<{ commits: CommitSummary[] }>(client, "documents", { action: "log", documentId, branchName })).commits;

describe("commits", () => {
  test("a commit made with a token names the token beside the person; the person's own names the person alone", async () => {
    await callMcp(claude, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text("Ship in June.")],
      commitMessage: "Move the date",
    });
    await server.callTool("sections", olivia.userId, {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text("Ship in June, for sure.")],
      commitMessage: "Be sure",
    });
    const [own, byAgent, creation] = await log(claude);
    expect(own).toMatchObject({ message: "Be sure", authorName: "Olivia Owner", agentName: null, madeBy: "Olivia Owner" });
    expect(byAgent).toMatchObject({
      message: "Move the date",
      authorName: "Olivia Owner",
      agentName: "Claude",
      madeBy: "Claude via Olivia Owner",
    });
    expect(creation).toMatchObject({ agentName: "Claude", madeBy: "Claude via Olivia Owner" });

    const shown = await callMcp<{ commit: CommitSummary }>(claude, "documents", {
      action: "show",
      documentId,
      commitId: byAgent!.commitId,
    });
    expect(shown.commit.madeBy).toBe("Claude via Olivia Owner");

    // tRPC over HTTP with the same token says the same.
    const viaTrpc = await server.trpcClient(claudeToken).documents.mutate({ action: "show", documentId, commitId: byAgent!.commitId });
    expect((viaTrpc as { commit: CommitSummary }).commit.madeBy).toBe("Claude via Olivia Owner");
  });

  test("a commit stored before agents were recorded stays as it is: the person alone", async () => {
    const [newest] = await log(claude);
    await server.db.update(commits).set({ agent: null }).where(eq(commits.id, newest!.commitId));
    const fresh = await server.callTool("documents", olivia.userId, { action: "show", documentId, commitId: newest!.commitId });
    expect(fresh.commit.madeBy).toBe("Olivia Owner");
  });

  test("an unnamed token is called API token", async () => {
    const { token } = await issueApiToken(server.db, { email: olivia.email }, new Date());
    const unnamed = await server.mcpClient(token);
    await callMcp(unnamed, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text("Ship in July.")],
    });
    expect((await log(unnamed))[0]!.madeBy).toBe("API token via Olivia Owner");
    await unnamed.close();
  });
});

describe("merge requests, reviews, comments and replies", () => {
  test("a request opened, reviewed and merged through a token names the agent; its merge commit too", async () => {
    await server.callTool("documents", olivia.userId, { action: "create_branch", documentId, branchName: "autumn" });
    await server.callTool("sections", olivia.userId, {
      action: "update",
      documentId,
      branchName: "autumn",
      sectionId,
      newContent: [text("Ship in October.")],
    });
    // main moves too, so the merge is a merge commit rather than a fast-forward.
    await server.callTool("sections", olivia.userId, {
      action: "create",
      documentId,
      branchName: "main",
      name: "Risks",
      content: [text("None yet.")],
    });
    const opened = await callMcp<{ mergeRequestId: string; agentName: string | null }>(claude, "merge_requests", {
      action: "create",
      documentId,
      sourceBranch: "autumn",
      targetBranch: "main",
      title: "Autumn",
      reviewerIds: [rita.userId],
    });
    expect(opened.agentName).toBe("Claude");

    const ritasAgent = await server.mcpClient(rita.token);
    const reviewed = await callMcp<{ reviewers: Array<{ reviewedAs: string; agentName: string | null }> }>(ritasAgent, "merge_requests", {
      action: "approve",
      mergeRequestId: opened.mergeRequestId,
    });
    await ritasAgent.close();
    expect(reviewed.reviewers[0]).toMatchObject({ reviewedAs: "agent", agentName: "test" });

    const asPerson = await server.callTool("merge_requests", olivia.userId, { action: "get", mergeRequestId: opened.mergeRequestId });
    expect(asPerson.agentName).toBe("Claude");

    const merged = await callMcp<{ mergeCommitId: string }>(claude, "merge_requests", {
      action: "execute",
      mergeRequestId: opened.mergeRequestId,
    });
    const show = await server.callTool("documents", olivia.userId, { action: "show", documentId, commitId: merged.mergeCommitId });
    expect(show.commit).toMatchObject({ kind: "merge", madeBy: "Claude via Olivia Owner" });
  });

  test("a comment written and a reply given through a token name the agent; a person's reply names no agent", async () => {
    await callMcp(claude, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text('Ship <svc:comment-new body="Is this firm?">in October</svc:comment-new>.')],
    });
    const listed = await server.callTool("comments", olivia.userId, { action: "list", documentId });
    const thread = listed.threads[0]!;
    expect(thread).toMatchObject({ body: "Is this firm?", authorName: "Olivia Owner", agentName: "Claude" });
    await callMcp(claude, "comments", { action: "reply", documentId, commentId: thread.commentId, body: "Checking." });
    await server.callTool("comments", olivia.userId, { action: "reply", documentId, commentId: thread.commentId, body: "Yes, firm." });
    const replies = (await server.callTool("comments", olivia.userId, { action: "list", documentId })).threads[0]!.replies;
    expect(replies.map((r) => [r.body, r.agentName])).toEqual([
      ["Checking.", "Claude"],
      ["Yes, firm.", null],
    ]);
  });
});
