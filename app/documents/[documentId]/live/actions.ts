"use server";

/**
 * What the editable document page asks of the server: the branch's draft
 * status for the commit bar and presence, commit and discard, a new branch,
 * and section structure (add, delete, move). Every call goes through the
 * bridge as the signed-in person; the server decides what is allowed.
 */
import { runAsUser, type ActionResult } from "@/app/_lib/action-result";
import { type DocumentRead, type DocumentSummary, listMembers, type WorkspacePerson as Person } from "@/app/_lib/quire";
import { getBridge } from "@/server/bridge";
import type { Block } from "@/server/core/blocks";
import { DomainError } from "@/server/core/errors";

const text = (value: unknown): string => (typeof value === "string" ? value : "");

export type { WorkspacePerson as Person } from "@/app/_lib/quire";

export interface DraftView {
  /** The branch head the status was read at. */
  headCommitId: string;
  uncommittedChanges: boolean;
  editors: Person[];
  connected: Person[];
  /** Sections whose draft differs from the head, in document order. */
  changedSections: Array<{ sectionId: string; name: string }>;
}

/** Names for user ids; someone the workspace list does not show (a removed member) reads as "Someone". */
async function namesOf(userId: string, ids: readonly string[]): Promise<Person[]> {
  if (ids.length === 0) return [];
  const byId = new Map((await listMembers(userId)).map((m) => [m.userId, m.name]));
  return ids.map((id) => ({ userId: id, name: byId.get(id) ?? "Someone" }));
}

export async function readDraftStatus(input: { documentId: unknown; branchName: unknown }): Promise<ActionResult<DraftView>> {
  return runAsUser("draft status", async (userId) => {
    const documentId = text(input.documentId);
    const branchName = text(input.branchName);
    const bridge = getBridge();
    const { branches } = await bridge.callTool("documents", userId, { action: "list_branches", documentId });
    const branch = branches.find((b: { name: string }) => b.name === branchName);
    if (!branch) return { headCommitId: "", uncommittedChanges: false, editors: [], connected: [], changedSections: [] };
    const { draft } = branch;
    const [editors, connected, changedSections] = await Promise.all([
      namesOf(userId, draft.editorIds),
      namesOf(userId, draft.connectedUserIds),
      draft.uncommittedChanges ? changedSectionsOf(userId, documentId, branchName) : [],
    ]);
    return { headCommitId: branch.headCommitId, uncommittedChanges: draft.uncommittedChanges, editors, connected, changedSections };
  });
}

/** The sections whose draft (name or content) differs from the head: the server hashes both, the page compares. */
async function changedSectionsOf(userId: string, documentId: string, branchName: string) {
  const bridge = getBridge();
  const [head, draft] = await Promise.all([
    bridge.callTool("read", userId, { documentId, branchName }) as Promise<DocumentRead>,
    bridge.callTool("read", userId, { documentId, branchName, includeDraft: true }) as Promise<DocumentRead>,
  ]);
  const headHashes = new Map(head.sections.map((s) => [s.sectionId, `${s.contentHash}\u0000${s.name}`]));
  return [...draft.sections]
    .sort((a, b) => a.position - b.position)
    .filter((s) => headHashes.get(s.sectionId) !== `${s.contentHash}\u0000${s.name}`)
    .map((s) => ({ sectionId: s.sectionId, name: s.name }));
}

export async function commitDraft(input: {
  documentId: unknown;
  branchName: unknown;
  message: unknown;
}): Promise<ActionResult<{ commitId: string; changed: boolean; message: string }>> {
  return runAsUser("commit", async (userId) => {
    const message = text(input.message).trim();
    const committed = await getBridge().callTool("documents", userId, {
      action: "commit",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      ...(message ? { commitMessage: message } : {}),
    });
    return { commitId: committed.commitId, changed: committed.changed, message: committed.message };
  });
}

