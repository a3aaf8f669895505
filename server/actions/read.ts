/** The `read` tool: a document's state on a branch or at a commit, sections in order with their contentHash. */
import { z } from "zod";
import type { Block } from "@/server/core/blocks";
import { existingCommentTags } from "@/server/core/comment-markup";
import type { LiveSection } from "@/server/collab/codec";
import {
  type DocumentTree,
  hashSection,
  type Permission,
  type PropertyValue,
  type SectionReference,
  type SectionVersion,
} from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { branchNameSchema } from "@/server/core/names";
import { CommitGraph, type CommitRecord } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
import { getComments, getReplies } from "@/server/store/comments";
import { getTags } from "@/server/store/tags";
import { userNames } from "@/server/store/users";
import { type DocumentAccess, openDocument, sectionRules, visibleEntries } from "@/server/access/documents";
import { commitRefSchema } from "./document-fields";
import { downloadLinks } from "./upload-url";
import { defineTool, uuidSchema } from "./tool";
import type { ActionContext } from "./context";
import type { LiveDrafts } from "@/server/collab/live-drafts";
import { draftSections } from "./drafts";
import { passedBack } from "@/server/core/schema-listing";

export const readInput = z.strictObject({
  documentId: uuidSchema.describe("From `search` or `documents` list."),
  branchName: passedBack(branchNameSchema).optional().describe("Default: the default branch."),
  commitId: commitRefSchema.optional().describe("Read at this commit (id or 7+ hex prefix, from `documents` log)."),
  sectionIds: z.array(uuidSchema).min(1).max(5_000).optional().describe("Only these sections; default: all."),
  includeDraft: z.boolean().optional().describe("Read the live draft (head plus uncommitted edits). Not with commitId."),
});

export interface SectionView {
  sectionId: string;
  name: string;
  content: readonly Block[];
  /** Pass as `expectedContentHash` to the `sections` tool to detect concurrent edits. */
  contentHash: string;
  /** 0-based index in the document's section order. */
  position: number;
  defaultPermission: Permission | null;
  aiAccess: Permission | null;
  /**
   * What the caller may do with the section as this version has it: the one
   * decision (`sectionRules`), so no page or client works it out again.
   * `edit` at a branch head lets the `sections` tool change it (unless the
   * document is deleted there).
   */
  yourPermission: "read" | "edit";
  references: readonly SectionReference[];
  /** Comments anchored in this section's text by <svc:comment id="…"> markup. */
  comments: CommentView[];
  /** Storage key -> signed download URL (valid 15 minutes) for each storage block of the section. */
  downloads: Record<string, string>;
}

export interface CommentView {
  commentId: string;
  body: string;
  authorId: string;
  authorName: string | null;
  /** The agent that wrote it for its author; null when the author did. */
  agentName: string | null;
  /** Mentioned user ids. */
  mentions: string[];
  /** The branch the comment was written on. */
  branchName: string;
  createdAt: string;
  /** `resolved` once someone resolved the thread (until it is reopened). */
  status: "open" | "resolved";
  resolvedAt: string | null;
  resolvedById: string | null;
  resolvedByName: string | null;
  /** Answers to the comment, oldest first. */
  replies: CommentReplyView[];
}

export interface CommentReplyView {
  replyId: string;
  body: string;
  authorId: string;
  authorName: string | null;
  /** The agent that wrote it for its author; null when the author did. */
  agentName: string | null;
  /** Mentioned user ids. */
  mentions: string[];
  createdAt: string;
}

export interface TagView {
  tagId: string;
  path: string;
  displayName: string | null;
  color: string | null;
}

export interface DocumentView {
  documentId: string;
  path: string;
  name: string;
  description: string | null;
  /** True when the document is deleted in this state (deleted on a branch, not yet merged). */
  deleted: boolean;
  /** The branch read, or null when reading a commit directly. */
  branchName: string | null;
  /** The commit whose state is shown: the branch head, or `commitId` when given. */
  headCommitId: string;
  tags: TagView[];
  properties: Record<string, PropertyValue>;
  sections: SectionView[];
}

