/**
 * The `sections` tool (spec §2, §4.1): create, batch_create, update, delete
 * and reorder here; move in section-moves.ts; add_reference and
 * remove_reference in section-references.ts. Each call is one transaction and one commit on
 * `branchName`; the branch row lock makes concurrent calls on a branch queue
 * up, so checks such as `expectedContentHash` see the latest head.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { contentSchema } from "@/server/core/blocks";
import { hashSection, newSectionVersion, PERMISSIONS, type SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { documentNameSchema, quoteForMessage } from "@/server/core/names";
import type { BranchState } from "@/server/store/group-commit";
import type { NewCommentRow } from "@/server/store/comments";
import { accessChangeRefusal } from "@/server/policies/access";
import { refuse, sectionRules, visibleEntries } from "@/server/access/documents";
import { assertNotDeleted, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { keysVisibleOnBranch, prepareSectionContent } from "./section-content";
import { moveActionInputs, moveHandlers } from "./section-moves";
import { referenceActionInputs, referenceHandlers } from "./section-references";
import { loadSection, sectionWriteFields, withSections, withSectionVersion } from "./section-target";
import { defineTool, type ToolResults, uuidSchema } from "./tool";
import { passedBack } from "@/server/core/schema-listing";

const permission = z.enum(PERMISSIONS).nullable();

const f = {
  ...sectionWriteFields,
  name: documentNameSchema.describe("Section name (its H2 heading)."),
  expectedContentHash: passedBack(z.string().regex(/^[0-9a-f]{64}$/, "must be a contentHash as returned by `read`"))
    .optional()
    .describe("contentHash from `read`."),
  defaultPermission: permission
    .optional()
    .describe("Members' permission here (null: the document's); people only, not on the default branch."),
  aiAccess: permission.optional().describe("The most agents may do here; as defaultPermission."),
};

export const sectionsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("create"),
    documentId: f.documentId,
    branchName: f.branchName,
    name: f.name,
    content: contentSchema,
    position: z.number().int().min(0).optional().describe("0-based index; default: the end."),
    defaultPermission: f.defaultPermission,
    aiAccess: f.aiAccess,
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("batch_create"),
    documentId: f.documentId,
    branchName: f.branchName,
    sections: z
      .array(z.strictObject({ name: f.name, content: contentSchema }))
      .min(1)
      .max(2_000)
      .describe("Sections to append, in order."),
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("update"),
    documentId: f.documentId,
    branchName: f.branchName,
    sectionId: f.sectionId,
    newName: f.name.optional().describe("New section name."),
    newContent: contentSchema.optional().describe("Replaces all its blocks."),
    content: contentSchema.optional().describe("Alias of newContent."),
    expectedContentHash: f.expectedContentHash,
    defaultPermission: f.defaultPermission,
    aiAccess: f.aiAccess,
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("delete"),
    documentId: f.documentId,
    branchName: f.branchName,
    sectionId: f.sectionId,
    expectedContentHash: f.expectedContentHash,
    commitMessage: f.commitMessage,
  }),
  z.strictObject({
    action: z.literal("reorder"),
    documentId: f.documentId,
    branchName: f.branchName,
    sectionOrder: z.array(uuidSchema).max(10_000).describe("Every section id, in the new order."),
    commitMessage: f.commitMessage,
  }),
  ...moveActionInputs,
  ...referenceActionInputs,
]);

type SectionsInput = z.infer<typeof sectionsInput>;
type ActionInput<A extends SectionsInput["action"]> = Extract<SectionsInput, { action: A }>;

function assertExpectedHash(sectionId: string, current: string, expected: string | undefined): void {
  if (expected !== undefined && expected !== current) {
    throw new DomainError(
      "CONTENT_HASH_MISMATCH",
      `Section ${sectionId} changed since you read it (expected contentHash ${expected.slice(0, 12)}…, current ${current.slice(0, 12)}…). Nothing was written: \`read\` the section again, reapply your change to the current content, and retry with the new contentHash.`,
      { sectionId, expectedContentHash: expected, currentContentHash: current },
    );
  }
}

/**
 * A section's overrides are access, which agents never change: an agent that
 * names them is refused before anything is looked at, even when the value is
 * the current one, so it learns the rule rather than the branch's (writeBranch
 * refuses any other way an agent's write would change them).
 */
function refuseAgentOverrides(ctx: ActionContext, input: { defaultPermission?: unknown; aiAccess?: unknown }): void {
  if (input.defaultPermission === undefined && input.aiAccess === undefined) return;
  refuse(
    accessChangeRefusal(
      ctx.actor.principal,
      "Leave out defaultPermission and aiAccess: a person sets them, signed in, on a non-default branch, and they reach the default branch through a merge request.",
    ),
  );
}

