/**
 * The `comments` tool: the comment threads of a branch. A thread is a stored
 * comment (anchored in section text by <svc:comment id> markup), its replies
 * and whether it is resolved. Threads are not versioned with the section: a
 * reply or a resolution is one state on every branch where the comment is
 * anchored.
 *
 * A comment is saved when its author posts it (`post`): the row is stored at
 * once, and its anchor enters the branch's live draft around the quoted text,
 * through the draft service (every open editor sees it; it is stored like a
 * keystroke of its author's). From there it travels with the text: the next
 * commit of the draft stores it, merges carry it. Until then the thread is
 * already everyone's: `list` reads the draft. A draft discarded before its
 * commit takes the anchor away; the thread stays, `anchored: false`, on the
 * branch it was written on (it can still be read, replied to and resolved).
 * Comments written as <svc:comment-new> through the `sections` tool are saved
 * by that write, which is a commit.
 *
 * Access follows the comment's section on the branch named: seeing the thread
 * needs seeing the section there (hidden at the default branch's head counts
 * as hidden, as for `read`); posting, replying, resolving and reopening need
 * edit on it. A comment the caller may not see, of another document, or not
 * on that branch is NOT_FOUND, worded alike.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { textBlockIn } from "@/server/collab/codec";
import { type Block, MAX_BLOCKS_PER_SECTION, MAX_TEXT_BLOCK_CHARS } from "@/server/core/blocks";
import {
  commentAnchorMarkup,
  commentTagWithin,
  existingCommentTags,
  MAX_COMMENT_BODY_CHARS,
  quoteIndex,
} from "@/server/core/comment-markup";
import type { Permission, SectionVersion } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import { branchNameSchema } from "@/server/core/names";
import { nonMembers } from "@/server/store/accounts";
import { commentsWrittenOn, getComments, insertComments, insertReply, setCommentResolution } from "@/server/store/comments";
import { CommitGraph } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
import { type DocumentAccess, openDocument, requireSection, sectionRules } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { type CommentView, commentViews, readDocument } from "./read";
import { notifyCommentPosted, notifyReply } from "./notification-events";
import { defineTool, type ToolResults, uuidSchema } from "./tool";
import { passedBack } from "@/server/core/schema-listing";

const documentId = uuidSchema;
const branchName = passedBack(branchNameSchema).optional().describe("Branch whose text anchors them; default: the default branch.");
const thread = {
  documentId,
  branchName,
  commentId: uuidSchema.describe("The thread's commentId."),
};
const body = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(MAX_COMMENT_BODY_CHARS, `must be at most ${MAX_COMMENT_BODY_CHARS} characters`)
  .describe("Plain text.");
const mentions = z.array(z.guid("must be a user id (UUID)")).max(100).optional().describe("User ids to mention (`members`).");

export const commentsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("list"),
    documentId,
    branchName,
    status: z.enum(["open", "resolved", "all"]).optional().describe("Default: all."),
  }),
  z.strictObject({
    action: z.literal("post"),
    documentId,
    branchName,
    sectionId: uuidSchema,
    blockIndex: z
      .number()
      .int()
      .min(0)
      .max(MAX_BLOCKS_PER_SECTION - 1)
      .describe("0-based block index."),
    quote: z.string().min(1, "must not be empty").max(MAX_TEXT_BLOCK_CHARS).describe("Text to comment on, exactly as in the draft."),
    occurrence: z.number().int().min(0).optional().describe("Which occurrence of quote (from 0)."),
    body,
    mentions,
  }),
  z.strictObject({
    action: z.literal("reply"),
    ...thread,
    body,
    mentions,
  }),
  z.strictObject({ action: z.literal("resolve"), ...thread }),
  z.strictObject({ action: z.literal("reopen"), ...thread }),
]);

type CommentsInput = z.infer<typeof commentsInput>;
type ActionInput<A extends CommentsInput["action"]> = Extract<CommentsInput, { action: A }>;

/** A comment thread as `list` and the writes return it: the comment with its replies, where it is, and what you may do. */
export interface ThreadView extends CommentView {
  sectionId: string;
  sectionName: string;
  /** The text the comment is on (between its tags, in the branch's draft); empty when it is not anchored. */
  commentedText: string;
  /**
   * Whether its anchor is in the branch's text (committed, or in the draft). False: the draft it was posted into
   * was discarded (or its text deleted) before a commit stored it; the thread is kept.
   */
  anchored: boolean;
  /** `edit`: you may reply, resolve and reopen; `read`: you may only read the thread. */
  yourPermission: Permission;
}

