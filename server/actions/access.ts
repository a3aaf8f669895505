/**
 * Opens a document for an actor: loads the facts the policy needs, asks the
 * policy, and turns its answer into the errors callers see. Anything the
 * caller may not see is NOT_FOUND, worded exactly like a missing id, so no
 * response reveals that it exists.
 */
import { changedSectionIds, type DocumentTree, type Permission, type SectionVersion, type TreeEntry } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import {
  type AccessSubject,
  atLeast,
  canManageDocument,
  type DocumentFacts,
  documentPermission,
  type SectionOverrides,
  sectionPermission,
  strictestSectionPermission,
} from "@/server/policies/access";
import { getGrant } from "@/server/store/access";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, type DocumentWithGrants, documentNotFound, findDocumentWithGrants } from "@/server/store/documents";
import type { Actor } from "./context";

export type Need = "read" | "edit" | "manage";

export interface DocumentAccess {
  document: DocumentRow;
  subject: AccessSubject;
  facts: DocumentFacts;
  /** Document-level permission. */
  permission: Permission;
  canManage: boolean;
  /** The subject's permission on a section version (its overrides). */
  section(version: SectionOverrides): Permission;
}

export function subjectOf(actor: Actor): AccessSubject {
  return { kind: "member", userId: actor.userId, role: actor.role, isAi: actor.via === "mcp" };
}

export async function accessFor(tx: Tx, document: DocumentRow, subject: AccessSubject): Promise<DocumentAccess> {
  return accessWithGrant(document, subject, subject.kind === "member" ? await getGrant(tx, document.id, subject.userId) : null);
}

export function accessWithGrant(document: DocumentRow, subject: AccessSubject, grant: Permission | null): DocumentAccess {
  const facts: DocumentFacts = {
    createdBy: document.createdBy,
    defaultPermission: document.defaultPermission,
    aiAccess: document.aiAccess,
    grant,
  };
  return {
    document,
    subject,
    facts,
    permission: documentPermission(subject, facts),
    canManage: canManageDocument(subject, facts),
    section: (version) => sectionPermission(subject, facts, version),
  };
}

const readOnlyMessage = (documentId: string) =>
  `You can read document ${documentId} but not change it. Ask its owner or a workspace admin for edit access (or, for an AI token, a higher aiAccess).`;

export const atLeastEdit = (access: DocumentAccess): boolean => atLeast(access.permission, "edit");

/** Checks a document-level need, throwing NOT_FOUND when the document is invisible and PERMISSION_DENIED when it is only readable. */
export function requireDocument(access: DocumentAccess, need: Need): void {
  if (access.permission === "none") throw documentNotFound(access.document.id);
  if (need === "manage" && !access.canManage) {
    throw new DomainError(
      "PERMISSION_DENIED",
      `Only the document's creator and workspace owners and admins can manage document ${access.document.id} (its permissions and share links).`,
      { documentId: access.document.id },
    );
  }
  if (need === "edit" && !atLeast(access.permission, "edit")) {
    throw new DomainError("PERMISSION_DENIED", readOnlyMessage(access.document.id), { documentId: access.document.id });
  }
}

/** Loads a document of the actor's workspace and checks the actor may `need` it. */
export async function openDocument(tx: Tx, actor: Actor, documentId: string, need: Need): Promise<DocumentAccess> {
  const found = await findDocumentWithGrants(tx, documentId, [actor.userId]);
  return admitActor(actor, documentId, found, need);
}

/** The actor's access to a document as loaded by findDocumentWithGrants, checked against `need`. */
export function admitActor(
  actor: Actor,
  documentId: string,
  found: DocumentWithGrants | undefined,
  need: Need,
): DocumentAccess {
  if (!found || found.document.workspaceId !== actor.workspaceId) throw documentNotFound(documentId);
  const access = accessWithGrant(found.document, subjectOf(actor), found.grants.get(actor.userId) ?? null);
  requireDocument(access, need);
  return access;
}

/** For a section the caller names: NOT_FOUND when hidden in any version involved, PERMISSION_DENIED when it may only be read. */
export function requireSection(
  access: DocumentAccess,
  sectionId: string,
  versions: ReadonlyArray<SectionVersion | null | undefined>,
  need: "read" | "edit",
  branchName: string,
): void {
  const permission = strictestSectionPermission(access.subject, access.facts, versions);
  if (permission === "none") {
    throw notFound("Section", sectionId, `It is not in this document on branch ${JSON.stringify(branchName)}; \`read\` lists its sections.`);
  }
  if (need === "edit" && !atLeast(permission, "edit")) {
    throw new DomainError(
      "PERMISSION_DENIED",
      `You can read section ${sectionId} but not change it. Ask the document's owner for edit access to it.`,
      { sectionId },
    );
  }
}

/**
 * Refuses a change from one tree to another that touches a section the caller
 * may not edit (in either version). The message names no section: some of
 * them may be hidden from the caller.
 */
export async function assertSectionChangesAllowed(
  access: DocumentAccess,
  before: DocumentTree,
  after: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
  doing: string,
): Promise<void> {
  if (access.canManage) return;
  const changed = new Set(changedSectionIds(before, after));
  const hashes = [...before.sections, ...after.sections].filter((e) => changed.has(e.sectionId)).map((e) => e.blobHash);
  const versions = await loadSections(hashes);
  const forbidden = [...before.sections, ...after.sections].some(
    (e) => changed.has(e.sectionId) && !atLeast(access.section(versions.get(e.blobHash)!), "edit"),
  );
  if (forbidden) {
    throw new DomainError(
      "PERMISSION_DENIED",
      `You cannot ${doing}: it changes sections you are not allowed to edit. Ask someone with edit access to those sections.`,
      { documentId: access.document.id },
    );
  }
}

/** The tree entries the caller can see, in document order (managers see every section without loading any). */
export async function visibleEntries(
  access: DocumentAccess,
  tree: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
): Promise<TreeEntry[]> {
  if (access.canManage) return tree.sections;
  const versions = await loadSections(tree.sections.map((e) => e.blobHash));
  return tree.sections.filter((e) => access.section(versions.get(e.blobHash)!) !== "none");
}

/** Guests work only inside documents granted or shared to them; creating workspace-wide things needs a member. */
export function requireFullMember(actor: Actor, doing: string): void {
  if (actor.role === "guest") {
    throw new DomainError("PERMISSION_DENIED", `Guests cannot ${doing}. Ask a workspace admin to make you a member.`);
  }
}
