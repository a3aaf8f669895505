/**
 * The `documents` tool: create, list and inspect documents; branches; history
 * (log, show, revert); tags and scalar properties. Every write is a commit.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { contentSchema } from "@/server/core/blocks";
import { revertCommitMessage } from "@/server/core/commit-messages";
import { type DocumentTree, newSectionVersion, type Permission, PERMISSIONS, type SectionVersion } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import {
  branchNameSchema,
  commitMessageSchema,
  descriptionSchema,
  documentNameSchema,
  documentPathSchema,
  nameFromPath,
  quoteForMessage,
  tagPathSchema,
} from "@/server/core/names";
import { insertComments } from "@/server/store/comments";
import { CommitGraph, type CommitRecord, walkLog } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { createBranch, createDocument } from "@/server/store/commit-to-branch";
import { assertPathFree, type DocumentRow, getBranch, getDocument, listBranches, listDocuments } from "@/server/store/documents";
import { loadTree } from "@/server/store/objects";
import { getTags, insertTag } from "@/server/store/tags";
import {
  grantsFor,
  insertShareLink,
  listGrants,
  listShareLinks,
  revokeShareLink,
  setDocumentPermissions,
  setGrant,
  type ShareLinkRow,
} from "@/server/store/access";
import { nonMembers } from "@/server/store/accounts";
import { hashSecretToken, newSecretToken } from "@/server/auth/secret-tokens";
import { documentPermission } from "@/server/policies/access";
import { userNames } from "@/server/store/users";
import { assertSectionChangesAllowed, openDocument, requireFullMember, subjectOf } from "./access";
import { assertNotDeleted, type WriteResult, writeBranch } from "./branch-write";
import { HIDDEN_COMMIT_MESSAGE, hiddenCommitIds, quotableMessages } from "./history";
import type { ActionContext } from "./context";
import { prepareSectionContent } from "./section-content";
import { type DocumentView, documentView } from "./read";
import { downloadLinks } from "./upload-url";
import { cursorSchema, decodeCursor, defineTool, encodeCursor, pageLimitSchema, uuidSchema, visiblePage } from "./tool";

const DEFAULT_PAGE_SIZE = 50;

const f = {
  documentId: uuidSchema.describe("The document."),
  branchName: branchNameSchema.describe("The branch to write on (writes commit to this branch)."),
  commitMessage: commitMessageSchema.optional(),
  sectionSpecs: z
    .array(
      z.strictObject({
        name: documentNameSchema.describe("Section name, rendered as the section's H2 heading."),
        content: contentSchema,
      }),
    )
    .max(2_000)
    .describe("Initial sections, in order: [{ name, content: blocks }]."),
  tagId: uuidSchema.describe("A tag id from `create_tag`."),
  commitId: uuidSchema.describe("A commit id from `log`."),
};

export const documentsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("create"),
    path: documentPathSchema,
    name: documentNameSchema.optional().describe("Display name; default: the last path segment."),
    description: descriptionSchema.optional().describe("Short description of the document."),
    sections: f.sectionSpecs.optional(),
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("list"),
    pathPrefix: z.string().max(500).optional().describe('Only documents whose path starts with this, e.g. "handbook/".'),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({ action: z.literal("get"), documentId: f.documentId }),
  z.strictObject({
    action: z.literal("update"),
    documentId: f.documentId,
    branchName: f.branchName,
    newPath: documentPathSchema.optional().describe("New path (must stay unique among live documents)."),
    newName: documentNameSchema.optional().describe("New display name."),
    newDescription: descriptionSchema.nullable().optional().describe("New description; null clears it."),
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("delete"),
    documentId: f.documentId,
    branchName: f.branchName.describe("A non-default branch; the deletion reaches main through a merge request."),
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("create_branch"),
    documentId: f.documentId,
    branchName: branchNameSchema.describe("Name of the new branch."),
    sourceBranch: branchNameSchema.optional().describe("Branch to start from; default: the default branch (main)."),
  }),
  z.strictObject({ action: z.literal("list_branches"), documentId: f.documentId }),
  z.strictObject({
    action: z.literal("log"),
    documentId: f.documentId,
    branchName: branchNameSchema.optional().describe("Branch whose history to list; default: the default branch."),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({ action: z.literal("show"), documentId: f.documentId, commitId: f.commitId }),
  z.strictObject({
    action: z.literal("revert"),
    documentId: f.documentId,
    branchName: f.branchName,
    commitId: f.commitId.describe("Restore the document to its state at this commit (a new commit; history is kept)."),
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("create_tag"),
    tagPath: tagPathSchema,
    tagDisplayName: z.string().trim().min(1).max(200).optional().describe("Name shown for the tag; default: its path."),
    tagDescription: z.string().max(2_000).optional().describe("What the tag means."),
    tagColor: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, "tagColor must be a hex colour like #3366ff")
      .optional()
      .describe("Hex colour, e.g. #3366ff."),
  }),
  z.strictObject({
    action: z.literal("assign_tag"),
    documentId: f.documentId,
    branchName: f.branchName,
    tagId: f.tagId,
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("remove_tag"),
    documentId: f.documentId,
    branchName: f.branchName,
    tagId: f.tagId,
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("get_permissions"),
    documentId: f.documentId,
  }),
  z.strictObject({
    action: z.literal("set_permissions"),
    documentId: f.documentId,
    defaultPermission: z.enum(PERMISSIONS).optional().describe("Team default for workspace members: edit | read | none."),
    aiAccess: z.enum(PERMISSIONS).optional().describe("The most any AI (MCP) call may do on this document: edit | read | none."),
    grants: z
      .array(
        z.strictObject({
          userId: uuidSchema.describe("A workspace member."),
          permission: z
            .enum(PERMISSIONS)
            .nullable()
            .describe("Their permission on this document, overriding the team default; null removes the grant."),
        }),
      )
      .max(500)
      .optional()
      .describe("Per-user grants to set or remove."),
  }),
  z.strictObject({
    action: z.literal("create_share_link"),
    documentId: f.documentId,
    permission: z
      .enum(["read", "edit"])
      .describe("What the link grants. Visitors without an account get read-only access (read links only)."),
    expiresInDays: z.number().int().min(1).max(3_650).optional().describe("Days until the link stops working; default: never."),
  }),
  z.strictObject({ action: z.literal("list_share_links"), documentId: f.documentId }),
  z.strictObject({
    action: z.literal("revoke_share_link"),
    documentId: f.documentId,
    shareLinkId: uuidSchema.describe("The link to revoke (from list_share_links)."),
  }),
  z.strictObject({
    action: z.literal("set_property"),
    documentId: f.documentId,
    branchName: f.branchName,
    columnId: uuidSchema.describe("The property column (UUID)."),
    value: z
      .union([z.string().max(10_000), z.number().finite(), z.boolean(), z.null()])
      .describe("Scalar value; null unsets the property."),
    commitMessage: f.commitMessage,
  }),
]);

export type DocumentsInput = z.infer<typeof documentsInput>;
type ActionInput<A extends DocumentsInput["action"]> = Extract<DocumentsInput, { action: A }>;

export interface DocumentSummary {
  documentId: string;
  path: string;
  name: string;
  description: string | null;
  defaultBranch: string;
  createdAt: string;
  updatedAt: string;
}

export interface CommitSummary {
  commitId: string;
  message: string;
  authorId: string;
  authorName: string | null;
  createdAt: string;
  parentIds: string[];
  kind: CommitRecord["kind"];
}

/** `updatedAt` is when the default branch last moved: the document's last change. */
const summarize = (d: DocumentRow, updatedAt: Date): DocumentSummary => ({
  documentId: d.id,
  path: d.path,
  name: d.name,
  description: d.description,
  defaultBranch: d.defaultBranch,
  createdAt: d.createdAt.toISOString(),
  updatedAt: updatedAt.toISOString(),
});