type SectionText = { sectionId: string; name: string; content: readonly Block[] };

/** The threads anchored in one section, in text order. */
function threadsIn(section: SectionText, comments: ReadonlyMap<string, CommentView>, yourPermission: Permission): ThreadView[] {
  return section.content.flatMap((block) =>
    block.blockType !== "text"
      ? []
      : existingCommentTags(block.text).flatMap((tag) => {
          const comment = comments.get(tag.id);
          return comment
            ? [
                {
                  ...comment,
                  sectionId: section.sectionId,
                  sectionName: section.name,
                  commentedText: tag.text,
                  anchored: true,
                  yourPermission,
                },
              ]
            : [];
        }),
  );
}

/** A thread whose anchor left the draft before it was committed. */
const detachedThread = (comment: CommentView, section: SectionText, yourPermission: Permission): ThreadView => ({
  ...comment,
  sectionId: section.sectionId,
  sectionName: section.name,
  commentedText: "",
  anchored: false,
  yourPermission,
});

/** One thread as `section` (the branch's draft of the comment's section) holds it. */
function threadIn(section: SectionText, comment: CommentView, yourPermission: Permission): ThreadView {
  const [anchored] = threadsIn(section, new Map([[comment.commentId, comment]]), yourPermission);
  return anchored ?? detachedThread(comment, section, yourPermission);
}

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const branch = input.branchName ?? access.document.defaultBranch;
  // `read`'s own view of the draft: only the sections the caller may see bring their comments.
  const [view, written] = await Promise.all([
    readDocument(ctx.db, access, { branchName: branch, includeDraft: true }, undefined, ctx.live),
    commentsWrittenOn(ctx.db, access.document.id, branch),
  ]);
  const rules = await sectionRules(ctx.db, access, branch);
  const permissionOf = (section: (typeof view.sections)[number]) => rules.permission(section.sectionId, section);
  const anchored = view.sections.flatMap((section) =>
    threadsIn(section, new Map(section.comments.map((c) => [c.commentId, c])), permissionOf(section)),
  );
  const anchoredIds = new Set(anchored.map((t) => t.commentId));
  const sections = new Map(view.sections.map((s) => [s.sectionId, s]));
  const lost = written.filter((c) => !anchoredIds.has(c.id) && sections.has(c.sectionId));
  const lostViews = await commentViews(
    ctx.db,
    access.document.id,
    lost.map((c) => c.id),
  );
  const detached = lost.flatMap((c) => {
    const comment = lostViews.get(c.id);
    const section = sections.get(c.sectionId)!;
    return comment ? [detachedThread(comment, section, permissionOf(section))] : [];
  });
  const status = input.status ?? "all";
  const threads = [...anchored, ...detached].filter((t) => status === "all" || t.status === status);
  return { documentId: view.documentId, branchName: branch, threads };
}

interface OpenSection {
  access: DocumentAccess;
  branchName: string;
  sectionId: string;
  version: SectionVersion;
  yourPermission: Permission;
}

/**
 * The section on the branch's head, checking the caller may edit it
 * (PERMISSION_DENIED when it may only read it; NOT_FOUND when it may not see
 * it or it is not there: `missing`).
 */
