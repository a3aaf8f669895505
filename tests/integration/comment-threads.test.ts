/**
 * Comment threads (the `comments` tool): replies, resolve and reopen, through
 * the real faces — people through tRPC callers, agents through the MCP SDK
 * client over HTTP — on a real database. Then every refusal: a reader, an
 * agent capped by aiAccess, a section hidden by its override (from members,
 * grants and share links), comment ids of other documents, other workspaces
 * or other branches, and bad input, each changing nothing.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { comments as commentsTable, memberships, notifications } from "@/db/schema";
import type { ThreadView } from "@/server/actions/comments";
import { acceptShareLink, readSharedDocument } from "@/server/actions/share-links";
import { MAX_COMMENT_BODY_CHARS } from "@/server/core/comment-markup";
import type { ToolInput } from "@/server/actions/registry";
import { isDomainError } from "@/server/core/errors";
import { text } from "../helpers/blocks";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let editor: TestUser;
let reader: TestUser;
let granted: TestUser;
let editorMcp: Client;
let outsiderId: string;

let documentId: string;
/** Comments by section: open to the team, hidden by a team override of none, hidden from agents by aiAccess none. */
let planComment: string;
let boardComment: string;
let peopleComment: string;
let otherDocumentComment: string;
let branchOnlyComment: string;
/** Written on branch work in the Plan section, which main holds too (without it). */
let planBranchComment: string;

const SECRET_BODY = "Only the board may read this";
const SECRET_REPLY = "The board agrees";

type Refusal = { code: string; message: string };
type Args = Record<string, unknown>;
/** Arguments a test sends as they are: the tool's schema judges them, as it would a client's. */
type CommentsInput = ToolInput<"comments">;

/** A person's call through tRPC; a refusal becomes its DomainError's code and message. */
async function asPerson<T = Record<string, unknown>>(user: TestUser, args: Args): Promise<T> {
  try {
    return (await server.trpcCaller(user).comments(args as CommentsInput)) as T;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    throw isDomainError(cause) ? cause : error;
  }
}

async function refusalOf(run: Promise<unknown>): Promise<Refusal> {
  try {
    await run;
    return { code: "allowed", message: "" };
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { code: e.code ?? "thrown", message: e.message };
  }
}

const threads = async (user: TestUser, args: Args = {}) =>
  (await asPerson<{ threads: ThreadView[] }>(user, { action: "list", documentId, ...args })).threads;
const threadOf = async (commentId: string, branchName?: string) =>
  (await threads(owner, branchName ? { branchName } : {})).find((t) => t.commentId === commentId)!;