async function create(ctx: ActionContext, input: ActionInput<"create">) {
  requireFullMember(ctx.actor, "create documents");
  return ctx.db.transaction(async (tx) => {
    const { document, commit, tree } = await createDocument(
      tx,
      {
        documentId: randomUUID(),
        workspaceId: ctx.actor.workspaceId,
        authorId: ctx.actor.userId,
        path: input.path,
        name: input.name ?? nameFromPath(input.path),
        description: input.description ?? null,
        message: input.commitMessage ?? `Create document ${quoteForMessage(input.path)}`,
        now: ctx.clock(),
      },
      async (created) => {
        const sections: Array<{ sectionId: string; version: SectionVersion }> = [];
        for (const [index, spec] of (input.sections ?? []).entries()) {
          const sectionId = randomUUID();
          const target = {
            documentId: created.id,
            branchName: created.defaultBranch,
            sectionId,
            name: spec.name,
            where: `sections[${index}]`,
          };
          const { content, comments } = await prepareSectionContent(ctx, tx, target, spec.content);
          await insertComments(tx, comments);
          sections.push({ sectionId, version: newSectionVersion(spec.name, content) });
        }
        return sections;
      },
    );
    return {
      ...summarize(document, document.createdAt),
      branchName: document.defaultBranch,
      commitId: commit.id,
      sectionIds: tree.sections.map((s) => s.sectionId),
    };
  });
}

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const subject = subjectOf(ctx.actor);
  let grants = new Map<string, Permission>();
  const page = await visiblePage({
    limit: input.limit ?? DEFAULT_PAGE_SIZE,
    start: input.cursor ? decodeCursor(input.cursor, z.object({ afterPath: z.string() })).afterPath : undefined,
    fetch: async (afterPath, batchSize) => {
      const rows = await listDocuments(ctx.db, {
        workspaceId: ctx.actor.workspaceId,
        pathPrefix: input.pathPrefix?.replace(/^\/+/, ""),
        afterPath,
        limit: batchSize,
      });
      grants = await grantsFor(
        ctx.db,
        ctx.actor.userId,
        rows.map((r) => r.id),
      );
      return rows;
    },
    // Documents the caller may not see are left out.
    visible: (row) =>
      documentPermission(subject, {
        createdBy: row.createdBy,
        defaultPermission: row.defaultPermission,
        aiAccess: row.aiAccess,
        grant: grants.get(row.id) ?? null,
      }) !== "none",
    position: (row) => row.path,
  });
  return {
    documents: page.rows.map((row) => summarize(row, row.headUpdatedAt)),
    nextCursor: page.next === null ? null : encodeCursor({ afterPath: page.next }),
  };
}

