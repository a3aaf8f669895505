/** The `documents` actions on tags (workspace-wide labels, assigned per branch) and scalar properties. */
import { z } from "zod";
import { quoteForMessage, tagPathSchema } from "@/server/core/names";
import { notFound } from "@/server/core/errors";
import { getTags, insertTag } from "@/server/store/tags";
import { requireFullMember } from "@/server/access/documents";
import { assertNotDeleted, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { commitMessageField, documentIdField, writeBranchField } from "./document-fields";
import { uuidSchema } from "./tool";
import { patternSaidInWords } from "@/server/core/schema-listing";

const tagIdField = uuidSchema.describe("From `create_tag`.");

const createTagInput = z.strictObject({
  action: z.literal("create_tag"),
  tagPath: tagPathSchema,
  tagDisplayName: z.string().trim().min(1).max(200).optional().describe("Default: its path."),
  tagDescription: z.string().max(2_000).optional().describe("What the tag means."),
  tagColor: patternSaidInWords(z.string().regex(/^#[0-9a-fA-F]{6}$/, "tagColor must be a hex colour like #3366ff"))
    .optional()
    .describe("Hex colour, e.g. #3366ff."),
});

const assignTagInput = z.strictObject({
  action: z.literal("assign_tag"),
  documentId: documentIdField,
  branchName: writeBranchField,
  tagId: tagIdField,
  commitMessage: commitMessageField,
});

const removeTagInput = z.strictObject({
  action: z.literal("remove_tag"),
  documentId: documentIdField,
  branchName: writeBranchField,
  tagId: tagIdField,
  commitMessage: commitMessageField,
});

const setPropertyInput = z.strictObject({
  action: z.literal("set_property"),
  documentId: documentIdField,
  branchName: writeBranchField,
  columnId: uuidSchema.describe("The property column."),
  value: z.union([z.string().max(10_000), z.number().finite(), z.boolean(), z.null()]).describe("null unsets it."),
  commitMessage: commitMessageField,
});

/** The input schemas of these actions, in the order agents read them. */
export const tagAndPropertyActionInputs = [createTagInput, assignTagInput, removeTagInput, setPropertyInput] as const;

async function createTag(ctx: ActionContext, input: z.output<typeof createTagInput>) {
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

function changeTag(ctx: ActionContext, input: z.output<typeof assignTagInput> | z.output<typeof removeTagInput>) {
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

function setProperty(ctx: ActionContext, input: z.output<typeof setPropertyInput>) {
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

export const tagAndPropertyHandlers = { create_tag: createTag, assign_tag: changeTag, remove_tag: changeTag, set_property: setProperty };