/** Creates a section holding one new comment on `branchName` and returns the comment's id. */
async function commentedSection(
  docId: string,
  branchName: string,
  name: string,
  body: string,
): Promise<{ sectionId: string; commentId: string }> {
  const created = await server.callTool("sections", owner.userId, {
    action: "create",
    documentId: docId,
    branchName,
    name,
    content: [text(`Before <svc:comment-new body="${body}">the ${name.toLowerCase()} text</svc:comment-new> after.`)],
  });
  const view = await server.callTool("read", owner.userId, { documentId: docId, branchName, sectionIds: [created.sectionId] });
  return { sectionId: created.sectionId, commentId: view.sections[0]!.comments[0]!.commentId };
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  editor = await server.createUser("editor@example.test", "Ed Editor");
  reader = await server.createUser("reader@example.test", "Rae Reader");
  granted = await server.createUser("granted@example.test", "Gia Granted");
  editorMcp = await server.mcpClient(editor.token);
  await editorMcp.listTools();

  const doc = await server.callTool("documents", owner.userId, { action: "create", path: "threads/plan" });
  documentId = doc.documentId;
  planComment = (await commentedSection(documentId, "main", "Plan", "Is this the date?")).commentId;
  const board = await commentedSection(documentId, "main", "Board", SECRET_BODY);
  boardComment = board.commentId;
  const people = await commentedSection(documentId, "main", "People", "No agents here");
  peopleComment = people.commentId;
  await server.callTool("comments", owner.userId, { action: "reply", documentId, commentId: boardComment, body: SECRET_REPLY });

  // Overrides go through review: set on a branch, merged into main.
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId, branchName: "lockdown" });
  await server.callTool("sections", owner.userId, {
    action: "update",
    documentId,
    branchName: "lockdown",
    sectionId: board.sectionId,
    defaultPermission: "none",
  });
  await server.callTool("sections", owner.userId, {
    action: "update",
    documentId,
    branchName: "lockdown",
    sectionId: people.sectionId,
    aiAccess: "none",
  });
  const mr = await server.callTool("merge_requests", owner.userId, {
    action: "create",
    documentId,
    sourceBranch: "lockdown",
    targetBranch: "main",
    title: "Lock down",
  });
  await server.callTool("merge_requests", owner.userId, { action: "execute", mergeRequestId: mr.mergeRequestId });
  await server.callTool("documents", owner.userId, {
    action: "set_permissions",
    documentId,
    grants: [
      { userId: reader.userId, permission: "read" },
      { userId: granted.userId, permission: "edit" },
    ],
  });

  await server.callTool("documents", owner.userId, { action: "create_branch", documentId, branchName: "work" });
  branchOnlyComment = (await commentedSection(documentId, "work", "Draft", "Only on work")).commentId;
  const plan = (await server.callTool("read", owner.userId, { documentId, branchName: "work" })).sections.find((s) => s.name === "Plan")!;
  await server.callTool("sections", owner.userId, {
    action: "update",
    documentId,
    branchName: "work",
    sectionId: plan.sectionId,
    newContent: [...plan.content, text('<svc:comment-new body="On work only">More</svc:comment-new>')],
  });
  const planOnWork = (await server.callTool("read", owner.userId, { documentId, branchName: "work", sectionIds: [plan.sectionId] }))
    .sections[0]!;
  planBranchComment = planOnWork.comments.find((c) => c.body === "On work only")!.commentId;

  const other = await server.callTool("documents", owner.userId, { action: "create", path: "threads/other" });
  otherDocumentComment = (await commentedSection(other.documentId, "main", "Elsewhere", "Another document")).commentId;

  outsiderId = await server.createOutsider("otto@elsewhere.test", "Otto Outsider");
}, 120_000);

afterAll(async () => {
  await editorMcp?.close();
  await server?.close();
});