async function get(ctx: ActionContext, input: ActionInput<"get">) {
  const { document, permission, canManage } = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const branch = await getBranch(ctx.db, document.id, document.defaultBranch);
  return { ...summarize(document, branch.updatedAt), headCommitId: branch.headCommitId, yourPermission: permission, canManage };
}

function update(ctx: ActionContext, input: ActionInput<"update">) {
  if (input.newPath === undefined && input.newName === undefined && input.newDescription === undefined) {
    throw new DomainError("VALIDATION_FAILED", "Nothing to update: give newPath, newName and/or newDescription.", {
      issues: [{ path: "", message: "one of newPath, newName, newDescription is required" }],
    });
  }
  return writeBranch(ctx, input, "edit", async ({ tree, document }, tx) => {
    assertNotDeleted(tree, input.branchName);
    const changes: string[] = [];
    const next = { ...tree };
    if (input.newPath !== undefined && input.newPath !== tree.path) {
      await assertPathFree(tx, document.workspaceId, input.newPath, document.id);
      next.path = input.newPath;
      changes.push(`move to ${quoteForMessage(input.newPath)}`);
    }
    if (input.newName !== undefined && input.newName !== tree.name) {
      next.name = input.newName;
      changes.push(`rename to ${quoteForMessage(input.newName)}`);
    }
    if (input.newDescription !== undefined && input.newDescription !== tree.description) {
      next.description = input.newDescription;
      changes.push(input.newDescription === null ? "clear description" : "update description");
    }
    const summary = changes.join(", ");
    return { tree: next, message: summary.charAt(0).toUpperCase() + summary.slice(1), result: {} };
  });
}

