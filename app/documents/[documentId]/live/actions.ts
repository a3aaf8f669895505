"use server";

/**
 * What the editable document page asks of the server: the branch's draft
 * status for the commit bar and presence, commit and discard, a new branch,
 * and section structure (add, delete, move). Every call goes through the
 * bridge as the signed-in person; the server decides what is allowed.
 */
import { runAsUser, type ActionResult } from "@/app/_lib/action-result";
import type { DocumentRead } from "@/app/_lib/quire";
import { getBridge } from "@/server/bridge";
import { DomainError } from "@/server/core/errors";

const text = (value: unknown): string => (typeof value === "string" ? value : "");

export interface Person {
  userId: string;
  name: string;
}

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
  const { members }: { members: Person[] } = await getBridge().callTool("members", userId, { action: "list", limit: 200 });
  const byId = new Map(members.map((m) => [m.userId, m.name]));
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

export async function deleteSection(input: { documentId: unknown; branchName: unknown; sectionId: unknown }): Promise<ActionResult> {
  return runAsUser("delete section", async (userId) => {
    await getBridge().callTool("sections", userId, {
      action: "delete",
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      sectionId: text(input.sectionId),
    });
    return undefined;
  });
}

/** Moves a section one place up or down among the sections this person sees (hidden ones keep their slots, as `reorder` does). */
export async function moveSection(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  direction: unknown;
}): Promise<ActionResult> {
  return runAsUser("move section", async (userId) => {
    const documentId = text(input.documentId);
    const branchName = text(input.branchName);
    const sectionId = text(input.sectionId);
    const bridge = getBridge();
    const doc: DocumentRead = await bridge.callTool("read", userId, { documentId, branchName });
    const order = [...doc.sections].sort((a, b) => a.position - b.position).map((s) => s.sectionId);
    const from = order.indexOf(sectionId);
    const to = from + (input.direction === "up" ? -1 : 1);
    if (from < 0 || to < 0 || to >= order.length) return undefined;
    [order[from], order[to]] = [order[to]!, order[from]!];
    await bridge.callTool("sections", userId, { action: "reorder", documentId, branchName, sectionOrder: order });
    return undefined;
  });
}

/** Step one of an image pasted or dropped into a section: a one-use upload URL for its bytes. */
export async function requestImageUpload(input: {
  filename: unknown;
  mediaType: unknown;
  size: unknown;
}): Promise<ActionResult<{ uploadUrl: string; key: string; headers: Record<string, string> }>> {
  return runAsUser("image upload", async (userId) => {
    const upload = await getBridge().callTool("upload_url", userId, {
      filename: text(input.filename) || "image",
      mediaType: text(input.mediaType),
      ...(typeof input.size === "number" ? { size: input.size } : {}),
    });
    return { uploadUrl: upload.uploadUrl, key: upload.key, headers: upload.headers };
  });
}

/**
 * Step two: the uploaded image becomes a storage block at the end of the
 * section, as one commit on the branch (the head's content plus the block).
 * The section's room takes the commit in like any other write, so the live
 * text typed meanwhile stays; the key is checked by the server like any
 * storage key (yours, uploaded, in this workspace).
 */
export async function appendImageBlock(input: {
  documentId: unknown;
  branchName: unknown;
  sectionId: unknown;
  key: unknown;
  mediaType: unknown;
}): Promise<ActionResult> {
  return runAsUser("add image", async (userId) => {
    const documentId = text(input.documentId);
    const branchName = text(input.branchName);
    const sectionId = text(input.sectionId);
    const bridge = getBridge();
    const doc: DocumentRead = await bridge.callTool("read", userId, { documentId, branchName, sectionIds: [sectionId] });
    const section = doc.sections.find((s) => s.sectionId === sectionId);
    if (!section) throw new DomainError("NOT_FOUND", "This section is no longer on the branch.", { sectionId });
    await bridge.callTool("sections", userId, {
      action: "update",
      documentId,
      branchName,
      sectionId,
      expectedContentHash: section.contentHash,
      newContent: [...section.content, { blockType: "image", type: "storage", mediaType: text(input.mediaType), key: text(input.key) }],
      commitMessage: `Add an image to section ${JSON.stringify(section.name)}`,
    });
    return undefined;
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
