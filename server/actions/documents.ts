/**
 * The `documents` tool: create, list and inspect documents, and change their
 * path, name, description or deletion. Its other actions live with their
 * subjects: branches.ts, history.ts (log, show, revert), tags-and-properties.ts,
 * permissions.ts and share-links.ts. Every write is a commit.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { contentSchema } from "@/server/core/blocks";
import { newSectionVersion, type SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { descriptionSchema, documentNameSchema, documentPathSchema, nameFromPath, quoteForMessage } from "@/server/core/names";
import { insertComments } from "@/server/store/comments";
import { createDocument } from "@/server/store/commit-to-branch";
import {
  assertPathFree,
  type DocumentListPosition,
  type DocumentRow,
  getBranch,
  type ListedDocument,
  listDocuments,
} from "@/server/store/documents";
import { openDocument, requireFullMember, type ListedDocumentFacts, readableAmong } from "@/server/access/documents";
import { assertNotDeleted, writeBranch } from "./branch-write";
import { branchActionInputs, branchHandlers } from "./branches";
import { draftActionInputs, draftHandlers } from "./drafts";
import { managementActionInputs, managementHandlers } from "./document-management";
import type { ActionContext } from "./context";
import { commitMessageField, documentIdField, writeBranchField } from "./document-fields";
import { historyActionInputs, historyHandlers } from "./history";
import { undoActionInputs, undoHandlers } from "./undo";
import { permissionActionInputs, permissionHandlers } from "./permissions";
import { prepareSectionContent } from "./section-content";
import { shareLinkActionInputs, shareLinkHandlers } from "./share-links";
import { tagAndPropertyActionInputs, tagAndPropertyHandlers } from "./tags-and-properties";
import {
  cursorSchema,
  DEFAULT_PAGE_SIZE,
  decodeCursor,
  defineTool,
  encodeCursor,
  pageLimitSchema,
  type ToolResults,
  visiblePage,
} from "./tool";

const sectionSpecsField = z
  .array(
    z.strictObject({
      name: documentNameSchema.describe("Section name, rendered as the section's H2 heading."),
      content: contentSchema,
    }),
  )
  .max(2_000)
  .describe("Initial sections, in order: [{ name, content: blocks }].");

const createInput = z.strictObject({
  action: z.literal("create"),
  path: documentPathSchema,
  name: documentNameSchema.optional().describe("Display name; default: the last path segment."),
  description: descriptionSchema.optional().describe("Short description of the document."),
  sections: sectionSpecsField.optional(),
  commitMessage: commitMessageField,
});

const listInput = z.strictObject({
  action: z.literal("list"),
  pathPrefix: z.string().max(500).optional().describe('Only documents whose path starts with this, e.g. "handbook/".'),
  search: z
    .string()
    .trim()
    .min(1, "search must not be empty")
    .max(200)
    .optional()
    .describe("Only documents whose name or path contains this text (case-insensitive)."),
  orderBy: z
    .enum(["path", "updated"])
    .optional()
    .describe('"path" (default): alphabetical by path; "updated": most recently changed first (a change is a move of the default branch).'),
  limit: pageLimitSchema,
  cursor: cursorSchema,
});

const getInput = z.strictObject({ action: z.literal("get"), documentId: documentIdField });

const updateInput = z.strictObject({
  action: z.literal("update"),
  documentId: documentIdField,
  branchName: writeBranchField,
  newPath: documentPathSchema.optional().describe("New path (must stay unique among live documents)."),
  newName: documentNameSchema.optional().describe("New display name."),
  newDescription: descriptionSchema.nullable().optional().describe("New description; null clears it."),
  commitMessage: commitMessageField,
});

const deleteInput = z.strictObject({
  action: z.literal("delete"),
  documentId: documentIdField,
  branchName: writeBranchField.describe("A non-default branch; the deletion reaches main through a merge request."),
  commitMessage: commitMessageField,
});

export const documentsInput = z.discriminatedUnion("action", [
  createInput,
  listInput,
  getInput,
  updateInput,
  deleteInput,
  ...managementActionInputs,
  ...branchActionInputs,
  ...draftActionInputs,
  ...historyActionInputs,
  ...undoActionInputs,
  ...tagAndPropertyActionInputs,
  ...permissionActionInputs,
  ...shareLinkActionInputs,
]);

/** `updatedAt` is when the default branch last moved: the document's last change. */
const summarize = (d: DocumentRow, updatedAt: Date) => ({
  documentId: d.id,
  path: d.path,
  name: d.name,
  description: d.description,
  defaultBranch: d.defaultBranch,
  createdAt: d.createdAt.toISOString(),
  updatedAt: updatedAt.toISOString(),
});