function deleteDocument(ctx: ActionContext, input: ActionInput<"delete">) {
  return writeBranch(ctx, input, "edit", async ({ tree, document }) => {
    if (input.branchName === document.defaultBranch) {
      throw new DomainError(
        "DEFAULT_BRANCH_PROTECTED",
        `A document cannot be deleted directly on its default branch ${JSON.stringify(document.defaultBranch)}. Create a branch (\`create_branch\`), delete it there, and merge that branch with a merge request so the deletion is reviewed.`,
        { branchName: input.branchName },
      );
    }
    assertNotDeleted(tree, input.branchName);
    return { tree: { ...tree, deleted: true }, message: `Delete document ${quoteForMessage(tree.path)}`, result: {} };
  });
}

async function createBranchAction(ctx: ActionContext, input: ActionInput<"create_branch">) {
  return ctx.db.transaction(async (tx) => {
    const { document } = await openDocument(tx, ctx.actor, input.documentId, "edit");
    const source = await getBranch(tx, document.id, input.sourceBranch ?? document.defaultBranch);
    const branch = await createBranch(tx, {
      document,
      name: input.branchName,
      headCommitId: source.headCommitId,
      authorId: ctx.actor.userId,
      now: ctx.clock(),
    });
    return { documentId: document.id, branchName: branch.name, sourceBranch: source.name, headCommitId: branch.headCommitId };
  });
}

async function listBranchesAction(ctx: ActionContext, input: ActionInput<"list_branches">) {
  const { document } = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const rows = await listBranches(ctx.db, document.id);
  return {
    documentId: document.id,
    branches: rows.map((b) => ({
      name: b.name,
      headCommitId: b.headCommitId,
      isDefault: b.name === document.defaultBranch,
      createdAt: b.createdAt.toISOString(),
      updatedAt: b.updatedAt.toISOString(),
    })),
  };
}

/** Commit summaries for a reader; `hidden` holds the ids of the commits whose messages the reader may not see. */
async function summarizeCommits(tx: Tx, commits: CommitRecord[], hidden: ReadonlySet<string>): Promise<CommitSummary[]> {
  const names = await userNames(
    tx,
    commits.map((c) => c.authorId),
  );
  return commits.map((c) => ({
    commitId: c.id,
    message: hidden.has(c.id) ? HIDDEN_COMMIT_MESSAGE : c.message,
    authorId: c.authorId,
    authorName: names.get(c.authorId) ?? null,
    createdAt: c.createdAt.toISOString(),
    parentIds: [...c.parentIds],
    kind: c.kind,
  }));
}

async function branchHeadTree(tx: Tx, document: DocumentRow, branchName: string): Promise<DocumentTree> {
  const branch = await getBranch(tx, document.id, branchName);
  return loadTree(tx, (await new CommitGraph(tx, document.id).get(branch.headCommitId)).treeHash);
}

async function log(ctx: ActionContext, input: ActionInput<"log">) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const { document } = access;
  const graph = new CommitGraph(ctx.db, document.id);
  const head = await graph.get((await getBranch(ctx.db, document.id, input.branchName ?? document.defaultBranch)).headCommitId);
  const frontier = input.cursor
    ? decodeCursor(input.cursor, z.object({ frontier: z.array(uuidSchema).min(1).max(1_000) })).frontier
    : [head.id];
  const page = await walkLog(graph, frontier, input.limit ?? DEFAULT_PAGE_SIZE);
  const hidden = await hiddenCommitIds(ctx.db, access, graph, page.commits, await loadTree(ctx.db, head.treeHash));
  return {
    commits: await summarizeCommits(ctx.db, page.commits, hidden),
    nextCursor: page.nextFrontier ? encodeCursor({ frontier: page.nextFrontier }) : null,
  };
}