/** The threads (comment, replies, resolution) of these comments of a document, by comment id; ids of other documents are absent. */
export async function commentViews(tx: Tx, documentId: string, ids: readonly string[]): Promise<Map<string, CommentView>> {
  const rows = await getComments(tx, documentId, ids);
  const replies = await getReplies(
    tx,
    rows.map((r) => r.id),
  );
  const names = await userNames(tx, [
    ...rows.flatMap((r) => (r.resolvedBy ? [r.authorId, r.resolvedBy] : [r.authorId])),
    ...replies.map((r) => r.authorId),
  ]);
  const repliesOf = new Map<string, typeof replies>();
  for (const reply of replies) {
    const thread = repliesOf.get(reply.commentId);
    if (thread) thread.push(reply);
    else repliesOf.set(reply.commentId, [reply]);
  }
  return new Map(
    rows.map((r) => [
      r.id,
      {
        commentId: r.id,
        body: r.body,
        authorId: r.authorId,
        authorName: names.get(r.authorId) ?? null,
        agentName: r.agent?.name ?? null,
        mentions: r.mentions,
        branchName: r.branchName,
        createdAt: r.createdAt.toISOString(),
        status: r.resolvedAt ? "resolved" : "open",
        resolvedAt: r.resolvedAt?.toISOString() ?? null,
        resolvedById: r.resolvedBy,
        resolvedByName: r.resolvedBy ? (names.get(r.resolvedBy) ?? null) : null,
        replies: (repliesOf.get(r.id) ?? []).map((reply) => ({
          replyId: reply.id,
          body: reply.body,
          authorId: reply.authorId,
          authorName: names.get(reply.authorId) ?? null,
          agentName: reply.agent?.name ?? null,
          mentions: reply.mentions,
          createdAt: reply.createdAt.toISOString(),
        })),
      },
    ]),
  );
}

/** The stored comments anchored in the given section versions, by comment id. */
function commentsOf(tx: Tx, documentId: string, versions: SectionVersion[]): Promise<Map<string, CommentView>> {
  const ids = versions.flatMap((v) =>
    v.content.flatMap((b) => (b.blockType === "text" ? existingCommentTags(b.text).map((t) => t.id) : [])),
  );
  return commentViews(tx, documentId, ids);
}

/** Builds the view of one commit of a document; shared by `read` and `documents` `show`. */
/** Signs download URLs for the storage blocks of a section's content; absent for readers who get no file links. */
export type DownloadSigner = (content: readonly Block[], commitId: string) => Record<string, string>;

