/**
 * The `comments` tool: the comment threads of a branch. A thread is a stored
 * comment (anchored in section text by <svc:comment id> markup, created
 * through the `sections` tool), its replies and whether it is resolved.
 * Threads are not versioned with the section: a reply or a resolution is one
 * state on every branch where the comment is anchored.
 *
 * Access follows the comment's section on the branch named: seeing the thread
 * needs seeing the section there (hidden at the default branch's head counts
 * as hidden, as for `read`); replying, resolving and reopening need edit on
 * it. A comment the caller may not see, of another document, or not anchored
 * on that branch is NOT_FOUND, worded alike.
 */
import { z } from "zod";
import { existingCommentTags, MAX_COMMENT_BODY_CHARS } from "@/server/core/comment-markup";
import type { Permission, SectionVersion } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import { branchNameSchema } from "@/server/core/names";
import { nonMembers } from "@/server/store/accounts";
import { getComments, insertReply, setCommentResolution } from "@/server/store/comments";
import { CommitGraph } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
import { type DocumentAccess, openDocument, requireSection, sectionRules } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { type CommentView, commentViews, readDocument, type SectionView } from "./read";
import { notifyReply } from "./notification-events";
import { defineTool, type ToolResults, uuidSchema } from "./tool";

const documentId = uuidSchema.describe("The document the comments are in.");
const branchName = branchNameSchema
  .optional()
  .describe(
    "The branch whose text anchors the comments (the branch you read them on); default: the document's default branch. Your permission on each comment's section on this branch decides what you may do: read it to see the thread, edit it to reply, resolve or reopen.",
  );
const thread = {
  documentId,
  branchName,
  commentId: uuidSchema.describe(
    'The thread: a `commentId` from `read` or `comments` `list` (the id in <svc:comment id="…">). Comments not yet committed (<svc:comment-new>) have no thread yet.',
  ),
};

export const commentsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("list"),
    documentId,
    branchName,
    status: z.enum(["open", "resolved", "all"]).optional().describe("Which threads: `open`, `resolved`, or `all` (default)."),
  }),
  z.strictObject({
    action: z.literal("reply"),
    ...thread,
    body: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(MAX_COMMENT_BODY_CHARS, `must be at most ${MAX_COMMENT_BODY_CHARS} characters`)
      .describe(`The reply, plain text (1-${MAX_COMMENT_BODY_CHARS} characters once trimmed). A reply to a resolved thread reopens it.`),
    mentions: z
      .array(z.guid("must be a user id (UUID)"))
      .max(100)
      .optional()
      .describe("User ids the reply mentions: members of the workspace (find them with the `members` tool)."),
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
  /** The text the comment is on (between its tags, on the branch read). */
  commentedText: string;
  /** `edit`: you may reply, resolve and reopen; `read`: you may only read the thread. */
  yourPermission: Permission;
}

/** The threads anchored in one section, in text order. */
function threadsIn(
  section: Pick<SectionView, "sectionId" | "name" | "content">,
  comments: ReadonlyMap<string, CommentView>,
  yourPermission: Permission,
): ThreadView[] {
  return section.content.flatMap((block) =>
    block.blockType !== "text"
      ? []
      : existingCommentTags(block.text).flatMap((tag) => {
          const comment = comments.get(tag.id);
          return comment
            ? [{ ...comment, sectionId: section.sectionId, sectionName: section.name, commentedText: tag.text, yourPermission }]
            : [];
        }),
  );
}

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  // `read`'s own view: only the sections the caller may see bring their comments.
  const view = await readDocument(ctx.db, access, { branchName: input.branchName });
  const rules = await sectionRules(ctx.db, access, view.branchName);
  const status = input.status ?? "all";
  const threads = view.sections
    .flatMap((section) =>
      threadsIn(section, new Map(section.comments.map((c) => [c.commentId, c])), rules.permission(section.sectionId, section)),
    )
    .filter((t) => status === "all" || t.status === status);
  return { documentId: view.documentId, branchName: view.branchName ?? access.document.defaultBranch, threads };
}

interface OpenThread {
  access: DocumentAccess;
  branchName: string;
  commentId: string;
  sectionId: string;
  version: SectionVersion;
  yourPermission: Permission;
}