async function show(ctx: ActionContext, input: ActionInput<"show">): Promise<DocumentView & { commit: CommitSummary }> {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const graph = new CommitGraph(ctx.db, access.document.id);
  const commit = await graph.get(input.commitId);
  const view = await documentView(ctx.db, {
    access,
    commit,
    branchName: null,
    downloads: (content, commitId) => downloadLinks(ctx, access.document.id, commitId, content),
  });
  // Judged as `log` on the default branch judges it, so no face shows more than another.
  const head = await branchHeadTree(ctx.db, access.document, access.document.defaultBranch);
  const hidden = await hiddenCommitIds(ctx.db, access, graph, [commit], head);
  const [summary] = await summarizeCommits(ctx.db, [commit], hidden);
  return { ...view, commit: summary! };
}

/**
 * Restores the document state of a commit. A commit whose message the caller
 * may not see (it touched a section hidden from them) reads as not found: they
 * cannot see what the revert would bring back.
 */
function revert(ctx: ActionContext, input: ActionInput<"revert">) {
  return writeBranch(ctx, input, "edit", async ({ tree, document, loadSections }, tx, access) => {
    const graph = new CommitGraph(tx, document.id);
    const target = await graph.get(input.commitId);
    if ((await hiddenCommitIds(tx, access, graph, [target], tree)).has(target.id)) {
      throw notFound("Commit", input.commitId, "Use `documents` action `log` to list this document's commits.");
    }
    const restored = await loadTree(tx, target.treeHash);
    await assertSectionChangesAllowed(access, tree, restored, loadSections, "revert to that commit");
    const [quotable] = await quotableMessages(tx, graph, [target], [tree, restored]);
    return { tree: restored, message: revertCommitMessage(target.id, quotable ?? null), kind: "revert", result: {} };
  });
}

async function createTag(ctx: ActionContext, input: ActionInput<"create_tag">) {
  requireFullMember(ctx.actor, "create tags");
  const tag = await insertTag(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    path: input.tagPath,
    displayName: input.tagDisplayName ?? null,
    description: input.tagDescription ?? null,
    color: input.tagColor ?? null,
    createdBy: ctx.actor.userId,
    now: ctx.clock(),
  });
  return { tagId: tag.id, tagPath: tag.path, tagDisplayName: tag.displayName, tagDescription: tag.description, tagColor: tag.color };
}

function changeTag(ctx: ActionContext, input: ActionInput<"assign_tag"> | ActionInput<"remove_tag">) {
  return writeBranch(ctx, input, "edit", async ({ tree, document }, tx) => {
    assertNotDeleted(tree, input.branchName);
    const [tag] = await getTags(tx, document.workspaceId, [input.tagId]);
    if (!tag) throw notFound("Tag", input.tagId, "Create it with `create_tag` first.");
    const has = tree.tagIds.includes(tag.id);
    if (input.action === "assign_tag") {
      return {
        tree: { ...tree, tagIds: has ? tree.tagIds : [...tree.tagIds, tag.id] },
        message: `Add tag ${quoteForMessage(tag.path)}`,
        result: {},
      };
    }
    if (!has) {
      throw notFound("Tag", input.tagId, `That tag is not assigned to this document on branch ${JSON.stringify(input.branchName)}.`);
    }
    return {
      tree: { ...tree, tagIds: tree.tagIds.filter((id) => id !== tag.id) },
      message: `Remove tag ${quoteForMessage(tag.path)}`,
      result: {},
    };
  });
}

function setProperty(ctx: ActionContext, input: ActionInput<"set_property">) {
  return writeBranch(ctx, input, "edit", async ({ tree }) => {
    assertNotDeleted(tree, input.branchName);
    const properties = { ...tree.properties };
    if (input.value === null) delete properties[input.columnId];
    else properties[input.columnId] = input.value;
    const message =
      input.value === null
        ? `Unset property ${input.columnId}`
        : `Set property ${input.columnId} to ${quoteForMessage(String(input.value))}`;
    return { tree: { ...tree, properties }, message, result: {} };
  });
}

