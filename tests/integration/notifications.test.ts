/**
 * The inbox through the real faces: the `notifications` tool over an MCP SDK client (an API token: the agent
 * reads its owner's items) and tRPC (in person), the `inbox` subscription over SSE. Every event kind reaches the
 * right people and never the person who acted; an item about a section or document the recipient may not see is
 * never listed or counted (an agent is capped by aiAccess); nobody reads or marks another person's items; bad input
 * is a coded error; the email setting is the person's own, changed in person only.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { createTRPCClient, httpSubscriptionLink } from "@trpc/client";
import { EventSource } from "eventsource";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AppRouter } from "@/server/api/router";
import { ensureAuthSecret } from "@/server/auth/accounts";
import { text } from "../helpers/blocks";
import { waitFor } from "../helpers/collab";
import { callMcp, callMcpError, mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

interface Item {
  notificationId: string;
  kind: string;
  title: string;
  link: string;
  actorId: string | null;
  actorName: string | null;
  documentId: string;
  mergeRequestId: string | null;
  read: boolean;
}
interface Inbox {
  notifications: Item[];
  unreadCount: number;
  nextCursor: string | null;
}

let server: TestServer;
let olive: TestUser;
let rex: TestUser;
let mia: TestUser;
let rexMcp: Client;
let oliveMcp: Client;
const closers: Array<() => void> = [];

beforeAll(async () => {
  server = await startTestServer();
  olive = await server.createUser("olive@example.test", "Olive Owner");
  rex = await server.createUser("rex@example.test", "Rex Reviewer");
  mia = await server.createUser("mia@example.test", "Mia Member");
  rexMcp = await server.mcpClient(rex.token);
  oliveMcp = await server.mcpClient(olive.token);
});

afterAll(async () => {
  for (const close of closers) close();
  await rexMcp?.close();
  await oliveMcp?.close();
  await server?.close();
});

/** A person's inbox, in person (tRPC, as the web app). */
const inboxOf = (user: TestUser, input: { unreadOnly?: boolean; limit?: number; cursor?: string } = {}) =>
  server.trpcCaller(user).notifications({ action: "list", limit: 100, ...input }) as Promise<Inbox>;
/** The agent's view: the owner's inbox through their API token over MCP. */
const agentInboxOf = (client: Client) => callMcp<Inbox>(client, "notifications", { action: "list", limit: 100 });

