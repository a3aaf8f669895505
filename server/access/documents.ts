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
  isRestrictedSection,
  minPermission,
  type SectionOverrides,
  sectionPermissionInVersion,
} from "@/server/policies/access";
import { getGrant, grantsFor } from "@/server/store/access";
import { createCache } from "@/server/store/caches";
import { getCommit } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, type DocumentWithGrants, documentNotFound, findDocumentWithGrants, getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
import type { Actor } from "@/server/access/actor";

export type Need = "read" | "edit" | "manage";

export interface DocumentAccess {
  document: DocumentRow;
  subject: AccessSubject;
  facts: DocumentFacts;
  /** Document-level permission. */
  permission: Permission;
  canManage: boolean;
}

export function subjectOf(actor: Actor): AccessSubject {
  return { kind: "member", userId: actor.userId, role: actor.role, principal: actor.principal, ...(actor.cap ? { cap: actor.cap } : {}) };
}

/** A document row as a list reads it: what deciding whether its document is readable needs. */
export type ListedDocumentFacts = Pick<DocumentRow, "id" | "createdBy" | "defaultPermission" | "aiAccess">;

/** Which of these listed documents the actor may read (one query for the batch's grants): a list leaves the others out. */
export async function readableAmong(
  tx: Tx,
  actor: Actor,
  rows: readonly ListedDocumentFacts[],
): Promise<(row: ListedDocumentFacts) => boolean> {
  const subject = subjectOf(actor);
  const grants = await grantsFor(
    tx,
    actor.userId,
    rows.map((r) => r.id),
  );
  return (row) =>
    documentPermission(subject, {
      createdBy: row.createdBy,
      defaultPermission: row.defaultPermission,
      aiAccess: row.aiAccess,
      grant: grants.get(row.id) ?? null,
    }) !== "none";
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
  rules: SectionRules,
  sectionId: string,
  versions: ReadonlyArray<SectionVersion | null | undefined>,
  need: "read" | "edit",
  branchName: string,
): void {
  const { access } = rules;
  const permission = versions.reduce<Permission>((acc, v) => (v ? minPermission(acc, rules.permission(sectionId, v)) : acc), "edit");
  if (permission === "none") {
    throw notFound(
      "Section",
      sectionId,
      `It is not in this document on branch ${JSON.stringify(branchName)}; \`read\` lists its sections.`,
    );
  }
  if (need === "edit" && !atLeast(permission, "edit")) {
    const capped = versions.find((v) => v && !atLeast(rules.permission(sectionId, v), "edit"));
    throw new DomainError("PERMISSION_DENIED", readOnlyMessage(access, `section ${sectionId}`, capped ?? undefined), { sectionId });
  }
}

/**
 * Refuses a change from one tree to another that touches a section the caller
 * may not edit (in either version). The message names no section: some of
 * them may be hidden from the caller.
 */
export async function assertSectionChangesAllowed(
  rules: SectionRules,
  before: DocumentTree,
  after: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
  doing: string,
): Promise<void> {
  if (rules.access.canManage) return;
  const changed = new Set(changedSectionIds(before, after));
  const entries = [...before.sections, ...after.sections].filter((e) => changed.has(e.sectionId));
  const versions = await loadSections(entries.map((e) => e.blobHash));
  const forbidden = entries
    .map((e) => ({ sectionId: e.sectionId, version: versions.get(e.blobHash)! }))
    .filter(({ sectionId, version }) => !atLeast(rules.permission(sectionId, version), "edit"))
    .map(({ version }) => version);
  if (forbidden.length > 0) throw sectionChangesRefused(rules.access, forbidden, doing);
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
  rules: SectionRules,
  tree: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
): Promise<readonly TreeEntry[]> {
  if (rules.access.canManage) return tree.sections;
  const versions = await loadSections(tree.sections.map((e) => e.blobHash));
  return tree.sections.filter((e) => rules.permission(e.sectionId, versions.get(e.blobHash)!) !== "none");
}

/** Guests work only inside documents granted or shared to them; creating workspace-wide things needs a member. */
export function requireFullMember(actor: Actor, doing: string): void {
  if (actor.role === "guest") {
    throw new DomainError("PERMISSION_DENIED", `Guests cannot ${doing}. Ask a workspace admin to make you a member.`);
  }
  requireWritingCredential(actor, doing);
}