async function permissionsView(tx: Tx, workspaceId: string, documentId: string) {
  const document = await getDocument(tx, workspaceId, documentId);
  const grants = await listGrants(tx, documentId);
  const names = await userNames(
    tx,
    grants.map((g) => g.userId),
  );
  return {
    documentId,
    defaultPermission: document.defaultPermission,
    aiAccess: document.aiAccess,
    grants: grants.map((g) => ({ userId: g.userId, name: names.get(g.userId) ?? null, permission: g.permission })),
  };
}

async function getPermissions(ctx: ActionContext, input: ActionInput<"get_permissions">) {
  await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  return permissionsView(ctx.db, ctx.actor.workspaceId, input.documentId);
}

function setPermissions(ctx: ActionContext, input: ActionInput<"set_permissions">) {
  return ctx.db.transaction(async (tx) => {
    await openDocument(tx, ctx.actor, input.documentId, "manage");
    const grants = input.grants ?? [];
    const strangers = await nonMembers(
      tx,
      ctx.actor.workspaceId,
      grants.map((g) => g.userId),
    );
    if (strangers.length > 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `grants name users who are not workspace members: ${strangers.join(", ")}. Find members with the \`members\` tool.`,
        {
          issues: [{ path: "grants", message: "not a workspace member" }],
          userIds: strangers,
        },
      );
    }
    await setDocumentPermissions(tx, input.documentId, { defaultPermission: input.defaultPermission, aiAccess: input.aiAccess });
    for (const grant of grants) {
      await setGrant(tx, {
        documentId: input.documentId,
        userId: grant.userId,
        permission: grant.permission,
        grantedBy: ctx.actor.userId,
        now: ctx.clock(),
      });
    }
    return permissionsView(tx, ctx.actor.workspaceId, input.documentId);
  });
}

const presentShareLink = (link: ShareLinkRow) => ({
  shareLinkId: link.id,
  documentId: link.documentId,
  permission: link.permission,
  createdAt: link.createdAt.toISOString(),
  expiresAt: link.expiresAt?.toISOString() ?? null,
  revokedAt: link.revokedAt?.toISOString() ?? null,
});

async function createShareLink(ctx: ActionContext, input: ActionInput<"create_share_link">) {
  const { document } = await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  const token = newSecretToken();
  const now = ctx.clock();
  const link = await insertShareLink(ctx.db, {
    workspaceId: document.workspaceId,
    documentId: document.id,
    tokenHash: hashSecretToken(token),
    permission: input.permission,
    createdBy: ctx.actor.userId,
    createdAt: now,
    expiresAt: input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : null,
  });
  return { ...presentShareLink(link), path: `/share/${token}` };
}

async function listShareLinksAction(ctx: ActionContext, input: ActionInput<"list_share_links">) {
  await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  return { shareLinks: (await listShareLinks(ctx.db, input.documentId)).map(presentShareLink) };
}

async function revokeShareLinkAction(ctx: ActionContext, input: ActionInput<"revoke_share_link">) {
  await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  const link = await revokeShareLink(ctx.db, input.documentId, input.shareLinkId, ctx.clock());
  if (!link)
    throw notFound(
      "Share link",
      input.shareLinkId,
      "It does not exist on this document or is already revoked; `list_share_links` shows the links.",
    );
  return presentShareLink(link);
}