export async function documentView(
  tx: Tx,
  input: {
    access: DocumentAccess;
    commit: CommitRecord;
    branchName: string | null;
    sectionIds?: string[];
    downloads?: DownloadSigner;
    /** Live content replacing the commit's, per section id (a branch's draft). */
    draft?: ReadonlyMap<string, LiveSection>;
  },
): Promise<DocumentView> {
  const document = input.access.document;
  const tree: DocumentTree = await loadTree(tx, input.commit.treeHash);
  const rules = await sectionRules(tx, input.access, input.branchName);
  // Positions count only the sections the caller can see, so hidden ones leave no gaps.
  const visible = await visibleEntries(rules, tree, (hashes) => loadSections(tx, hashes));
  let entries = visible.map((entry, position) => ({ ...entry, position }));
  if (input.sectionIds) {
    const present = new Set(visible.map((s) => s.sectionId));
    const unknown = [...new Set(input.sectionIds)].filter((id) => !present.has(id));
    if (unknown.length > 0) {
      throw new DomainError(
        "NOT_FOUND",
        `Section(s) ${unknown.join(", ")} are not in this document at this point. Read without sectionIds to list its sections.`,
        { kind: "Section", ids: unknown },
      );
    }
    const wanted = new Set(input.sectionIds);
    entries = entries.filter((e) => wanted.has(e.sectionId));
  }
  const versions = await loadSections(
    tx,
    entries.map((e) => e.blobHash),
  );
  const tagRows = await getTags(tx, document.workspaceId, tree.tagIds);
  // The comments the text shown anchors: the draft's where it replaces the commit's (posted comments are there first).
  const comments = await commentsOf(tx, document.id, [
    ...versions.values(),
    ...entries.flatMap((e) => {
      const live = input.draft?.get(e.sectionId);
      return live ? [{ ...versions.get(e.blobHash)!, content: live.content }] : [];
    }),
  ]);
  return {
    documentId: document.id,
    path: tree.path,
    name: tree.name,
    description: tree.description,
    deleted: tree.deleted,
    branchName: input.branchName,
    headCommitId: input.commit.id,
    tags: tagRows
      .map((t) => ({ tagId: t.id, path: t.path, displayName: t.displayName, color: t.color }))
      .sort((a, b) => a.path.localeCompare(b.path)),
    properties: tree.properties,
    sections: entries.map((e) => {
      const committed = versions.get(e.blobHash)!;
      const live = input.draft?.get(e.sectionId);
      const v = live ? { ...committed, name: live.name, content: live.content } : committed;
      // Only visible sections are here, so the caller holds at least read.
      const yourPermission = rules.permission(e.sectionId, committed) === "edit" ? "edit" : "read";
      return {
        sectionId: e.sectionId,
        name: v.name,
        content: v.content,
        contentHash: live ? hashSection(v) : e.blobHash,
        position: e.position,
        defaultPermission: v.defaultPermission,
        aiAccess: v.aiAccess,
        yourPermission,
        references: v.references,
        comments: v.content.flatMap((b) =>
          b.blockType === "text" ? existingCommentTags(b.text).flatMap((tag) => comments.get(tag.id) ?? []) : [],
        ),
        downloads: input.downloads?.(v.content, input.commit.id) ?? {},
      };
    }),
  };
}

/** `read` for an already opened document: also serves share-link visitors, who are no workspace actor. */
export async function readDocument(
  tx: Tx,
  access: DocumentAccess,
  input: { branchName?: string; commitId?: string; sectionIds?: string[]; includeDraft?: boolean },
  downloads?: DownloadSigner,
  /** Where `includeDraft` reads the draft from (the read tool's context; share visitors never read drafts). */
  live?: LiveDrafts,
): Promise<DocumentView> {
  const { document } = access;
  if (input.includeDraft && input.commitId) {
    throw new DomainError("VALIDATION_FAILED", "includeDraft reads a branch's draft: give branchName, not commitId.", {
      issues: [{ path: "includeDraft", message: "cannot be combined with commitId" }],
    });
  }
  const graph = new CommitGraph(tx, document.id);
  if (input.commitId) {
    const commit = await graph.getByRef(input.commitId);
    return documentView(tx, { access, commit, branchName: null, sectionIds: input.sectionIds, downloads });
  }
  const branchName = input.branchName ?? document.defaultBranch;
  const branch = await getBranch(tx, document.id, branchName);
  const commit = await graph.get(branch.headCommitId);
  const draft = input.includeDraft && live ? await draftSections(live, { documentId: document.id, branchName }) : undefined;
  return documentView(tx, { access, commit, branchName, sectionIds: input.sectionIds, downloads, draft });
}

export const readTool = defineTool({
  name: "read",
  description: [
    "Read a document at a branch head, a commit, or its live draft: its fields and the sections you may see, in order, with content blocks and contentHash.",
  ].join(" "),
  input: readInput,
  readOnly: true,
  async handle(ctx: ActionContext, input) {
    const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
    return readDocument(ctx.db, access, input, (content, commitId) => downloadLinks(ctx, access.document.id, commitId, content), ctx.live);
  },
});
