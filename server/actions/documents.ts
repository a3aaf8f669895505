/**
 * The `documents` tool: create, list and inspect documents, and change their
 * path, name, description or deletion. Its other actions live with their
 * subjects: branches.ts, history.ts (log, show, revert), tags-and-properties.ts,
 * permissions.ts and share-links.ts. Every write is a commit.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { contentSchema } from "@/server/core/blocks";
import { shownElsewhere } from "@/server/core/schema-listing";
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
      name: documentNameSchema.describe("Section name (its H2 heading)."),
      content: shownElsewhere(contentSchema, "Content blocks, as `sections` takes them."),
    }),
  )
  .max(2_000)
  .describe("Initial sections, in order.");

const createInput = z.strictObject({
  action: z.literal("create"),
  path: documentPathSchema,
  name: documentNameSchema.optional().describe("Default: the last path segment."),
  description: descriptionSchema.optional().describe("Short description."),
  sections: sectionSpecsField.optional(),
  commitMessage: commitMessageField,
});

const listInput = z.strictObject({
  action: z.literal("list"),
  pathPrefix: z.string().max(500).optional().describe('Path prefix, e.g. "handbook/".'),
  search: z.string().trim().min(1, "search must not be empty").max(200).optional().describe("Text in the name or path."),
  orderBy: z.enum(["path", "updated"]).optional().describe("Default: path; updated: newest change first."),
  limit: pageLimitSchema,
  cursor: cursorSchema,
});

const getInput = z.strictObject({ action: z.literal("get"), documentId: documentIdField });

const updateInput = z.strictObject({
  action: z.literal("update"),
  documentId: documentIdField,
  branchName: writeBranchField,
  newPath: documentPathSchema.optional().describe("New path."),
  newName: documentNameSchema.optional().describe("New display name."),
  newDescription: descriptionSchema.nullable().optional().describe("null clears it."),
  commitMessage: commitMessageField,
});

const deleteInput = z.strictObject({
  action: z.literal("delete"),
  documentId: documentIdField,
  branchName: writeBranchField.describe("The branch."),
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
  // What an agent needs before calling; what to do after a refusal its error's message says (the codes are not listed again here).
  description: [
    "Documents, branches, history, tags, properties, permissions and share links, by `action`:",
    "- create: one commit on main. delete: on a non-default branch, then merged.",
    "- commit: everyone's uncommitted live edits as one commit; discard drops them.",
    "- show: a commit and its changes; revert: a new commit restoring a state; undo: takes back the head commit.",
    "- Permissions and share links: the creator and workspace admins, signed in.",
    "With requiredApprovals above 0 the default branch takes no direct write: write on a branch, open a merge request. Agents (API tokens) never change access.",
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