describe("a thread: reply, resolve, reopen", () => {
  test("an editor replies, resolves and reopens through tRPC, and read and list show the thread as it is", async () => {
    const replied = await asPerson<{ replyId: string; reopened: boolean; thread: ThreadView }>(editor, {
      action: "reply",
      documentId,
      commentId: planComment,
      body: "  Yes, the 14th.  ",
      mentions: [owner.userId, owner.userId],
    });
    expect(replied.reopened).toBe(false);
    expect(replied.thread).toMatchObject({
      commentId: planComment,
      sectionName: "Plan",
      commentedText: "the plan text",
      body: "Is this the date?",
      authorName: "Olive Owner",
      status: "open",
      yourPermission: "edit",
      replies: [
        { replyId: replied.replyId, body: "Yes, the 14th.", authorId: editor.userId, authorName: "Ed Editor", mentions: [owner.userId] },
      ],
    });

    const resolved = await asPerson<{ changed: boolean; thread: ThreadView }>(editor, {
      action: "resolve",
      documentId,
      commentId: planComment,
    });
    expect(resolved.changed).toBe(true);
    expect(resolved.thread).toMatchObject({ status: "resolved", resolvedById: editor.userId, resolvedByName: "Ed Editor" });
    expect(Date.parse(resolved.thread.resolvedAt!)).not.toBeNaN();

    // Resolving again changes nothing: who resolved it and when stay.
    const again = await asPerson<{ changed: boolean; thread: ThreadView }>(owner, {
      action: "resolve",
      documentId,
      commentId: planComment,
    });
    expect(again.changed).toBe(false);
    expect(again.thread.resolvedById).toBe(editor.userId);
    expect(again.thread.resolvedAt).toBe(resolved.thread.resolvedAt);

    expect((await threads(editor, { status: "open" })).map((t) => t.commentId)).not.toContain(planComment);
    expect((await threads(editor, { status: "resolved" })).map((t) => t.commentId)).toEqual([planComment]);
    const read = await server.callTool("read", editor.userId, { documentId });
    const plan = read.sections.find((s) => s.name === "Plan")!;
    expect(plan.comments).toMatchObject([{ commentId: planComment, status: "resolved", replies: [{ body: "Yes, the 14th." }] }]);

    const reopened = await asPerson<{ changed: boolean; thread: ThreadView }>(editor, {
      action: "reopen",
      documentId,
      commentId: planComment,
    });
    expect(reopened).toMatchObject({
      changed: true,
      thread: { status: "open", resolvedAt: null, resolvedById: null, resolvedByName: null },
    });
    expect((await asPerson<{ changed: boolean }>(editor, { action: "reopen", documentId, commentId: planComment })).changed).toBe(false);
  });

  test("a reply to a resolved thread opens it again", async () => {
    await asPerson(owner, { action: "resolve", documentId, commentId: planComment });
    const replied = await asPerson<{ reopened: boolean; thread: ThreadView }>(owner, {
      action: "reply",
      documentId,
      commentId: planComment,
      body: "One more thing",
    });
    expect(replied.reopened).toBe(true);
    expect(replied.thread.status).toBe("open");
    expect(replied.thread.replies.map((r) => r.body).at(-1)).toBe("One more thing");
  });

  test("an agent (API token over MCP) replies where aiAccess lets it edit, and is refused for that reason where it only reads", async () => {
    const replied = await callMcp<{ thread: ThreadView }>(editorMcp, "comments", {
      action: "reply",
      documentId,
      commentId: planComment,
      body: "Checked by the agent",
    });
    expect(replied.thread.replies.at(-1)).toMatchObject({ body: "Checked by the agent", authorId: editor.userId });

    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, aiAccess: "read" });
    try {
      const before = await threadOf(planComment);
      const listed = await callMcp<{ threads: ThreadView[] }>(editorMcp, "comments", { action: "list", documentId });
      expect(listed.threads.find((t) => t.commentId === planComment)!.yourPermission).toBe("read");
      for (const args of [{ action: "reply", body: "Agent again" }, { action: "resolve" }, { action: "reopen" }]) {
        const refusal = await callMcpError(editorMcp, "comments", { ...args, documentId, commentId: planComment });
        expect(refusal.code, String(args.action)).toBe("PERMISSION_DENIED");
        expect(refusal.message).toMatch(/API token acts as an agent.*aiAccess/);
      }
      expect(await threadOf(planComment)).toEqual(before);
      // The same person, signed in, is not capped.
      await asPerson(editor, { action: "resolve", documentId, commentId: planComment });
      await asPerson(editor, { action: "reopen", documentId, commentId: planComment });
    } finally {
      await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, aiAccess: "edit" });
    }
  });
});