export async function discardDraft(input: {
  documentId: unknown;
  branchName: unknown;
}): Promise<ActionResult<{ discardedSections: number }>> {
  return runAsUser("discard", async (userId) => {
    const discarded = await getBridge().callTool("documents", userId, {
      action: "discard",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
    });
    return { discardedSections: discarded.discardedSections };
  });
}

export async function createBranch(input: {
  documentId: unknown;
  branchName: unknown;
  sourceBranch: unknown;
}): Promise<ActionResult<{ branchName: string }>> {
  return runAsUser("new branch", async (userId) => {
    const created = await getBridge().callTool("documents", userId, {
      action: "create_branch",
      documentId: text(input.documentId),
      branchName: text(input.branchName).trim(),
      sourceBranch: text(input.sourceBranch),
    });
    return { branchName: created.branchName };
  });
}

export async function addSection(input: {
  documentId: unknown;
  branchName: unknown;
  name: unknown;
  position: unknown;
}): Promise<ActionResult<{ sectionId: string }>> {
  return runAsUser("add section", async (userId) => {
    const created = await getBridge().callTool("sections", userId, {
      action: "create",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      name: text(input.name).trim(),
      content: [{ blockType: "text", text: "" }],
      ...(typeof input.position === "number" ? { position: input.position } : {}),
    });
    return { sectionId: created.sectionId };
  });
}

/** Deletes a section at once (one commit); the commit id is what Undo hands back to `undoDeleteSection`. */
export async function deleteSection(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
}): Promise<ActionResult<{ commitId: string }>> {
  return runAsUser("delete section", async (userId) => {
    const deleted = await getBridge().callTool("sections", userId, {
      action: "delete",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      sectionId: text(input.sectionId),
    });
    return { commitId: deleted.commitId };
  });
}

/** Sets a new order of the sections this person sees (hidden ones keep their slots, as `reorder` does); `place` returns null to leave it. */
async function reorderSections(
  input: { documentId: unknown; branchName: unknown },
  userId: string,
  place: (order: string[]) => string[] | null,
): Promise<undefined> {
  const documentId = text(input.documentId);
  const branchName = text(input.branchName);
  const bridge = getBridge();
  const doc: DocumentRead = await bridge.callTool("read", userId, { documentId, branchName });
  const order = place([...doc.sections].sort((a, b) => a.position - b.position).map((s) => s.sectionId));
  if (order) await bridge.callTool("sections", userId, { action: "reorder", documentId, branchName, sectionOrder: order });
  return undefined;
}

/** Moves a section one place up or down (the keyboard way). */
export async function moveSection(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  direction: unknown;
}): Promise<ActionResult> {
  return runAsUser("move section", (userId) =>
    reorderSections(input, userId, (order) => {
      const from = order.indexOf(text(input.sectionId));
      const to = from + (input.direction === "up" ? -1 : 1);
      if (from < 0 || to < 0 || to >= order.length) return null;
      [order[from], order[to]] = [order[to]!, order[from]!];
      return order;
    }),
  );
}

/** Puts a section just before another (a dragged section dropped), or at the end when `beforeSectionId` is empty; one reorder commit. */
export async function placeSection(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  beforeSectionId: unknown;
}): Promise<ActionResult> {
  return runAsUser("move section", (userId) =>
    reorderSections(input, userId, (order) => {
      const moved = text(input.sectionId);
      const before = text(input.beforeSectionId);
      if (moved === before || !order.includes(moved)) return null;
      const rest = order.filter((id) => id !== moved);
      const at = before ? rest.indexOf(before) : rest.length;
      if (at < 0) throw new DomainError("NOT_FOUND", "The place to move to is no longer on the branch.", { sectionId: before });
      rest.splice(at, 0, moved);
      return rest.join() === order.join() ? null : rest;
    }),
  );
}

