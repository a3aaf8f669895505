/**
 * The `documents` tool: create, list and inspect documents; branches; history
 * (log, show, revert); tags and scalar properties. Every write is a commit.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { contentSchema } from "@/server/core/blocks";
import { type DocumentTree, hashSection, newSectionVersion, type SectionVersion } from "@/server/core/document-model";
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
import { CommitGraph, type CommitRecord, walkLog } from "@/server/store/commits";
import {
  assertPathFree,
  createBranch,
  createDocument,
  type DocumentRow,
  getBranch,
  DEFAULT_BRANCH,
  getDocument,
  listBranches,
  listDocuments,
} from "@/server/store/documents";
import { loadTree } from "@/server/store/objects";
import { getTags, insertTag } from "@/server/store/tags";
import { userNames } from "@/server/store/users";
import { assertNotDeleted, type WriteResult, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { prepareSectionContent } from "./section-content";
import { type DocumentView, documentView } from "./read";
import { cursorSchema, decodeCursor, defineTool, encodeCursor, pageLimitSchema, uuidSchema } from "./tool";

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

const summarize = (d: DocumentRow): DocumentSummary => ({
  documentId: d.id,
  path: d.path,
  name: d.name,
  description: d.description,
  defaultBranch: d.defaultBranch,
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

async function create(ctx: ActionContext, input: ActionInput<"create">) {
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
          const target = { documentId: created.id, branchName: created.defaultBranch, sectionId, name: spec.name, where: `sections[${index}]` };
          const content = await prepareSectionContent(ctx, tx, target, spec.content);
          sections.push({ sectionId, version: newSectionVersion(spec.name, content) });
        }
        return sections;
      },
    );
    return {
      ...summarize(document),
      branchName: document.defaultBranch,
      commitId: commit.id,
      sectionIds: tree.sections.map((s) => s.sectionId),
    };
  });
}

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const after = input.cursor ? decodeCursor(input.cursor, z.object({ afterPath: z.string() })).afterPath : undefined;
  const rows = await listDocuments(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    pathPrefix: input.pathPrefix?.replace(/^\/+/, ""),
    afterPath: after,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  return {
    documents: page.map(summarize),
    nextCursor: hasMore ? encodeCursor({ afterPath: page[page.length - 1]!.path }) : null,
  };
}

async function get(ctx: ActionContext, input: ActionInput<"get">) {
  const document = await getDocument(ctx.db, ctx.actor.workspaceId, input.documentId);
  const branch = await getBranch(ctx.db, document.id, document.defaultBranch);
  return { ...summarize(document), headCommitId: branch.headCommitId };
}

function update(ctx: ActionContext, input: ActionInput<"update">) {
  if (input.newPath === undefined && input.newName === undefined && input.newDescription === undefined) {
    throw new DomainError("VALIDATION_FAILED", "Nothing to update: give newPath, newName and/or newDescription.", {
      issues: [{ path: "", message: "one of newPath, newName, newDescription is required" }],
    });
  }
  return writeBranch(ctx, input, async ({ tree, document }, tx) => {
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
    return { tree: next, message: summary.charAt(0).toUpperCase() + summary.slice(1) , result: {} };
  });
}

function deleteDocument(ctx: ActionContext, input: ActionInput<"delete">) {
  return writeBranch(ctx, input, async ({ tree, document }) => {
    if (input.branchName === document.defaultBranch) {
      throw new DomainError(
        "DEFAULT_BRANCH_PROTECTED",
        `A document cannot be deleted directly on its default branch ${JSON.stringify(document.defaultBranch)}. Create a branch (\`create_branch\`), delete it there, and merge that branch with a merge request so the deletion is reviewed.`,
        { branchName: input.branchName },
      );
    }
    assertNotDeleted(tree, input.branchName);
    return { tree: { ...tree, deleted: true }, message: `Delete document ${quoteForMessage(tree.path)}` , result: {} };
  });
}

async function createBranchAction(ctx: ActionContext, input: ActionInput<"create_branch">) {
  return ctx.db.transaction(async (tx) => {
    const document = await getDocument(tx, ctx.actor.workspaceId, input.documentId);
    const source = await getBranch(tx, document.id, input.sourceBranch ?? document.defaultBranch);
    const branch = await createBranch(tx, {
      documentId: document.id,
      name: input.branchName,
      headCommitId: source.headCommitId,
      authorId: ctx.actor.userId,
      now: ctx.clock(),
    });
    return { documentId: document.id, branchName: branch.name, sourceBranch: source.name, headCommitId: branch.headCommitId };
  });
}

async function listBranchesAction(ctx: ActionContext, input: ActionInput<"list_branches">) {
  const document = await getDocument(ctx.db, ctx.actor.workspaceId, input.documentId);
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

async function log(ctx: ActionContext, input: ActionInput<"log">) {
  const document = await getDocument(ctx.db, ctx.actor.workspaceId, input.documentId);
  const graph = new CommitGraph(ctx.db, document.id);
  const frontier = input.cursor
    ? decodeCursor(input.cursor, z.object({ frontier: z.array(uuidSchema).min(1).max(1_000) })).frontier
    : [(await getBranch(ctx.db, document.id, input.branchName ?? document.defaultBranch)).headCommitId];
  const page = await walkLog(graph, frontier, input.limit ?? DEFAULT_PAGE_SIZE);
  const names = await userNames(ctx.db, page.commits.map((c) => c.authorId));
  const commits: CommitSummary[] = page.commits.map((c) => ({
    commitId: c.id,
    message: c.message,
    authorId: c.authorId,
    authorName: names.get(c.authorId) ?? null,
    createdAt: c.createdAt.toISOString(),
    parentIds: c.parentIds,
    kind: c.kind,
  }));
  return { commits, nextCursor: page.nextFrontier ? encodeCursor({ frontier: page.nextFrontier }) : null };
}

async function show(ctx: ActionContext, input: ActionInput<"show">): Promise<DocumentView & { commit: CommitSummary }> {
  const document = await getDocument(ctx.db, ctx.actor.workspaceId, input.documentId);
  const commit = await new CommitGraph(ctx.db, document.id).get(input.commitId);
  const view = await documentView(ctx.db, { document, commit, branchName: null });
  const names = await userNames(ctx.db, [commit.authorId]);
  return {
    ...view,
    commit: {
      commitId: commit.id,
      message: commit.message,
      authorId: commit.authorId,
      authorName: names.get(commit.authorId) ?? null,
      createdAt: commit.createdAt.toISOString(),
      parentIds: commit.parentIds,
      kind: commit.kind,
    },
  };
}

function revert(ctx: ActionContext, input: ActionInput<"revert">) {
  return writeBranch(ctx, input, async ({ document }, tx) => {
    const target = await new CommitGraph(tx, document.id).get(input.commitId);
    const restored = await loadTree(tx, target.treeHash);
    const firstLine = target.message.split("\n", 1)[0] ?? "";
    return { tree: restored, message: `Revert to ${target.id.slice(0, 8)} (${quoteForMessage(firstLine)})`, kind: "revert" , result: {} };
  });
}

async function createTag(ctx: ActionContext, input: ActionInput<"create_tag">) {
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
  return writeBranch(ctx, input, async ({ tree, document }, tx) => {
    assertNotDeleted(tree, input.branchName);
    const [tag] = await getTags(tx, document.workspaceId, [input.tagId]);
    if (!tag) throw notFound("Tag", input.tagId, "Create it with `create_tag` first.");
    const has = tree.tagIds.includes(tag.id);
    if (input.action === "assign_tag") {
      return { tree: { ...tree, tagIds: has ? tree.tagIds : [...tree.tagIds, tag.id] }, message: `Add tag ${quoteForMessage(tag.path)}` , result: {} };
    }
    if (!has) {
      throw notFound("Tag", input.tagId, `That tag is not assigned to this document on branch ${JSON.stringify(input.branchName)}.`);
    }
    return { tree: { ...tree, tagIds: tree.tagIds.filter((id) => id !== tag.id) }, message: `Remove tag ${quoteForMessage(tag.path)}` , result: {} };
  });
}

function setProperty(ctx: ActionContext, input: ActionInput<"set_property">) {
  return writeBranch(ctx, input, async ({ tree }) => {
    assertNotDeleted(tree, input.branchName);
    const properties = { ...tree.properties };
    if (input.value === null) delete properties[input.columnId];
    else properties[input.columnId] = input.value;
    const message =
      input.value === null
        ? `Unset property ${input.columnId}`
        : `Set property ${input.columnId} to ${quoteForMessage(String(input.value))}`;
    return { tree: { ...tree, properties }, message , result: {} };
  });
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
}

export const documentsTool = defineTool({
  name: "documents",
  description: [
    "Create and manage documents, their branches, history, tags and properties. Choose the operation with `action`:",
    "- create {path, name?, description?, sections?: [{name, content}]} -> documentId, branchName \"main\", commitId, sectionIds. Paths are unique among live documents (PATH_TAKEN).",
    "- list {pathPrefix?, limit?, cursor?} -> {documents, nextCursor}, ordered by path. get {documentId}.",
    "- update {documentId, branchName, newPath?, newName?, newDescription?} commits on that branch.",
    "- delete {documentId, branchName}: only on a non-default branch; the deletion reaches main when that branch is merged.",
    "- create_branch {documentId, branchName, sourceBranch?}; list_branches {documentId}.",
    "- log {documentId, branchName?, limit?, cursor?} -> {commits: [{commitId, message, authorId, authorName, createdAt, parentIds, kind}], nextCursor}, newest first.",
    "- show {documentId, commitId}: the document at that commit. revert {documentId, branchName, commitId}: a new commit restoring that state (history is kept).",
    "- create_tag {tagPath, tagDisplayName?, tagDescription?, tagColor?} -> tagId; assign_tag / remove_tag {documentId, branchName, tagId}.",
    "- set_property {documentId, branchName, columnId, value: string|number|boolean|null (null unsets)}.",
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
    }
  },
});