describe("refusals change nothing and reveal nothing", () => {
  test("a reader sees the thread but may not reply, resolve or reopen", async () => {
    const before = await threadOf(planComment);
    const seen = (await threads(reader)).find((t) => t.commentId === planComment)!;
    expect(seen).toMatchObject({ yourPermission: "read", replies: before.replies });
    for (const args of [{ action: "reply", body: "Reader here" }, { action: "resolve" }, { action: "reopen" }]) {
      expect((await refusalOf(asPerson(reader, { ...args, documentId, commentId: planComment }))).code, String(args.action)).toBe(
        "PERMISSION_DENIED",
      );
    }
    expect(await threadOf(planComment)).toEqual(before);
  });

  test.each([
    ["a member whose team default the override lowers", () => editor],
    ["a member holding an edit grant", () => granted],
  ])("a thread in a section hidden by its override is absent for %s and NOT_FOUND, worded like a missing id", async (_label, who) => {
    const user = who();
    const listed = await threads(user);
    expect(listed.map((t) => t.commentId)).not.toContain(boardComment);
    expect(JSON.stringify(listed)).not.toContain(SECRET_BODY);
    const read = await server.callTool("read", user.userId, { documentId });
    expect(JSON.stringify(read)).not.toContain(SECRET_REPLY);
    const missing = crypto.randomUUID();
    for (const args of [{ action: "reply", body: "Let me in" }, { action: "resolve" }, { action: "reopen" }]) {
      const hidden = await refusalOf(asPerson(user, { ...args, documentId, commentId: boardComment }));
      const absent = await refusalOf(asPerson(user, { ...args, documentId, commentId: missing }));
      expect(hidden.code).toBe("NOT_FOUND");
      expect(hidden.message.replace(boardComment, "ID")).toBe(absent.message.replace(missing, "ID"));
    }
    const owners = await threadOf(boardComment);
    expect(owners).toMatchObject({ status: "open", replies: [{ body: SECRET_REPLY }] });
  });

  test("share links, read or edit, hold no thread of the hidden section either", async () => {
    const link = await server.callTool("documents", owner.userId, { action: "create_share_link", documentId, permission: "read" });
    const token = link.path.replace("/share/", "");
    const view = await readSharedDocument(server.db, token, {}, new Date());
    expect(view.sections.flatMap((s) => s.comments.map((c) => c.commentId))).toContain(planComment);
    expect(JSON.stringify(view)).not.toContain(SECRET_BODY);
    expect(JSON.stringify(view)).not.toContain(SECRET_REPLY);

    const linked = await server.createUser("linked@example.test", "Lin Linked");
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, defaultPermission: "none" });
    try {
      const editLink = await server.callTool("documents", owner.userId, { action: "create_share_link", documentId, permission: "edit" });
      await acceptShareLink(server.db, linked.userId, editLink.path.replace("/share/", ""), new Date());
      expect((await threads(linked)).map((t) => t.commentId)).toContain(planComment);
      expect((await refusalOf(asPerson(linked, { action: "resolve", documentId, commentId: boardComment }))).code).toBe("NOT_FOUND");
      await asPerson(linked, { action: "resolve", documentId, commentId: planComment });
      await asPerson(linked, { action: "reopen", documentId, commentId: planComment });
    } finally {
      await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, defaultPermission: "edit" });
    }
  });

  test("an agent does not see threads of a section whose aiAccess is none; its person does", async () => {
    const listed = await callMcp<{ threads: ThreadView[] }>(editorMcp, "comments", { action: "list", documentId });
    expect(listed.threads.map((t) => t.commentId)).not.toContain(peopleComment);
    expect((await callMcpError(editorMcp, "comments", { action: "resolve", documentId, commentId: peopleComment })).code).toBe("NOT_FOUND");
    expect((await threads(editor)).map((t) => t.commentId)).toContain(peopleComment);
    expect((await threadOf(peopleComment)).status).toBe("open");
  });

  test("comment ids of another document, another workspace or another branch are NOT_FOUND", async () => {
    expect((await refusalOf(asPerson(editor, { action: "resolve", documentId, commentId: otherDocumentComment }))).code).toBe("NOT_FOUND");
    // From another workspace: the document itself is not found, and the outsider's own document does not hold the comment.
    const outsiderDoc = await server.callTool("documents", outsiderId, { action: "create", path: "mine" });
    const fromOutside = (args: Args) => refusalOf(server.callToolAsSent("comments", outsiderId, args));
    expect((await fromOutside({ action: "list", documentId })).code).toBe("NOT_FOUND");
    expect((await fromOutside({ action: "resolve", documentId, commentId: planComment })).code).toBe("NOT_FOUND");
    expect((await fromOutside({ action: "resolve", documentId: outsiderDoc.documentId, commentId: planComment })).code).toBe("NOT_FOUND");
    // A comment written on a branch is anchored there only until a merge brings it.
    expect((await refusalOf(asPerson(editor, { action: "resolve", documentId, commentId: branchOnlyComment }))).code).toBe("NOT_FOUND");
    expect((await threads(editor)).map((t) => t.commentId)).not.toContain(branchOnlyComment);
    // Its section is on main too, without the comment's anchor.
    expect((await refusalOf(asPerson(editor, { action: "reply", documentId, commentId: planBranchComment, body: "hi" }))).code).toBe(
      "NOT_FOUND",
    );
    expect(
      (
        await asPerson<{ thread: ThreadView }>(editor, {
          action: "reply",
          documentId,
          branchName: "work",
          commentId: planBranchComment,
          body: "hi",
        })
      ).thread.commentedText,
    ).toBe("More");
    const onWork = await asPerson<{ changed: boolean }>(editor, {
      action: "resolve",
      documentId,
      branchName: "work",
      commentId: branchOnlyComment,
    });
    expect(onWork.changed).toBe(true);
    expect((await threadOf(planComment)).status).toBe("open");
    expect((await threadOf(otherDocumentComment)) ?? null).toBeNull();
  });

  test("bad input is VALIDATION_FAILED with the field named, and changes nothing", async () => {
    const before = await threadOf(planComment);
    const cases: Array<[Args, string]> = [
      [{ action: "reply", commentId: planComment, body: "   " }, "body"],
      [{ action: "reply", commentId: planComment, body: "x".repeat(MAX_COMMENT_BODY_CHARS + 1) }, "body"],
      [{ action: "reply", commentId: planComment }, "body"],
      [{ action: "reply", commentId: "not-a-uuid", body: "hi" }, "commentId"],
      [{ action: "reply", commentId: planComment, body: "hi", mentions: ["nobody"] }, "mentions.0"],
      [{ action: "reply", commentId: planComment, body: "hi", mentions: [outsiderId] }, "mentions"],
      [{ action: "reply", commentId: planComment, body: "hi", resolve: true }, ""],
      [{ action: "resolve" }, "commentId"],
      [{ action: "reopen", commentId: planComment, branchName: "no spaces allowed" }, "branchName"],
      [{ action: "list", status: "closed" }, "status"],
      [{ action: "archive", commentId: planComment }, "action"],
    ];
    for (const [args, field] of cases) {
      const refusal = await refusalOf(asPerson(editor, { documentId, ...args }));
      expect(refusal.code, JSON.stringify(args).slice(0, 80)).toBe("VALIDATION_FAILED");
      if (field) expect(refusal.message).toContain(field);
      const overMcp = await callMcpError(editorMcp, "comments", { documentId, ...args });
      expect(overMcp.code).toBe("VALIDATION_FAILED");
    }
    // The longest body allowed is taken.
    expect(
      (await refusalOf(asPerson(editor, { action: "reply", documentId, commentId: planComment, body: "y".repeat(MAX_COMMENT_BODY_CHARS) })))
        .code,
    ).toBe("allowed");
    const after = await threadOf(planComment);
    expect({ ...after, replies: after.replies.slice(0, -1) }).toEqual(before);
  });

  test("the tool is listed for agents with every parameter described", async () => {
    const { tools } = await editorMcp.listTools();
    const comments = tools.find((t) => t.name === "comments")!;
    const props = comments.inputSchema.properties as Record<string, { description?: string; enum?: string[] }>;
    expect(props.action!.enum).toEqual(["list", "post", "reply", "resolve", "reopen"]);
    for (const name of [
      "documentId",
      "branchName",
      "commentId",
      "body",
      "mentions",
      "status",
      "sectionId",
      "blockIndex",
      "quote",
      "occurrence",
    ]) {
      expect(props[name]!.description, name).toBeTruthy();
    }
  });
});