function assertPermissionsSettable(state: BranchState, input: { defaultPermission?: unknown; aiAccess?: unknown }): void {
  if ((input.defaultPermission !== undefined || input.aiAccess !== undefined) && state.branch.name === state.document.defaultBranch) {
    throw new DomainError(
      "DEFAULT_BRANCH_PROTECTED",
      `Section permissions cannot be changed directly on the default branch ${JSON.stringify(state.document.defaultBranch)}. Change them on another branch and merge it with a merge request, so the change is reviewed.`,
      { branchName: state.branch.name },
    );
  }
}

function create(ctx: ActionContext, input: ActionInput<"create">) {
  refuseAgentOverrides(ctx, input);
  return writeBranch(ctx, input, "edit", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    assertPermissionsSettable(state, input);
    // Positions count the sections the caller can see; hidden ones keep their places.
    const visible = await visibleEntries(await sectionRules(tx, access, state.branch.name), state.tree, state.loadSections);
    const count = visible.length;
    const position = input.position ?? count;
    if (position > count) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `position ${position} is out of range: the document has ${count} section(s) on this branch, so position must be 0-${count} (or omitted to append).`,
        { issues: [{ path: "position", message: `must be between 0 and ${count}` }] },
      );
    }
    const sectionId = randomUUID();
    const { content, comments } = await prepareSectionContent(
      ctx,
      tx,
      {
        documentId: state.document.id,
        branchName: input.branchName,
        sectionId,
        name: input.name,
        where: "content",
        keysVisibleInDocument: keysVisibleOnBranch(tx, access, state),
      },
      input.content,
    );
    const version: SectionVersion = {
      ...newSectionVersion(input.name, content),
      defaultPermission: input.defaultPermission ?? null,
      aiAccess: input.aiAccess ?? null,
    };
    const contentHash = hashSection(version);
    const sections = [...state.tree.sections];
    const insertAt = position === count ? sections.length : sections.indexOf(visible[position]!);
    sections.splice(insertAt, 0, { sectionId, blobHash: contentHash });
    return {
      tree: withSections(state.tree, sections),
      newSections: [version],
      newComments: comments,
      message: `Add section ${quoteForMessage(input.name)}`,
      result: { sectionId, contentHash, position },
    };
  });
}

function batchCreate(ctx: ActionContext, input: ActionInput<"batch_create">) {
  return writeBranch(ctx, input, "edit", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const start = (await visibleEntries(await sectionRules(tx, access, state.branch.name), state.tree, state.loadSections)).length;
    const versions: SectionVersion[] = [];
    const sectionIds: string[] = [];
    const comments: NewCommentRow[] = [];
    const keysVisibleInDocument = keysVisibleOnBranch(tx, access, state);
    for (const [index, spec] of input.sections.entries()) {
      const sectionId = randomUUID();
      const prepared = await prepareSectionContent(
        ctx,
        tx,
        {
          documentId: state.document.id,
          branchName: input.branchName,
          sectionId,
          name: spec.name,
          where: `sections[${index}]`,
          keysVisibleInDocument,
        },
        spec.content,
      );
      sectionIds.push(sectionId);
      versions.push(newSectionVersion(spec.name, prepared.content));
      comments.push(...prepared.comments);
    }
    const contentHashes = versions.map(hashSection);
    const added = sectionIds.map((sectionId, i) => ({ sectionId, blobHash: contentHashes[i]! }));
    const names = input.sections.map((s) => quoteForMessage(s.name, 30));
    return {
      tree: withSections(state.tree, [...state.tree.sections, ...added]),
      newSections: versions,
      newComments: comments,
      message: `Add ${versions.length} section${versions.length === 1 ? "" : "s"}: ${names.slice(0, 5).join(", ")}${names.length > 5 ? ", …" : ""}`,
      result: { sectionIds, contentHashes, positions: sectionIds.map((_, i) => start + i) },
    };
  });
}

