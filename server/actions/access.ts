/**
 * Opens a document for an actor: loads the facts the policy needs, asks the
 * policy, and turns its answer into the errors callers see. Anything the
 * caller may not see is NOT_FOUND, worded exactly like a missing id, so no
 * response reveals that it exists.
 */
import { changedSectionIds, type DocumentTree, type Permission, type SectionVersion, type TreeEntry } from "@/server/core/document-model";
import { DomainError, type ErrorCode, notFound } from "@/server/core/errors";
import {
  type AccessSubject,
  accessChangeRefusal,
  agentCapBelow,
  atLeast,
  canManageDocument,
  type DocumentFacts,
  documentPermission,
  type SectionOverrides,
  sectionPermission,
  strictestSectionPermission,
} from "@/server/policies/access";
import { getGrant } from "@/server/store/access";
import { CommitGraph } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, type DocumentWithGrants, documentNotFound, findDocumentWithGrants, getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
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
  return { kind: "member", userId: actor.userId, role: actor.role, principal: actor.principal };
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

/** The refusal of an edit, naming its real reason: the agent cap (aiAccess) or the person's own permission. */
function readOnlyMessage(access: DocumentAccess, what: string, section?: SectionOverrides): string {
  if (agentCapBelow(access.subject, access.facts, "edit", section)) {
    const whose = section?.aiAccess ? "this section's" : "the document's";
    return `You can read ${what} but not change it: an API token acts as an agent, and ${whose} aiAccess lets agents only read it. Ask the document's owner to raise aiAccess, or sign in to do this yourself.`;
  }
  return `You can read ${what} but not change it. Ask the document's owner or a workspace admin for edit access.`;
}

/** Throws a policy's refusal, if it gave one. */
export function refuse(refusal: { code: ErrorCode; message: string } | null): void {
  if (refusal) throw new DomainError(refusal.code, refusal.message);
}

/**
 * Changing access (roles, invites, tokens, the workspace's settings) is for a
 * person: never an API token, whoever owns it, so a leaked one cannot entrench itself.
 */
export const refuseAgents = (actor: Pick<Actor, "principal">): void => refuse(accessChangeRefusal(actor.principal));

export const atLeastEdit = (access: DocumentAccess): boolean => atLeast(access.permission, "edit");

/** Checks a document-level need, throwing NOT_FOUND when the document is invisible and PERMISSION_DENIED when it is only readable. */
export function requireDocument(access: DocumentAccess, need: Need): void {
  if (access.permission === "none") throw documentNotFound(access.document.id);
  if (need === "manage" && !access.canManage) {
    const refusal = access.subject.kind === "member" ? accessChangeRefusal(access.subject.principal) : null;
    throw new DomainError(
      "PERMISSION_DENIED",
      refusal?.message ??
        `Only the document's creator and workspace owners and admins can manage document ${access.document.id} (its permissions and share links). Ask one of them.`,
      { documentId: access.document.id },
    );
  }
  if (need === "edit" && !atLeast(access.permission, "edit")) {
    throw new DomainError("PERMISSION_DENIED", readOnlyMessage(access, `document ${access.document.id}`), {
      documentId: access.document.id,
    });
  }
}

/** Loads a document of the actor's workspace and checks the actor may `need` it. */
export async function openDocument(tx: Tx, actor: Actor, documentId: string, need: Need): Promise<DocumentAccess> {
  const found = await findDocumentWithGrants(tx, documentId, [actor.userId]);
  return admitActor(actor, documentId, found, need);
}

/** The actor's access to a document as loaded by findDocumentWithGrants, checked against `need`. */
export function admitActor(actor: Actor, documentId: string, found: DocumentWithGrants | undefined, need: Need): DocumentAccess {
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
    throw notFound(
      "Section",
      sectionId,
      `It is not in this document on branch ${JSON.stringify(branchName)}; \`read\` lists its sections.`,
    );
  }
  if (need === "edit" && !atLeast(permission, "edit")) {
    const capped = versions.find((v) => v && !atLeast(access.section(v), "edit"));
    throw new DomainError("PERMISSION_DENIED", readOnlyMessage(access, `section ${sectionId}`, capped ?? undefined), { sectionId });
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
  const forbidden = [...before.sections, ...after.sections]
    .filter((e) => changed.has(e.sectionId))
    .map((e) => versions.get(e.blobHash)!)
    .filter((v) => !atLeast(access.section(v), "edit"));
  if (forbidden.length > 0) throw sectionChangesRefused(access, forbidden, doing);
}

/**
 * The refusal of a change to sections the caller may not edit, naming no
 * section (some may be hidden from the caller) but naming the real reason.
 */
export function sectionChangesRefused(access: DocumentAccess, forbidden: readonly SectionOverrides[], doing: string): DomainError {
  const agentOnly = forbidden.every((v) => agentCapBelow(access.subject, access.facts, "edit", v));
  return new DomainError(
    "PERMISSION_DENIED",
    agentOnly
      ? `You cannot ${doing}: it changes sections whose aiAccess does not let agents edit them, and an API token acts as an agent. Ask the document's owner to raise aiAccess, or sign in to do this yourself.`
      : `You cannot ${doing}: it changes sections you are not allowed to edit. Ask someone with edit access to those sections.`,
    { documentId: access.document.id },
  );
}

/** The tree entries the caller can see, in document order (managers see every section without loading any). */
export async function visibleEntries(
  access: DocumentAccess,
  tree: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
): Promise<readonly TreeEntry[]> {
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

/**
 * The sections the caller may not see at the head of the document's default
 * branch as it is now, when `commitId` is some other version. Every override
 * reaches the default branch by a merge, so hiding a section there hides its
 * past and its copies on other branches too: an older version never reveals
 * what the default branch hides now.
 */
export async function sectionsHiddenNow(tx: Tx, access: DocumentAccess, commitId: string): Promise<ReadonlySet<string>> {
  if (access.canManage) return new Set();
  const head = (await getBranch(tx, access.document.id, access.document.defaultBranch)).headCommitId;
  if (head === commitId) return new Set();
  const tree = await loadTree(tx, (await new CommitGraph(tx, access.document.id).get(head)).treeHash);
  const versions = await loadSections(
    tx,
    tree.sections.map((e) => e.blobHash),
  );
  return new Set(tree.sections.filter((e) => access.section(versions.get(e.blobHash)!) === "none").map((e) => e.sectionId));
}