describe("posting: a comment is saved when its author posts it", () => {
  type Posted = { commentId: string; branchName: string; thread: ThreadView };
  const post = (user: TestUser, args: Args) => asPerson<Posted>(user, { action: "post", ...args });
  const headText = async (docId: string, branchName = "main") =>
    (await server.callTool("read", owner.userId, { documentId: docId, branchName })).sections[0]!.content.map((b) =>
      b.blockType === "text" ? b.text : "",
    );
  const draftText = async (docId: string, branchName = "main") =>
    (await server.callTool("read", owner.userId, { documentId: docId, branchName, includeDraft: true })).sections[0]!.content.map((b) =>
      b.blockType === "text" ? b.text : "",
    );
  const mentionsOf = async (user: TestUser, commentId: string) =>
    (await server.db.select().from(notifications).where(eq(notifications.commentId, commentId))).filter(
      (n) => n.recipientId === user.userId && n.kind === "mention",
    );

  test("posted: stored at once and anchored in the draft, listed for everyone before any commit; the commit and a merge carry it", async () => {
    const doc = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "threads/posted",
      sections: [{ name: "Goals", content: [text("We launch in spring. Spring is busy.")] }],
    });
    const target = { documentId: doc.documentId, sectionId: doc.sectionIds[0]! };
    const posted = await post(editor, {
      ...target,
      blockIndex: 0,
      quote: "spring",
      body: "  Is spring firm?  ",
      mentions: [reader.userId, reader.userId],
    });
    expect(posted.thread).toMatchObject({
      commentId: posted.commentId,
      sectionName: "Goals",
      commentedText: "spring",
      anchored: true,
      body: "Is spring firm?",
      authorId: editor.userId,
      authorName: "Ed Editor",
      mentions: [reader.userId],
      status: "open",
      yourPermission: "edit",
    });
    // In the draft, not in the head: nobody committed anything.
    expect(await draftText(doc.documentId)).toEqual([
      `We launch in <svc:comment id="${posted.commentId}">spring</svc:comment>. Spring is busy.`,
    ]);
    expect(await headText(doc.documentId)).toEqual(["We launch in spring. Spring is busy."]);
    // Everyone who may read the section sees the thread already.
    const seenByReader = (await threads(reader, { documentId: doc.documentId })).find((t) => t.commentId === posted.commentId);
    expect(seenByReader).toMatchObject({ commentedText: "spring", anchored: true });
    expect((await mentionsOf(reader, posted.commentId)).length).toBe(1);
    // Others reply at once.
    await asPerson(owner, { action: "reply", documentId: doc.documentId, commentId: posted.commentId, body: "Firm." });

    await server.callTool("documents", owner.userId, { action: "commit", documentId: doc.documentId, branchName: "main" });
    expect(await headText(doc.documentId)).toEqual([
      `We launch in <svc:comment id="${posted.commentId}">spring</svc:comment>. Spring is busy.`,
    ]);
    const committed = (await threads(reader, { documentId: doc.documentId })).filter((t) => t.commentId === posted.commentId);
    expect(committed).toMatchObject([{ anchored: true, commentedText: "spring", replies: [{ body: "Firm." }] }]);
    // The commit tells the mentioned nobody again.
    expect((await mentionsOf(reader, posted.commentId)).length).toBe(1);

    // The second "Spring" (occurrence 0 of the capitalised word), on a branch, merged into main.
    await server.callTool("documents", owner.userId, { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
    const onFeature = await post(editor, { ...target, branchName: "feature", blockIndex: 0, quote: "Spring", body: "Busy how?" });
    await server.callTool("documents", owner.userId, { action: "commit", documentId: doc.documentId, branchName: "feature" });
    const mr = await server.callTool("merge_requests", owner.userId, {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "feature",
      targetBranch: "main",
      title: "Busy",
    });
    await server.callTool("merge_requests", owner.userId, { action: "execute", mergeRequestId: mr.mergeRequestId });
    expect((await headText(doc.documentId))[0]).toContain(`<svc:comment id="${onFeature.commentId}">Spring</svc:comment> is busy.`);
    const merged = await threads(owner, { documentId: doc.documentId });
    expect(merged.map((t) => [t.commentId, t.commentedText, t.anchored])).toEqual([
      [posted.commentId, "spring", true],
      [onFeature.commentId, "Spring", true],
    ]);
  });

  test("a draft discarded before its commit leaves the thread detached: kept on its branch, still replied to and resolved", async () => {
    const doc = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "threads/discarded",
      sections: [{ name: "Notes", content: [text("Keep this")] }],
    });
    const posted = await post(editor, {
      documentId: doc.documentId,
      sectionId: doc.sectionIds[0]!,
      blockIndex: 0,
      quote: "this",
      body: "Why?",
    });
    await server.callTool("documents", owner.userId, { action: "discard", documentId: doc.documentId, branchName: "main" });
    expect(await draftText(doc.documentId)).toEqual(["Keep this"]);
    const [detached] = await threads(editor, { documentId: doc.documentId });
    expect(detached).toMatchObject({ commentId: posted.commentId, anchored: false, commentedText: "", body: "Why?" });
    const replied = await asPerson<{ thread: ThreadView }>(editor, {
      action: "reply",
      documentId: doc.documentId,
      commentId: posted.commentId,
      body: "Gone",
    });
    expect(replied.thread).toMatchObject({ anchored: false, replies: [{ body: "Gone" }] });
    const resolved = await asPerson<{ thread: ThreadView }>(editor, {
      action: "resolve",
      documentId: doc.documentId,
      commentId: posted.commentId,
    });
    expect(resolved.thread.status).toBe("resolved");
  });

  test("refused where the caller may not post, and for text that is not there: nothing stored, nothing anchored", async () => {
    const sections = (await server.callTool("read", owner.userId, { documentId })).sections;
    const sectionOf = (name: string) => sections.find((s) => s.name === name)!.sectionId;
    const before = await server.db.select().from(commentsTable);
    const draftBefore = JSON.stringify((await server.callTool("read", owner.userId, { documentId, includeDraft: true })).sections);
    const at = (name: string, quote: string, extra: Args = {}) => ({
      documentId,
      sectionId: sectionOf(name),
      blockIndex: 0,
      quote,
      body: "No",
      ...extra,
    });

    expect((await refusalOf(post(reader, at("Plan", "Before")))).code).toBe("PERMISSION_DENIED");
    // Hidden from the team: worded as a section that does not exist.
    const hidden = await refusalOf(post(editor, at("Board", "the")));
    const missing = await refusalOf(post(editor, { ...at("Plan", "Before"), sectionId: "00000000-0000-4000-8000-000000000000" }));
    expect(hidden.code).toBe("NOT_FOUND");
    expect(hidden.message.replace(sectionOf("Board"), "ID")).toBe(missing.message.replace("00000000-0000-4000-8000-000000000000", "ID"));
    // An agent where aiAccess is none: NOT_FOUND; its person may post there (not done here: nothing is to change).
    expect((await callMcpError(editorMcp, "comments", { action: "post", ...at("People", "the") })).code).toBe("NOT_FOUND");
    for (const [args, field] of [
      [at("Plan", "not in the text"), "quote"],
      [at("Plan", "Before", { occurrence: 1 }), "quote"],
      [at("Plan", "plan"), "quote"],
      [at("Plan", "Before", { blockIndex: 5 }), "blockIndex"],
      [at("Plan", "Before", { mentions: [outsiderId] }), "mentions"],
      [at("Plan", "Before", { body: "  " }), "body"],
    ] as const) {
      const refusal = await refusalOf(post(editor, args));
      expect(refusal.code, JSON.stringify(args)).toBe("VALIDATION_FAILED");
      expect(refusal.message).toContain(field);
    }
    expect(await server.db.select().from(commentsTable)).toEqual(before);
    expect(JSON.stringify((await server.callTool("read", owner.userId, { documentId, includeDraft: true })).sections)).toBe(draftBefore);
  });
});

test("the outsider fixture is outside the workspace", async () => {
  const [membership] = await server.db.select().from(memberships).where(eq(memberships.userId, outsiderId));
  const [ownerMembership] = await server.db.select().from(memberships).where(eq(memberships.userId, owner.userId));
  expect(membership!.workspaceId).not.toBe(ownerMembership!.workspaceId);
});