/** The result type of each `documents` action. */
export interface DocumentsResults {
  create: Awaited<ReturnType<typeof create>>;
  list: Awaited<ReturnType<typeof list>>;
  get: Awaited<ReturnType<typeof get>>;
  update: WriteResult;
  delete: WriteResult;
  create_branch: Awaited<ReturnType<typeof createBranchAction>>;
  list_branches: Awaited<ReturnType<typeof listBranchesAction>>;
  log: Awaited<ReturnType<typeof log>>;
  show: Awaited<ReturnType<typeof show>>;
  revert: WriteResult;
  create_tag: Awaited<ReturnType<typeof createTag>>;
  assign_tag: WriteResult;
  remove_tag: WriteResult;
  set_property: WriteResult;
  get_permissions: Awaited<ReturnType<typeof permissionsView>>;
  set_permissions: Awaited<ReturnType<typeof permissionsView>>;
  create_share_link: Awaited<ReturnType<typeof createShareLink>>;
  list_share_links: Awaited<ReturnType<typeof listShareLinksAction>>;
  revoke_share_link: ReturnType<typeof presentShareLink>;
}

export const documentsTool = defineTool({
  name: "documents",
  description: [
    "Create and manage documents, their branches, history, tags and properties. Choose the operation with `action`:",
    '- create {path, name?, description?, sections?: [{name, content}]} -> documentId, branchName "main", commitId, sectionIds. Paths are unique among live documents (PATH_TAKEN).',
    "- list {pathPrefix?, limit?, cursor?} -> {documents, nextCursor}, ordered by path. get {documentId}.",
    "- update {documentId, branchName, newPath?, newName?, newDescription?} commits on that branch.",
    "- delete {documentId, branchName}: only on a non-default branch; the deletion reaches main when that branch is merged.",
    "- create_branch {documentId, branchName, sourceBranch?}; list_branches {documentId}.",
    "- log {documentId, branchName?, limit?, cursor?} -> {commits: [{commitId, message, authorId, authorName, createdAt, parentIds, kind}], nextCursor}, newest first.",
    "- show {documentId, commitId}: the document at that commit. revert {documentId, branchName, commitId}: a new commit restoring that state (history is kept).",
    "- create_tag {tagPath, tagDisplayName?, tagDescription?, tagColor?} -> tagId; assign_tag / remove_tag {documentId, branchName, tagId}.",
    "- set_property {documentId, branchName, columnId, value: string|number|boolean|null (null unsets)}.",
    "- get_permissions / set_permissions {documentId, defaultPermission?, aiAccess?, grants?: [{userId, permission | null}]}: the team default, the AI limit and per-user grants (the document's creator and workspace owners/admins, signed in: never with an API token, which acts as an agent).",
    '- create_share_link {documentId, permission: read | edit, expiresInDays?} -> {shareLinkId, path: "/share/<token>"} (the token is shown once); list_share_links; revoke_share_link {documentId, shareLinkId} (same people, signed in).',
    "Writes return {documentId, branchName, commitId, changed}; `changed` is false (and no commit is made) when the write changes nothing. Every write accepts an optional commitMessage (max 1000 characters); otherwise one is generated.",
  ].join("\n"),
  input: documentsInput,
  readOnly: false,
  run(ctx, input): Promise<DocumentsResults[keyof DocumentsResults]> {
    switch (input.action) {
      case "create":
        return create(ctx, input);
      case "list":
        return list(ctx, input);
      case "get":
        return get(ctx, input);
      case "update":
        return update(ctx, input);
      case "delete":
        return deleteDocument(ctx, input);
      case "create_branch":
        return createBranchAction(ctx, input);
      case "list_branches":
        return listBranchesAction(ctx, input);
      case "log":
        return log(ctx, input);
      case "show":
        return show(ctx, input);
      case "revert":
        return revert(ctx, input);
      case "create_tag":
        return createTag(ctx, input);
      case "assign_tag":
      case "remove_tag":
        return changeTag(ctx, input);
      case "set_property":
        return setProperty(ctx, input);
      case "get_permissions":
        return getPermissions(ctx, input);
      case "set_permissions":
        return setPermissions(ctx, input);
      case "create_share_link":
        return createShareLink(ctx, input);
      case "list_share_links":
        return listShareLinksAction(ctx, input);
      case "revoke_share_link":
        return revokeShareLinkAction(ctx, input);
    }
  },
});