async function create(ctx: ActionContext, input: z.output<typeof createInput>) {
  requireFullMember(ctx.actor, "create documents");
  return ctx.db.transaction(async (tx) => {
    const { document, commit, tree } = await createDocument(
      tx,
      {
        documentId: randomUUID(),
        workspaceId: ctx.actor.workspaceId,
        authorId: ctx.actor.userId,
        agent: ctx.actor.agent,
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

const listCursor = z.union([
  z.object({ afterPath: z.string() }).transform(({ afterPath }) => ({ path: afterPath })),
  z
    .object({ afterUpdatedAt: z.iso.datetime(), afterId: z.guid() })
    .transform(({ afterUpdatedAt, afterId }) => ({ updatedAt: new Date(afterUpdatedAt), documentId: afterId })),
]);

const encodeListCursor = (position: DocumentListPosition) =>
  encodeCursor(
    "path" in position ? { afterPath: position.path } : { afterUpdatedAt: position.updatedAt.toISOString(), afterId: position.documentId },
  );

async function list(ctx: ActionContext, input: z.output<typeof listInput>) {
  const order = input.orderBy ?? "path";
  let readable: (row: ListedDocumentFacts) => boolean = () => false;
  const page = await visiblePage<ListedDocument, DocumentListPosition>({
    limit: input.limit ?? DEFAULT_PAGE_SIZE,
    start: input.cursor ? decodeCursor(input.cursor, listCursor) : undefined,
    fetch: async (after, batchSize) => {
      const rows = await listDocuments(ctx.db, {
        workspaceId: ctx.actor.workspaceId,
        pathPrefix: input.pathPrefix?.replace(/^\/+/, ""),
        search: input.search,
        order,
        after,
        limit: batchSize,
      });
      readable = await readableAmong(ctx.db, ctx.actor, rows);
      return rows;
    },
    // Documents the caller may not see are left out.
    visible: (row) => readable(row),
    position: (row) => (order === "path" ? { path: row.path } : { updatedAt: row.headUpdatedAt, documentId: row.id }),
  });
  return {
    documents: page.rows.map((row) => summarize(row, row.headUpdatedAt)),
    nextCursor: page.next === null ? null : encodeListCursor(page.next),
  };
}

async function get(ctx: ActionContext, input: z.output<typeof getInput>) {
  const { document, permission, canManage } = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const branch = await getBranch(ctx.db, document.id, document.defaultBranch);
  const draft = (await ctx.live.statuses(document.id))(document.defaultBranch);
  return {
    ...summarize(document, branch.updatedAt),
    headCommitId: branch.headCommitId,
    deleted: document.deleted,
    requiredApprovals: document.requiredApprovals,
    yourPermission: permission,
    canManage,
    draft,
  };
}

function update(ctx: ActionContext, input: z.output<typeof updateInput>) {
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

function deleteDocument(ctx: ActionContext, input: z.output<typeof deleteInput>) {
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

/** A document as `list` and `create` present it. */
export type DocumentSummary = ReturnType<typeof summarize>;

export const documentsTool = defineTool({
  name: "documents",
  description: [
    "Create and manage documents, their branches, history, tags and properties. Choose the operation with `action`:",
    '- create {path, name?, description?, sections?: [{name, content}]} -> documentId, branchName "main", commitId, sectionIds. Paths are unique among live documents (PATH_TAKEN).',
    "- list {pathPrefix?, search?, orderBy?: path | updated, limit?, cursor?} -> {documents, nextCursor}: by path, or most recently changed first; search matches name or path. get {documentId}.",
    "- update {documentId, branchName, newPath?, newName?, newDescription?} commits on that branch.",
    "- delete {documentId, branchName}: only on a non-default branch; the deletion reaches main when that branch is merged.",
    "- list_deleted {pathPrefix?, limit?, cursor?} -> {deletedDocuments: [{documentId, path, name, deletedAt, deletedBy, requiredApprovals, ...}], nextCursor}: documents deleted on their default branch, newest first. restore {documentId, branchName, newPath?}: a commit undeleting it (allowed directly on an unprotected default branch: it loses nothing); PATH_TAKEN when a live document took its path (give newPath).",
    "- delete_branch {documentId, branchName, discardDraft?}: needs edit; never the default branch (DEFAULT_BRANCH_PROTECTED) nor a branch of an open merge request (BRANCH_IN_USE); uncommitted live edits need discardDraft: true (UNCOMMITTED_DRAFT). Its commits stay in history; open editors are disconnected.",
    "- create_branch {documentId, branchName, sourceBranch?}; list_branches {documentId}. get and list_branches say per branch `draft: {uncommittedChanges, editorIds, connectedUserIds}` (live editing; editorIds: who edited since the last commit or discard).",
    "- commit {documentId, branchName, commitMessage?}: the branch's draft (everyone's live edits since its head) becomes one commit, authored by you, crediting the other editors with Co-authored-by lines; `changed: false` when the draft holds nothing. BRANCH_MOVED if the head moved meanwhile (commit again). discard {documentId, branchName}: resets the draft to the head for every open editor. draft_status {documentId, branchName} -> {headCommitId, uncommittedChanges, editors: [{userId, name}], connected: [{userId, name}], changedSections: [{sectionId, name}]} (only sections you may see).",
    "- log {documentId, branchName?, limit?, cursor?} -> {commits: [{commitId, message, authorId, authorName, agentName, madeBy (e.g. 'Claude via Olivia Owner'), createdAt, parentIds, kind}], nextCursor}, newest first.",
    "- show {documentId, commitId}: the document at that commit, plus `changes` against its first parent: [{sectionId, name, status: added | deleted | modified | moved, diff (unified), moved}]. revert {documentId, branchName, commitId, expectedHeadCommitId?}: a new commit restoring that state (history is kept); with the head you saw, BRANCH_MOVED instead once the branch moved. undo {documentId, branchName, expectedHeadCommitId}: takes back the branch's newest commit (a revert to its parent), only while it is still the head (BRANCH_MOVED otherwise).",
    "- create_tag {tagPath, tagDisplayName?, tagDescription?, tagColor?} -> tagId; assign_tag / remove_tag {documentId, branchName, tagId}.",
    "- set_property {documentId, branchName, columnId, value: string|number|boolean|null (null unsets)}.",
    "- get_permissions / set_permissions {documentId, defaultPermission?, aiAccess?, grants?: [{userId, permission | null}]}: the team default, the AI limit and per-user grants (the document's creator and workspace owners/admins, signed in: never with an API token, which acts as an agent).",
    '- create_share_link {documentId, permission: read | edit, expiresInDays?} -> {shareLinkId, path: "/share/<token>"} (the token is shown once); list_share_links; revoke_share_link {documentId, shareLinkId} (same people, signed in).',
    "Writes return {documentId, branchName, commitId, changed}; `changed` is false (and no commit is made) when the write changes nothing. Every write accepts an optional commitMessage (max 1000 characters); otherwise one is generated.",
    "Protected default branch: when the document requires approvals (requiredApprovals above 0, see `merge_requests`), every direct write to its default branch — update, delete, revert, assign_tag, remove_tag, set_property, commit of the live draft, and every `sections` write — is refused with DEFAULT_BRANCH_PROTECTED and changes nothing (the draft stays); changes reach it only through a merge request. Write on another branch (create_branch) and open one. An API token acts as an agent and never changes access: a revert that would change a section's defaultPermission or aiAccess is refused (PERMISSION_DENIED).",
  ].join("\n"),
  input: documentsInput,
  readOnly: false,
  handlers: {
    create,
    list,
    get,
    update,
    delete: deleteDocument,
    ...managementHandlers,
    ...branchHandlers,
    ...draftHandlers,
    ...historyHandlers,
    ...undoHandlers,
    ...tagAndPropertyHandlers,
    ...permissionHandlers,
    ...shareLinkHandlers,
  },
});

export type DocumentsResults = ToolResults<typeof documentsTool>;