/** Step one of a file added to a section (an image pasted or dropped, or any file from the block menu): a one-use upload URL for its bytes. */
export async function requestUpload(input: {
  filename: unknown;
  mediaType: unknown;
  size: unknown;
}): Promise<ActionResult<{ uploadUrl: string; key: string; headers: Record<string, string> }>> {
  return runAsUser("upload", async (userId) => {
    const upload = await getBridge().callTool("upload_url", userId, {
      filename: text(input.filename) || "file",
      mediaType: text(input.mediaType),
      ...(typeof input.size === "number" ? { size: input.size } : {}),
    });
    return { uploadUrl: upload.uploadUrl, key: upload.key, headers: upload.headers };
  });
}

/**
 * Step two (or the only step for a block without a file): the block joins
 * the section after the block at `afterIndex` (at the end without it), as
 * one commit on the branch (the head's content plus the block). The
 * section's room takes the commit in like any other write, so the live text
 * typed meanwhile stays. The block is checked by the server like any
 * content (its schema, a storage key that is yours, uploaded, in this
 * workspace), and a refusal comes back with its code's message.
 */
export async function insertBlock(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  block: unknown;
  afterIndex?: unknown;
}): Promise<ActionResult> {
  return runAsUser("add block", async (userId) => {
    const documentId = text(input.documentId);
    const branchName = text(input.branchName);
    const sectionId = text(input.sectionId);
    const bridge = getBridge();
    const doc: DocumentRead = await bridge.callTool("read", userId, { documentId, branchName, sectionIds: [sectionId] });
    const section = doc.sections.find((s) => s.sectionId === sectionId);
    if (!section) throw new DomainError("NOT_FOUND", "This section is no longer on the branch.", { sectionId });
    const at =
      typeof input.afterIndex === "number" && Number.isInteger(input.afterIndex)
        ? Math.min(Math.max(input.afterIndex + 1, 0), section.content.length)
        : section.content.length;
    // The block is checked whole by the `sections` tool's schema below; the cast only names what it will accept.
    const block = input.block as Block;
    const kind = typeof block?.blockType === "string" ? block.blockType.replace("_", " ") : "new";
    await bridge.callTool("sections", userId, {
      action: "update",
      documentId,
      branchName,
      sectionId,
      expectedContentHash: section.contentHash,
      newContent: [...section.content.slice(0, at), block, ...section.content.slice(at)],
      commitMessage: `Add ${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind} block to section ${JSON.stringify(section.name)}`,
    });
    return undefined;
  });
}

/**
 * Undoes a section deletion: the section comes back at its old place with
 * its id, name and content, so its history, comments and references stay
 * whole (a re-created section would be a new one). It is the `documents`
 * revert the history page uses, to the deleting commit's parent, and only
 * while that commit is still the branch head: a revert restores the whole
 * document, so anything committed since would be lost with it.
 */
export async function undoDeleteSection(input: {
  documentId: unknown;
  branchName: unknown;
  commitId: unknown;
}): Promise<ActionResult<{ commitId: string }>> {
  return runAsUser("undo delete", async (userId) => {
    const documentId = text(input.documentId);
    const branchName = text(input.branchName);
    const commitId = text(input.commitId);
    const bridge = getBridge();
    const { branches } = await bridge.callTool("documents", userId, { action: "list_branches", documentId });
    const branch = branches.find((b: { name: string }) => b.name === branchName);
    if (branch?.headCommitId !== commitId) {
      throw new DomainError("BRANCH_MOVED", "The branch has changed since the delete; restore the section from its history instead.", {
        commitId,
      });
    }
    const shown = await bridge.callTool("documents", userId, { action: "show", documentId, commitId });
    const parentId: string | undefined = shown.commit.parentIds[0];
    if (!parentId) throw new DomainError("NOT_FOUND", "There is nothing before this commit to restore.", { commitId });
    const reverted = await bridge.callTool("documents", userId, {
      action: "revert",
      documentId,
      branchName,
      commitId: parentId,
      commitMessage: "Undo: restore the deleted section",
    });
    return { commitId: reverted.commitId };
  });
}

export type PermissionChoice = "edit" | "read" | "none" | null;

export interface SectionPermissionsView {
  defaultPermission: PermissionChoice;
  aiAccess: PermissionChoice;
  /** Set when the overrides cannot be changed here: the default branch, where a change goes through a merge request. */
  lockedReason: string | null;
}