/** Waits until `user` has an item matching `match` (items a head move causes arrive just after the write). */
async function itemFor(user: TestUser, match: (item: Item) => boolean, what: string): Promise<Item> {
  let found: Item | undefined;
  const deadline = Date.now() + 5_000;
  while (!found) {
    found = (await inboxOf(user)).notifications.find(match);
    if (found) break;
    if (Date.now() > deadline) throw new Error(`no ${what} for ${user.email}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return found;
}

/** Waits for the head-move follow-ups to settle: no new items for a while. */
const settle = () => new Promise((r) => setTimeout(r, 300));

async function documentWithBranch(path: string, sections: string[]) {
  const doc = await server.callTool("documents", olive.userId, {
    action: "create",
    path,
    sections: sections.map((name) => ({ name, content: [text(`${name} text`)] })),
  });
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
  return { documentId: doc.documentId, sectionIds: doc.sectionIds };
}

async function openRequest(documentId: string, reviewerIds: string[], title = "Merge feature") {
  return server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId,
    sourceBranch: "feature",
    targetBranch: "main",
    title,
    reviewerIds,
  });
}

const update = (user: TestUser, documentId: string, branchName: string, sectionId: string, body: string) =>
  server.callTool("sections", user.userId, { action: "update", documentId, branchName, sectionId, newContent: [text(body)] });

describe("merge request events", () => {
  test("a review requested reaches the reviewer (and their agent over MCP), linking to the request; never the person who asked", async () => {
    const doc = await documentWithBranch("inbox/review", ["A"]);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed");
    const request = await openRequest(doc.documentId, [rex.userId], "Review me");

    const seen = (await agentInboxOf(rexMcp)).notifications.find((n) => n.mergeRequestId === request.mergeRequestId);
    expect(seen).toMatchObject({
      kind: "review_requested",
      title: "Review requested: “Review me”",
      link: `/merge-requests/${request.mergeRequestId}`,
      actorId: olive.userId,
      actorName: "Olive Owner",
      documentId: doc.documentId,
      read: false,
    });
    expect((await inboxOf(olive)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId)).toEqual([]);

    // Adding a reviewer later asks them too; one already asked is not asked again.
    await server.callTool("merge_requests", olive.userId, {
      action: "update",
      mergeRequestId: request.mergeRequestId,
      reviewerIds: [rex.userId, mia.userId],
    });
    expect((await inboxOf(mia)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId).map((n) => n.kind)).toEqual([
      "review_requested",
    ]);
    expect((await inboxOf(rex)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId).map((n) => n.kind)).toEqual([
      "review_requested",
    ]);
  });

  test("the author hears of approvals, requested changes, the merge and the close; the reviewer who acted hears nothing of it", async () => {
    const doc = await documentWithBranch("inbox/verdicts", ["A"]);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed");
    const request = await openRequest(doc.documentId, [rex.userId]);
    await server.callTool("merge_requests", rex.userId, { action: "request_changes", mergeRequestId: request.mergeRequestId });
    await server.callTool("merge_requests", rex.userId, { action: "approve", mergeRequestId: request.mergeRequestId });
    await server.callTool("merge_requests", rex.userId, { action: "execute", mergeRequestId: request.mergeRequestId });
    const kinds = (await inboxOf(olive)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId).map((n) => n.kind);
    expect(kinds).toEqual(["merged", "approved", "changes_requested"]);
    const rexKinds = (await inboxOf(rex)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId).map((n) => n.kind);
    expect(rexKinds).toEqual(["review_requested"]);

    const other = await documentWithBranch("inbox/closed", ["A"]);
    await update(olive, other.documentId, "feature", other.sectionIds[0]!, "A changed");
    const closed = await openRequest(other.documentId, [rex.userId]);
    await server.callTool("merge_requests", rex.userId, { action: "close", mergeRequestId: closed.mergeRequestId });
    expect((await inboxOf(olive)).notifications.find((n) => n.mergeRequestId === closed.mergeRequestId)).toMatchObject({
      kind: "closed",
      actorName: "Rex Reviewer",
    });
  });

  test("an approval gone stale and an updated request reach the reviewer; the stale approval waits for their review again", async () => {
    const doc = await documentWithBranch("inbox/stale", ["A", "B"]);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed");
    const request = await openRequest(doc.documentId, [rex.userId]);
    const waiting = () =>
      server
        .callTool("merge_requests", rex.userId, { action: "list", awaitingReviewBy: rex.userId })
        .then((r) => r.mergeRequests.map((m) => m.mergeRequestId));
    expect(await waiting()).toContain(request.mergeRequestId);
    await server.callTool("merge_requests", rex.userId, { action: "approve", mergeRequestId: request.mergeRequestId });
    expect(await waiting()).not.toContain(request.mergeRequestId);

    // A section Rex did not approve moves: updated, not stale, and not waiting for him.
    await update(olive, doc.documentId, "feature", doc.sectionIds[1]!, "B changed");
    await itemFor(rex, (n) => n.kind === "merge_request_updated" && n.mergeRequestId === request.mergeRequestId, "update");
    await settle();
    expect((await inboxOf(rex)).notifications.some((n) => n.kind === "approval_stale" && n.mergeRequestId === request.mergeRequestId)).toBe(
      false,
    );
    expect(await waiting()).not.toContain(request.mergeRequestId);

    // The section he approved moves: his approval is stale, he is told once, and the request waits for him again.
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed again");
    const stale = await itemFor(rex, (n) => n.kind === "approval_stale" && n.mergeRequestId === request.mergeRequestId, "stale approval");
    expect(stale).toMatchObject({ title: "Your approval went stale: “Merge feature”", link: `/merge-requests/${request.mergeRequestId}` });
    expect(await waiting()).toContain(request.mergeRequestId);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed a third time");
    await settle();
    const items = (await inboxOf(rex)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId);
    expect(items.filter((n) => n.kind === "approval_stale")).toHaveLength(1);
    // One unread "updated" item per request is enough.
    expect(items.filter((n) => n.kind === "merge_request_updated")).toHaveLength(1);
    // Olive moved the branch herself: she hears only of Rex's approval.
    expect((await inboxOf(olive)).notifications.filter((n) => n.mergeRequestId === request.mergeRequestId).map((n) => n.kind)).toEqual([
      "approved",
    ]);
  });
});

describe("comment events", () => {
  test("a mention in a new comment, a reply in your thread and a mention in a reply reach the right people, linking to the section", async () => {
    const doc = await server.callTool("documents", olive.userId, {
      action: "create",
      path: "inbox/comments",
      sections: [{ name: "Plan", content: [text(`Go <svc:comment-new body="Rex, look" mentions="${rex.userId}">now</svc:comment-new>.`)] }],
    });
    const sectionId = doc.sectionIds[0]!;
    const mention = await itemFor(rex, (n) => n.kind === "mention" && n.documentId === doc.documentId, "mention");
    expect(mention).toMatchObject({
      title: "Mentioned in “Plan” (inbox/comments)",
      link: `/documents/${doc.documentId}?branch=main#section-${sectionId}`,
      actorName: "Olive Owner",
    });
    const commentId = (await server.callTool("read", olive.userId, { documentId: doc.documentId })).sections[0]!.comments[0]!.commentId;

    await server.callTool("comments", mia.userId, {
      action: "reply",
      documentId: doc.documentId,
      commentId,
      body: "Rex and Olive",
      mentions: [rex.userId],
    });
    const onDoc = async (user: TestUser) => (await inboxOf(user)).notifications.filter((n) => n.documentId === doc.documentId);
    expect((await onDoc(olive)).map((n) => n.kind)).toEqual(["reply"]);
    expect((await onDoc(rex)).map((n) => n.kind)).toEqual(["mention", "mention"]);
    expect(await onDoc(mia)).toEqual([]);

    await server.callTool("comments", olive.userId, { action: "reply", documentId: doc.documentId, commentId, body: "Thanks" });
    expect((await onDoc(mia)).map((n) => [n.kind, n.actorName])).toEqual([["reply", "Olive Owner"]]);
    expect((await onDoc(olive)).map((n) => n.kind)).toEqual(["reply"]);
  });
});

