/**
 * The section a `sections` action writes, shared by its actions: the input
 * fields that name the document, branch and section (and the commit), and
 * the section loaded from the branch being written, refused as missing when
 * the caller may not see it.
 */
import type { DocumentTree } from "@/server/core/document-model";
import { notFound } from "@/server/core/errors";
import { branchNameSchema, commitMessageSchema } from "@/server/core/names";
import type { Tx } from "@/server/store/db";
import type { BranchState } from "@/server/store/group-commit";
import { type DocumentAccess, requireSection, sectionRules } from "@/server/access/documents";
import { uuidSchema } from "./tool";
import { passedBack } from "@/server/core/schema-listing";

/** Fields every `sections` action that writes a branch takes. */
export const sectionWriteFields = {
  documentId: uuidSchema,
  branchName: passedBack(branchNameSchema).describe("The branch."),
  sectionId: uuidSchema,
  commitMessage: commitMessageSchema.optional(),
};

/** Loads a section the caller names, checking they may `need` it (hidden sections read as missing). */
export async function loadSection(tx: Tx, state: BranchState, access: DocumentAccess, sectionId: string, need: "read" | "edit") {
  const entry = state.tree.sections.find((e) => e.sectionId === sectionId);
  if (!entry) {
    throw notFound(
      "Section",
      sectionId,
      `It is not in this document on branch ${JSON.stringify(state.branch.name)}; \`read\` lists its sections.`,
    );
  }
  const version = (await state.loadSections([entry.blobHash])).get(entry.blobHash)!;
  requireSection(await sectionRules(tx, access, state.branch.name), sectionId, [version], need, state.branch.name);
  return { ...entry, version };
}

/** The tree with another list of sections. */
export function withSections(tree: DocumentTree, sections: DocumentTree["sections"]): DocumentTree {
  return { ...tree, sections };
}

/** The tree with one section at another version, in its place. */
export function withSectionVersion(tree: DocumentTree, sectionId: string, blobHash: string): DocumentTree {
  return withSections(
    tree,
    tree.sections.map((e) => (e.sectionId === sectionId ? { ...e, blobHash } : e)),
  );
}