async function openSection(
  tx: Tx,
  access: DocumentAccess,
  branchName: string,
  sectionId: string,
  missing: () => DomainError,
): Promise<OpenSection> {
  const branch = await getBranch(tx, access.document.id, branchName);
  const commit = await new CommitGraph(tx, access.document.id).get(branch.headCommitId);
  const entry = (await loadTree(tx, commit.treeHash)).sections.find((e) => e.sectionId === sectionId);
  if (!entry) throw missing();
  const version = (await loadSections(tx, [entry.blobHash])).get(entry.blobHash)!;
  const rules = await sectionRules(tx, access, branchName);
  const yourPermission = rules.permission(entry.sectionId, version);
  if (yourPermission === "none") throw missing();
  requireSection(rules, entry.sectionId, [version], "edit", branchName);
  return { access, branchName, sectionId, version, yourPermission };
}

interface OpenThread extends OpenSection {
  commentId: string;
}

/**
 * Finds a comment on the branch — anchored at its head, or written on it (its
 * anchor in the draft, or lost with a discarded draft) — in a section the
 * caller may see, and checks the caller may edit that section. Everything
 * short of seeing it reads as a comment that does not exist.
 */
async function openThread(
  tx: Tx,
  ctx: ActionContext,
  input: { documentId: string; branchName?: string; commentId: string },
): Promise<OpenThread> {
  const access = await openDocument(tx, ctx.actor, input.documentId, "read");
  const branchName = input.branchName ?? access.document.defaultBranch;
  const missing = () =>
    notFound(
      "Comment",
      input.commentId,
      `It is not on a section you can see on branch ${JSON.stringify(branchName)} of this document; \`comments\` \`list\` shows the threads there.`,
    );
  const [comment] = await getComments(tx, access.document.id, [input.commentId]);
  if (!comment) throw missing();
  const section = await openSection(tx, access, branchName, comment.sectionId, missing);
  const anchored = section.version.content.some(
    (b) => b.blockType === "text" && existingCommentTags(b.text).some((tag) => tag.id === comment.id),
  );
  if (!anchored && comment.branchName !== branchName) throw missing();
  return { ...section, commentId: comment.id };
}

/** The thread as it is now, placed and quoted as the branch's draft has it (read after the write committed). */
async function threadView(ctx: ActionContext, open: OpenThread): Promise<ThreadView> {
  const [comments, draft] = await Promise.all([
    commentViews(ctx.db, open.access.document.id, [open.commentId]),
    ctx.live.read({ documentId: open.access.document.id, branchName: open.branchName }),
  ]);
  const content = draft.get(open.sectionId)?.content ?? open.version.content;
  return threadIn(
    { sectionId: open.sectionId, name: draft.get(open.sectionId)?.name ?? open.version.name, content },
    comments.get(open.commentId)!,
    open.yourPermission,
  );
}

/** VALIDATION_FAILED unless every mentioned person is a member of the workspace. */
async function requireMembers(tx: Tx, ctx: ActionContext, ids: readonly string[]): Promise<void> {
  const strangers = await nonMembers(tx, ctx.actor.workspaceId, ids);
  if (strangers.length > 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `mentions ${strangers.join(", ")} are not members of this workspace. Find member ids with the \`members\` tool (action \`search\`).`,
      { issues: [{ path: "mentions", message: "mention of a non-member" }], userIds: strangers },
    );
  }
}

const quoteRefused = (message: string, path: string) =>
  new DomainError("VALIDATION_FAILED", message, { issues: [{ path, message: message.split(":")[0]! }] });