/**
 * Finds a comment anchored on the branch in a section the caller may see, and
 * checks the caller may edit that section (PERMISSION_DENIED when it may only
 * read it). Everything short of seeing it reads as a comment that does not exist.
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
      `It is not anchored in a section you can see on branch ${JSON.stringify(branchName)} of this document; \`comments\` \`list\` shows the threads there.`,
    );
  const branch = await getBranch(tx, access.document.id, branchName);
  const [comment] = await getComments(tx, access.document.id, [input.commentId]);
  if (!comment) throw missing();
  const commit = await new CommitGraph(tx, access.document.id).get(branch.headCommitId);
  const entry = (await loadTree(tx, commit.treeHash)).sections.find((e) => e.sectionId === comment.sectionId);
  if (!entry) throw missing();
  const version = (await loadSections(tx, [entry.blobHash])).get(entry.blobHash)!;
  const rules = await sectionRules(tx, access, branchName);
  const yourPermission = rules.permission(entry.sectionId, version);
  if (yourPermission === "none") throw missing();
  const anchored = version.content.some((b) => b.blockType === "text" && existingCommentTags(b.text).some((tag) => tag.id === comment.id));
  if (!anchored) throw missing();
  requireSection(rules, entry.sectionId, [version], "edit", branchName);
  return { access, branchName, commentId: comment.id, sectionId: entry.sectionId, version, yourPermission };
}

/** The thread as it is now (after a write in the same transaction). */
async function threadView(tx: Tx, open: OpenThread): Promise<ThreadView> {
  const comments = await commentViews(tx, open.access.document.id, [open.commentId]);
  const [view] = threadsIn(
    { sectionId: open.sectionId, name: open.version.name, content: open.version.content },
    comments,
    open.yourPermission,
  ).filter((t) => t.commentId === open.commentId);
  return view!;
}

async function reply(ctx: ActionContext, input: ActionInput<"reply">) {
  return ctx.db.transaction(async (tx) => {
    const open = await openThread(tx, ctx, input);
    const mentions = [...new Set(input.mentions ?? [])];
    const strangers = await nonMembers(tx, ctx.actor.workspaceId, mentions);
    if (strangers.length > 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `mentions ${strangers.join(", ")} are not members of this workspace. Find member ids with the \`members\` tool (action \`search\`).`,
        { issues: [{ path: "mentions", message: "mention of a non-member" }], userIds: strangers },
      );
    }
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
      mentions,
      ctx.clock(),
    );
    const row = await insertReply(tx, open.access.document.id, {
      commentId: open.commentId,
      authorId: ctx.actor.userId,
      agent: ctx.actor.agent,
      body: input.body,
      mentions,
      createdAt: ctx.clock(),
    });
    // A reply means the discussion goes on: a resolved thread opens again.
    const reopened = await setCommentResolution(tx, open.commentId, null);
    return {
      documentId: open.access.document.id,
      branchName: open.branchName,
      replyId: row.id,
      reopened,
      thread: await threadView(tx, open),
    };
  });
}

function setResolution(resolve: boolean) {
  return (ctx: ActionContext, input: ActionInput<"resolve" | "reopen">) =>
    ctx.db.transaction(async (tx) => {
      const open = await openThread(tx, ctx, input);
      const changed = await setCommentResolution(tx, open.commentId, resolve ? { by: ctx.actor.userId, at: ctx.clock() } : null);
      return { documentId: open.access.document.id, branchName: open.branchName, changed, thread: await threadView(tx, open) };
    });
}

export const commentsTool = defineTool({
  name: "comments",
  description: [
    "The comment threads of a document on a branch, with their replies. Comments are anchored in section text by <svc:comment id> markup; add one through `sections` with <svc:comment-new>.",
    "Actions: list (in document order), reply (reopens a resolved thread), resolve, reopen (changed: false when it already was). Writes return the thread as it is now.",
    "Seeing a thread needs read access to its section, writing needs edit; threads in sections you cannot see are NOT_FOUND. Replies and resolution are the same on every branch.",
  ].join(" "),
  input: commentsInput,
  readOnly: false,
  handlers: { list, reply, resolve: setResolution(true), reopen: setResolution(false) },
});

export type CommentsResults = ToolResults<typeof commentsTool>;