function update(ctx: ActionContext, input: ActionInput<"update">) {
  if (input.newContent !== undefined && input.content !== undefined) {
    throw new DomainError("VALIDATION_FAILED", "Give the replacement content once, as newContent (content is an alias).", {
      issues: [{ path: "content", message: "use newContent or content, not both" }],
    });
  }
  refuseAgentOverrides(ctx, input);
  const newContent = input.newContent ?? input.content;
  if (newContent === undefined && input.newName === undefined && input.defaultPermission === undefined && input.aiAccess === undefined) {
    throw new DomainError(
      "VALIDATION_FAILED",
      "Nothing to update: give newContent and/or newName (or, on a non-default branch, defaultPermission / aiAccess).",
      {
        issues: [{ path: "newContent", message: "newContent or newName is required" }],
      },
    );
  }
  return writeBranch(ctx, input, "read", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const section = await loadSection(tx, state, access, input.sectionId, "edit");
    assertExpectedHash(section.sectionId, section.blobHash, input.expectedContentHash);
    assertPermissionsSettable(state, input);
    const rules = await sectionRules(tx, access, state.branch.name);
    const position = (await visibleEntries(rules, state.tree, state.loadSections)).findIndex((e) => e.sectionId === section.sectionId);
    const name = input.newName ?? section.version.name;
    const { content, comments } = await prepareSectionContent(
      ctx,
      tx,
      {
        documentId: state.document.id,
        branchName: input.branchName,
        sectionId: section.sectionId,
        name,
        previous: section.version.content,
        keysVisibleInDocument: keysVisibleOnBranch(tx, access, state),
        where: input.newContent !== undefined ? "newContent" : input.content !== undefined ? "content" : "newName",
      },
      newContent ?? section.version.content,
    );
    const version: SectionVersion = {
      ...section.version,
      name,
      content,
      defaultPermission: input.defaultPermission === undefined ? section.version.defaultPermission : input.defaultPermission,
      aiAccess: input.aiAccess === undefined ? section.version.aiAccess : input.aiAccess,
    };
    const contentHash = hashSection(version);
    const what =
      input.newName !== undefined && input.newName !== section.version.name
        ? `Rename section ${quoteForMessage(section.version.name)} to ${quoteForMessage(input.newName)}`
        : `Update section ${quoteForMessage(name)}`;
    return {
      tree: withSectionVersion(state.tree, section.sectionId, contentHash),
      newSections: [version],
      newComments: comments,
      message: what,
      result: { sectionId: section.sectionId, name, contentHash, position },
    };
  });
}

function deleteSection(ctx: ActionContext, input: ActionInput<"delete">) {
  return writeBranch(ctx, input, "read", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const section = await loadSection(tx, state, access, input.sectionId, "edit");
    assertExpectedHash(section.sectionId, section.blobHash, input.expectedContentHash);
    return {
      tree: withSections(
        state.tree,
        state.tree.sections.filter((e) => e.sectionId !== section.sectionId),
      ),
      message: `Delete section ${quoteForMessage(section.version.name)}`,
      result: { sectionId: section.sectionId },
    };
  });
}

/**
 * Sets the order of the sections the caller can see. Sections hidden from the
 * caller keep their slots, so a reorder never reveals or moves what it cannot name.
 */
function reorder(ctx: ActionContext, input: ActionInput<"reorder">) {
  return writeBranch(ctx, input, "edit", async (state, tx, access) => {
    assertNotDeleted(state.tree, input.branchName);
    const rules = await sectionRules(tx, access, state.branch.name);
    const visible = new Map((await visibleEntries(rules, state.tree, state.loadSections)).map((e) => [e.sectionId, e]));
    const seen = new Set<string>();
    const duplicated = new Set<string>();
    for (const id of input.sectionOrder) (seen.has(id) ? duplicated : seen).add(id);
    const unknown = [...seen].filter((id) => !visible.has(id));
    const missing = [...visible.keys()].filter((id) => !seen.has(id));
    if (unknown.length + missing.length + duplicated.size > 0) {
      const parts = [
        missing.length ? `missing ${missing.join(", ")}` : "",
        unknown.length ? `not in this document on this branch ${unknown.join(", ")}` : "",
        duplicated.size ? `listed more than once ${[...duplicated].join(", ")}` : "",
      ].filter(Boolean);
      throw new DomainError(
        "VALIDATION_FAILED",
        `sectionOrder must list every section of the document on branch ${JSON.stringify(input.branchName)} exactly once: ${parts.join("; ")}. \`read\` the branch for the current section ids.`,
        { issues: [{ path: "sectionOrder", message: parts.join("; ") }], missing, unknown, duplicated: [...duplicated] },
      );
    }
    const requested = input.sectionOrder[Symbol.iterator]();
    const sections = state.tree.sections.map((e) => (visible.has(e.sectionId) ? visible.get(requested.next().value as string)! : e));
    return {
      tree: withSections(state.tree, sections),
      message: "Reorder sections",
      result: { sectionOrder: input.sectionOrder },
    };
  });
}

export const sectionsTool = defineTool({
  name: "sections",
  // What an agent needs before calling; what to do after a refusal its error's message says.
  description: [
    "Write a document's sections on a branch, one commit per call (batch_create: several at once; prefer it).",
    "Give each section's contentHash from `read` as expectedContentHash.",
    "The name is the H2 heading: content must not repeat it. Keep <svc:comment id> tags.",
    "A protected default branch takes changes by merge request only. Agents never change access.",
  ].join("\n"),
  input: sectionsInput,
  readOnly: false,
  handlers: {
    create,
    batch_create: batchCreate,
    update,
    delete: deleteSection,
    reorder,
    ...moveHandlers,
    ...referenceHandlers,
  },
});

export type SectionsResults = ToolResults<typeof sectionsTool>;