async function post(ctx: ActionContext, input: ActionInput<"post">) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const branch = input.branchName ?? access.document.defaultBranch;
  const section = await openSection(ctx.db, access, branch, input.sectionId, () =>
    notFound("Section", input.sectionId, `It is not a section you can see on branch ${JSON.stringify(branch)}; \`read\` lists them.`),
  );
  const mentioned = [...new Set(input.mentions ?? [])];
  await requireMembers(ctx.db, ctx, mentioned);
  const comment = {
    id: randomUUID(),
    workspaceId: ctx.actor.workspaceId,
    documentId: access.document.id,
    sectionId: input.sectionId,
    branchName: branch,
    authorId: ctx.actor.userId,
    agent: ctx.actor.agent,
    body: input.body,
    mentions: mentioned,
    createdAt: ctx.clock(),
  };
  const { open, close } = commentAnchorMarkup(comment.id);
  await ctx.live.edit(
    { documentId: access.document.id, branchName: branch, sectionId: input.sectionId },
    ctx.actor,
    (doc) => {
      const text = textBlockIn(doc, input.blockIndex);
      if (!text) throw quoteRefused(`blockIndex: block ${input.blockIndex} of the section's draft is not a text block.`, "blockIndex");
      const now = text.toString();
      const from = quoteIndex(now, input.quote, input.occurrence ?? 0);
      if (from === null) {
        throw quoteRefused(
          `quote: the text is not in block ${input.blockIndex} of the section's draft${input.occurrence ? ` ${input.occurrence + 1} times` : ""} (it may have changed since you read it: \`read\` with includeDraft shows it now).`,
          "quote",
        );
      }
      const to = from + input.quote.length;
      if (commentTagWithin(now, from, to)) throw quoteRefused("quote: a comment cannot overlap another comment's text.", "quote");
      if (now.length + open.length + close.length > MAX_TEXT_BLOCK_CHARS)
        throw quoteRefused(`quote: the block would be longer than ${MAX_TEXT_BLOCK_CHARS} characters with the comment's markup.`, "quote");
      // The closing tag first, so the start is still where it was.
      doc.transact(() => {
        text.insert(to, close);
        text.insert(from, open);
      });
    },
    () =>
      ctx.db.transaction(async (tx) => {
        await insertComments(tx, [comment]);
        await notifyCommentPosted(
          tx,
          access.document,
          comment,
          { branchName: branch, sectionName: section.version.name },
          comment.createdAt,
        );
      }),
  );
  return {
    documentId: access.document.id,
    branchName: branch,
    commentId: comment.id,
    thread: await threadView(ctx, { ...section, commentId: comment.id }),
  };
}

async function reply(ctx: ActionContext, input: ActionInput<"reply">) {
  const { open, reopened, replyId } = await ctx.db.transaction(async (tx) => {
    const open = await openThread(tx, ctx, input);
    const mentioned = [...new Set(input.mentions ?? [])];
    await requireMembers(tx, ctx, mentioned);
    // In the reply's transaction: the thread's author and earlier repliers hear of it, the mentioned of their mention.
    await notifyReply(
      tx,
      {
        document: open.access.document,
        branchName: open.branchName,
        sectionId: open.sectionId,
        sectionName: open.version.name,
        commentId: open.commentId,
      },
      ctx.actor,
      mentioned,
      ctx.clock(),
    );
    const row = await insertReply(tx, open.access.document.id, {
      commentId: open.commentId,
      authorId: ctx.actor.userId,
      agent: ctx.actor.agent,
      body: input.body,
      mentions: mentioned,
      createdAt: ctx.clock(),
    });
    // A reply means the discussion goes on: a resolved thread opens again.
    return { open, replyId: row.id, reopened: await setCommentResolution(tx, open.commentId, null) };
  });
  return { documentId: open.access.document.id, branchName: open.branchName, replyId, reopened, thread: await threadView(ctx, open) };
}

function setResolution(resolve: boolean) {
  return async (ctx: ActionContext, input: ActionInput<"resolve" | "reopen">) => {
    const { open, changed } = await ctx.db.transaction(async (tx) => {
      const open = await openThread(tx, ctx, input);
      return { open, changed: await setCommentResolution(tx, open.commentId, resolve ? { by: ctx.actor.userId, at: ctx.clock() } : null) };
    });
    return { documentId: open.access.document.id, branchName: open.branchName, changed, thread: await threadView(ctx, open) };
  };
}

export const commentsTool = defineTool({
  name: "comments",
  description: [
    "Comment threads of a document on a branch, anchored in section text by <svc:comment id> markup.",
    "post anchors around `quote` in the live draft; reply reopens a resolved thread.",
    "Seeing a thread needs read on its section, writing needs edit; others are NOT_FOUND.",
  ].join(" "),
  input: commentsInput,
  readOnly: false,
  handlers: { list, post, reply, resolve: setResolution(true), reopen: setResolution(false) },
});

export type CommentsResults = ToolResults<typeof commentsTool>;