describe("exact access", () => {
  test("a mention inside a hidden section tells no-one who cannot see it; aiAccess none hides it from the agent only", async () => {
    const doc = await server.callTool("documents", olive.userId, {
      action: "create",
      path: "inbox/hidden",
      sections: [
        { name: "Board", content: [text("Board text")] },
        { name: "People", content: [text("People text")] },
      ],
    });
    const [board, people] = doc.sectionIds as [string, string];
    await mergeSectionOverrides(server, olive.userId, { documentId: doc.documentId, sectionId: board }, { defaultPermission: "none" });
    await mergeSectionOverrides(server, olive.userId, { documentId: doc.documentId, sectionId: people }, { aiAccess: "none" });
    const before = (await inboxOf(mia)).unreadCount;
    const rexBefore = (await inboxOf(rex)).unreadCount;
    await server.callTool("sections", olive.userId, {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: board,
      newContent: [text(`<svc:comment-new body="Secret plan" mentions="${mia.userId}">Board</svc:comment-new> text`)],
    });
    await server.callTool("sections", olive.userId, {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: people,
      newContent: [text(`<svc:comment-new body="For Rex" mentions="${rex.userId}">People</svc:comment-new> text`)],
    });
    // Rex in person sees the mention in People; his agent (capped by aiAccess none) never does.
    await itemFor(rex, (n) => n.kind === "mention" && n.documentId === doc.documentId, "mention in People");
    await settle();
    expect((await inboxOf(rex)).unreadCount).toBe(rexBefore + 1);
    const agent = await agentInboxOf(rexMcp);
    expect(agent.notifications.some((n) => n.documentId === doc.documentId)).toBe(false);
    expect(agent.unreadCount).toBe(rexBefore);
    // Mia may not see Board: nothing is listed or counted.
    const miaInbox = await inboxOf(mia);
    expect(miaInbox.notifications.some((n) => n.documentId === doc.documentId)).toBe(false);
    expect(miaInbox.unreadCount).toBe(before);
    expect(JSON.stringify(miaInbox)).not.toContain("Board");
  });

  test("an item whose document became hidden from its recipient is no longer shown", async () => {
    const doc = await documentWithBranch("inbox/turned-away", ["A"]);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed");
    const request = await openRequest(doc.documentId, [mia.userId]);
    expect((await inboxOf(mia)).notifications.some((n) => n.mergeRequestId === request.mergeRequestId)).toBe(true);
    await server.callTool("documents", olive.userId, {
      action: "set_permissions",
      documentId: doc.documentId,
      defaultPermission: "none",
    });
    const after = await inboxOf(mia);
    expect(after.notifications.some((n) => n.mergeRequestId === request.mergeRequestId || n.documentId === doc.documentId)).toBe(false);
  });
});