/** A section's permission overrides as the server reads them for this person, and whether this branch lets them change. */
export async function readSectionPermissions(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
}): Promise<ActionResult<SectionPermissionsView>> {
  return runAsUser("section permissions", async (userId) => {
    const documentId = text(input.documentId);
    const branchName = text(input.branchName);
    const sectionId = text(input.sectionId);
    const bridge = getBridge();
    const [document, doc] = await Promise.all([
      bridge.callTool("documents", userId, { action: "get", documentId }) as Promise<{ defaultBranch: string }>,
      bridge.callTool("read", userId, { documentId, branchName, sectionIds: [sectionId] }) as Promise<DocumentRead>,
    ]);
    const section = doc.sections.find((s) => s.sectionId === sectionId);
    if (!section) throw new DomainError("NOT_FOUND", "This section is no longer on the branch.", { sectionId });
    return {
      defaultPermission: section.defaultPermission,
      aiAccess: section.aiAccess,
      lockedReason:
        branchName === document.defaultBranch
          ? `Section permissions cannot be changed directly on the default branch "${document.defaultBranch}": change them on another branch and merge it with a merge request, so the change is reviewed.`
          : null,
    };
  });
}

/** Sets a section's team and AI overrides on this branch ("" = inherit from the document); the server checks who may. */
export async function setSectionPermissions(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  defaultPermission: unknown;
  aiAccess: unknown;
}): Promise<ActionResult> {
  const choice = (field: string, value: unknown): PermissionChoice => {
    const given = text(value);
    if (given === "") return null;
    if (given === "edit" || given === "read" || given === "none") return given;
    throw new DomainError("VALIDATION_FAILED", `${field} must be edit, read, none or empty (inherit).`, {
      issues: [{ path: field, message: "must be edit | read | none | empty" }],
    });
  };
  return runAsUser("section permissions", async (userId) => {
    await getBridge().callTool("sections", userId, {
      action: "update",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      sectionId: text(input.sectionId),
      defaultPermission: choice("defaultPermission", input.defaultPermission),
      aiAccess: choice("aiAccess", input.aiAccess),
      commitMessage: "Change section permissions",
    });
    return undefined;
  });
}

/** Documents this person may see whose name or path contains `search`, for the "Link to a Quire document" picker (the `documents` tool decides what is visible). */
export async function findDocuments(input: {
  search: unknown;
}): Promise<ActionResult<Array<{ documentId: string; name: string; path: string }>>> {
  return runAsUser("find documents", async (userId) => {
    const search = text(input.search).trim();
    if (!search) return [];
    const found: { documents: DocumentSummary[] } = await getBridge().callTool("documents", userId, {
      action: "list",
      search,
      orderBy: "updated",
      limit: 8,
    });
    return found.documents.map(({ documentId, name, path }) => ({ documentId, name, path }));
  });
}

/**
 * A "See also" link from a section to another Quire document: one `sections
 * add_reference` commit. Its text is the document's name when linked
 * (`displayTitle`): a reference does not carry its target's name, which a
 * reader of this document may not be allowed to see.
 */
export async function addReference(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  targetDocumentId: unknown;
  displayTitle: unknown;
}): Promise<ActionResult> {
  return runAsUser("link document", async (userId) => {
    await getBridge().callTool("sections", userId, {
      action: "add_reference",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      sectionId: text(input.sectionId),
      targetDocumentId: text(input.targetDocumentId),
      displayTitle: text(input.displayTitle).slice(0, 300) || null,
    });
    return undefined;
  });
}

/** Removes a section's "See also" link: one `sections remove_reference` commit. */
export async function removeReference(input: { documentId: unknown; branchName: unknown; referenceId: unknown }): Promise<ActionResult> {
  return runAsUser("remove link", async (userId) => {
    await getBridge().callTool("sections", userId, {
      action: "remove_reference",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      referenceId: text(input.referenceId),
    });
    return undefined;
  });
}