/** Refuses a credential allowed to read only (an OAuth app of scope `read`) what writes outside any one document. */
export function requireWritingCredential(actor: Actor, doing: string): void {
  if (actor.cap === "read") {
    throw new DomainError(
      "PERMISSION_DENIED",
      `This app was allowed to read only, so it cannot ${doing}. Connect it again and allow read and write.`,
    );
  }
}

/**
 * What the caller may do with each section of a version of the document: the
 * one answer every read, write, merge analysis, history message, storage key,
 * download link and page asks (`sectionRules` makes it). A section's
 * permission comes from the version's overrides, and a section hidden from the
 * caller at the default branch's head now is hidden in every version, on every
 * branch and at every commit (`sectionPermissionInVersion`).
 */
export interface SectionRules {
  readonly access: DocumentAccess;
  /** The caller's permission on section `sectionId` as `version` (its overrides) has it. */
  permission(sectionId: string, version: SectionOverrides): Permission;
}

/** The overrides of the sections of a tree that hide them from someone who can read the document, by section id. */
const hidingSections = createCache<string, ReadonlyMap<string, SectionOverrides>>({
  name: "hiding sections per tree",
  keptTrueBy: "keyed by tree hash: a tree and its section versions never change",
  max: 10_000,
});

async function hidingSectionsAt(tx: Tx, treeHash: string): Promise<ReadonlyMap<string, SectionOverrides>> {
  const cached = hidingSections.get(treeHash);
  if (cached) return cached;
  const tree = await loadTree(tx, treeHash);
  const versions = await loadSections(
    tx,
    tree.sections.map((e) => e.blobHash),
  );
  const hiding = new Map<string, SectionOverrides>();
  for (const entry of tree.sections) {
    const { defaultPermission, aiAccess } = versions.get(entry.blobHash)!;
    if (isRestrictedSection({ defaultPermission, aiAccess })) hiding.set(entry.sectionId, { defaultPermission, aiAccess });
  }
  return hidingSections.set(treeHash, hiding);
}

/**
 * The sections at the head of the document's default branch now whose
 * overrides hide them from someone who can read the document, with those
 * overrides, by section id.
 */
export async function sectionsHidingAtDefaultHead(
  tx: Tx,
  document: Pick<DocumentRow, "id" | "defaultBranch">,
): Promise<ReadonlyMap<string, SectionOverrides>> {
  const branch = await getBranch(tx, document.id, document.defaultBranch);
  // One commit, usually remembered: no graph walk (a CommitGraph would fetch generations below it too).
  const head = await getCommit(tx, document.id, branch.headCommitId);
  return hidingSectionsAt(tx, head.treeHash);
}

/** `sectionsHidingAtDefaultHead`, read once per access (an access serves one request, or one decision of a live room). */
const defaultHeadHiding = new WeakMap<DocumentAccess, Promise<ReadonlyMap<string, SectionOverrides>>>();

/** `sectionsHidingAtDefaultHead` for the request `access` serves: read once, however many rules and messages ask. */
export function hidingAtDefaultHead(tx: Tx, access: DocumentAccess): Promise<ReadonlyMap<string, SectionOverrides>> {
  let hiding = defaultHeadHiding.get(access);
  if (!hiding) {
    hiding = sectionsHidingAtDefaultHead(tx, access.document);
    defaultHeadHiding.set(access, hiding);
  }
  return hiding;
}

/**
 * The caller's `SectionRules`. `headOf` names the branch when every version
 * the rules will judge is that branch's head as it is now (a read or a write
 * there); null when they judge commits or several versions (history, a
 * merge's sides). On the default branch's head, and for managers, no second
 * version is looked at: the overrides there are the hiding.
 */
export async function sectionRules(tx: Tx, access: DocumentAccess, headOf: string | null): Promise<SectionRules> {
  const { subject, facts } = access;
  const atDefaultHead = access.canManage || headOf === access.document.defaultBranch ? undefined : await hidingAtDefaultHead(tx, access);
  return {
    access,
    permission: (sectionId, version) => sectionPermissionInVersion(subject, facts, version, atDefaultHead?.get(sectionId)),
  };
}
