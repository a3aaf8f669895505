/**
 * The `sections` actions on references (links from a section to another
 * document or one of its sections): add_reference and remove_reference, each
 * one commit like every other section write.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { hashSection, type SectionVersion } from "@/server/core/document-model";
import { notFound } from "@/server/core/errors";
import { quoteForMessage } from "@/server/core/names";
import { CommitGraph } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
import { openDocument, requireSection, sectionRules } from "@/server/access/documents";
import { assertNotDeleted, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { loadSection, sectionWriteFields, withSectionVersion } from "./section-target";
import { uuidSchema } from "./tool";

const addReferenceInput = z.strictObject({
  action: z.literal("add_reference"),
  documentId: sectionWriteFields.documentId,
  branchName: sectionWriteFields.branchName,
  sectionId: sectionWriteFields.sectionId,
  targetDocumentId: uuidSchema.describe("Target document."),
  targetSectionId: uuidSchema.nullable().optional().describe("Default: the whole document."),
  displayTitle: z.string().trim().min(1).max(300).nullable().optional().describe("Link text; null: the title."),
  commitMessage: sectionWriteFields.commitMessage,
});

const removeReferenceInput = z.strictObject({
  action: z.literal("remove_reference"),
  documentId: sectionWriteFields.documentId,
  branchName: sectionWriteFields.branchName,
  referenceId: uuidSchema.describe("Reference to remove."),
  commitMessage: sectionWriteFields.commitMessage,
});

/** The input schemas of these actions, in the order agents read them. */
export const referenceActionInputs = [addReferenceInput, removeReferenceInput] as const;

/** Checks the target of a reference exists in the caller's workspace (and, if named, its section on the default branch). */
async function assertReferenceTarget(ctx: ActionContext, tx: Tx, targetDocumentId: string, targetSectionId: string | null) {
  const target = await openDocument(tx, ctx.actor, targetDocumentId, "read");
  if (targetSectionId === null) return;
  const head = await getBranch(tx, target.document.id, target.document.defaultBranch);
  const commit = await new CommitGraph(tx, target.document.id).get(head.headCommitId);
  const tree = await loadTree(tx, commit.treeHash);
  const entry = tree.sections.find((s) => s.sectionId === targetSectionId);
  const version = entry ? (await loadSections(tx, [entry.blobHash])).get(entry.blobHash) : undefined;
  if (!version || (await sectionRules(tx, target, target.document.defaultBranch)).permission(targetSectionId, version) === "none") {
    throw notFound("Section", targetSectionId, `It is not a section of document ${targetDocumentId} on its default branch.`);
  }
}

function addReference(ctx: ActionContext, input: z.output<typeof addReferenceInput>) {
  return writeBranch(ctx, input, "read", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const section = await loadSection(tx, state, access, input.sectionId, "edit");
    const targetSectionId = input.targetSectionId ?? null;
    await assertReferenceTarget(ctx, tx, input.targetDocumentId, targetSectionId);
    const referenceId = randomUUID();
    const version: SectionVersion = {
      ...section.version,
      references: [
        ...section.version.references,
        { referenceId, targetDocumentId: input.targetDocumentId, targetSectionId, displayTitle: input.displayTitle ?? null },
      ],
    };
    const contentHash = hashSection(version);
    return {
      tree: withSectionVersion(state.tree, section.sectionId, contentHash),
      newSections: [version],
      message: `Add reference from section ${quoteForMessage(section.version.name)}`,
      result: { sectionId: section.sectionId, referenceId, contentHash },
    };
  });
}

function removeReference(ctx: ActionContext, input: z.output<typeof removeReferenceInput>) {
  return writeBranch(ctx, input, "read", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const rules = await sectionRules(tx, access, state.branch.name);
    const versions = await state.loadSections(state.tree.sections.map((e) => e.blobHash));
    const holder = state.tree.sections.find((e) => {
      const version = versions.get(e.blobHash)!;
      return rules.permission(e.sectionId, version) !== "none" && version.references.some((r) => r.referenceId === input.referenceId);
    });
    if (!holder) {
      throw notFound(
        "Reference",
        input.referenceId,
        `No section of this document on branch ${JSON.stringify(input.branchName)} has it; \`read\` lists references per section.`,
      );
    }
    const before = versions.get(holder.blobHash)!;
    requireSection(rules, holder.sectionId, [before], "edit", input.branchName);
    const version: SectionVersion = { ...before, references: before.references.filter((r) => r.referenceId !== input.referenceId) };
    const contentHash = hashSection(version);
    return {
      tree: withSectionVersion(state.tree, holder.sectionId, contentHash),
      newSections: [version],
      message: `Remove reference from section ${quoteForMessage(before.name)}`,
      result: { sectionId: holder.sectionId, referenceId: input.referenceId, contentHash },
    };
  });
}

export const referenceHandlers = { add_reference: addReference, remove_reference: removeReference };