describe("reading and marking", () => {
  test("mark read, mark all read, pages, and another person's items are never readable or markable", async () => {
    const doc = await documentWithBranch("inbox/marks", ["A"]);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed");
    await openRequest(doc.documentId, [rex.userId], "Marks");
    const unread = await inboxOf(rex, { unreadOnly: true });
    expect(unread.unreadCount).toBeGreaterThanOrEqual(2);
    expect(unread.notifications.every((n) => !n.read)).toBe(true);
    const first = unread.notifications[0]!;

    // Olive's token cannot mark Rex's item, nor learn it exists; nothing changes.
    const refused = await callMcpError(oliveMcp, "notifications", { action: "mark_read", notificationIds: [first.notificationId] });
    expect(refused.code).toBe("NOT_FOUND");
    expect((await inboxOf(rex)).notifications.find((n) => n.notificationId === first.notificationId)!.read).toBe(false);
    expect((await inboxOf(olive)).notifications.some((n) => n.notificationId === first.notificationId)).toBe(false);

    // Rex's agent marks one read for him.
    expect(await callMcp(rexMcp, "notifications", { action: "mark_read", notificationIds: [first.notificationId] })).toEqual({ marked: 1 });
    const afterOne = await inboxOf(rex);
    expect(afterOne.unreadCount).toBe(unread.unreadCount - 1);
    expect((await inboxOf(rex, { unreadOnly: true })).notifications.some((n) => n.notificationId === first.notificationId)).toBe(false);

    // Pages: one at a time, no item twice.
    const page1 = await inboxOf(rex, { limit: 1 });
    const page2 = await inboxOf(rex, { limit: 1, cursor: page1.nextCursor! });
    expect(page2.notifications[0]!.notificationId).not.toBe(page1.notifications[0]!.notificationId);

    const all = (await server.trpcCaller(rex).notifications({ action: "mark_all_read" })) as { marked: number };
    expect(all.marked).toBe(unread.unreadCount - 1);
    expect((await inboxOf(rex)).unreadCount).toBe(0);
    expect((await inboxOf(rex, { unreadOnly: true })).notifications).toEqual([]);
  });

  test("bad input is a coded error and changes nothing", async () => {
    const codeOf = async (args: Record<string, unknown>) => (await callMcpError(rexMcp, "notifications", args)).code;
    expect(await codeOf({ action: "mark_read", notificationIds: [] })).toBe("VALIDATION_FAILED");
    expect(await codeOf({ action: "mark_read", notificationIds: ["not-a-uuid"] })).toBe("VALIDATION_FAILED");
    expect(await codeOf({ action: "list", limit: 0 })).toBe("VALIDATION_FAILED");
    expect(await codeOf({ action: "list", cursor: "garbage" })).toBe("VALIDATION_FAILED");
    expect(await codeOf({ action: "set_settings", email: "sometimes" })).toBe("VALIDATION_FAILED");
    expect(await codeOf({ action: "explode" })).toBe("VALIDATION_FAILED");
    await expect(
      server.trpcCaller(rex).notifications({ action: "mark_read", notificationIds: [crypto.randomUUID()] }),
    ).rejects.toMatchObject({
      cause: { code: "NOT_FOUND" },
    });
  });
});

describe("settings", () => {
  test("a person's own email setting: read by their agent, changed in person only", async () => {
    expect(await callMcp(rexMcp, "notifications", { action: "get_settings" })).toEqual({ email: "all" });
    const refused = await callMcpError(rexMcp, "notifications", { action: "set_settings", email: "none" });
    expect(refused.code).toBe("PERMISSION_DENIED");
    expect(await server.trpcCaller(rex).notifications({ action: "get_settings" })).toEqual({ email: "all" });
    expect(await server.trpcCaller(rex).notifications({ action: "set_settings", email: "direct" })).toEqual({ email: "direct" });
    expect(await callMcp(rexMcp, "notifications", { action: "get_settings" })).toEqual({ email: "direct" });
    expect(await server.trpcCaller(mia).notifications({ action: "get_settings" })).toEqual({ email: "all" });
    await server.trpcCaller(rex).notifications({ action: "set_settings", email: "all" });
  });
});

describe("the inbox subscription", () => {
  test("hears a new item at once, and the read", async () => {
    const secret = await ensureAuthSecret(server.db, undefined);
    const cookie = `next-auth.session-token=${await encode({ token: { sub: rex.userId }, secret })}`;
    const client = createTRPCClient<AppRouter>({
      links: [
        httpSubscriptionLink({
          url: `${server.url}/api/trpc`,
          EventSource,
          eventSourceOptions: {
            fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, cookie, "sec-fetch-site": "same-origin" } }),
          },
        }),
      ],
    });
    const values: Array<{ unreadCount: number; newest: Item[] }> = [];
    const subscription = client.inbox.subscribe(undefined, { onData: (value) => values.push(value as (typeof values)[number]) });
    closers.push(() => subscription.unsubscribe());
    await waitFor(() => values.length > 0, 5_000, "the first inbox state");
    const start = values.at(-1)!.unreadCount;

    const doc = await documentWithBranch("inbox/live", ["A"]);
    await update(olive, doc.documentId, "feature", doc.sectionIds[0]!, "A changed");
    const request = await openRequest(doc.documentId, [rex.userId], "Live one");
    await waitFor(() => values.at(-1)!.unreadCount === start + 1, 5_000, "the new item");
    expect(values.at(-1)!.newest[0]).toMatchObject({ kind: "review_requested", mergeRequestId: request.mergeRequestId });

    await server.trpcCaller(rex).notifications({ action: "mark_all_read" });
    await waitFor(() => values.at(-1)!.unreadCount === 0, 5_000, "the read");
  });
});
