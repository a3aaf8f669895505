/**
 * Who may do what, decided in one place over rows already loaded. Every
 * action, the read path (the share page included), history, diffs, downloads
 * and (later) the live-collaboration upgrade ask these functions; none of
 * them decides on its own.
 *
 * Permissions are ordered none < read < edit.
 * - Managers — workspace owners and admins, and a document's creator — edit
 *   everywhere, hidden sections included.
 * - Everyone else starts from their standing on the document: their own grant
 *   if they have one, else (members) the team default; guests have only what a
 *   grant gives them; a share-link visitor has the link's permission.
 * - A section's `defaultPermission` override then decides the section:
 *   for a member without a grant it replaces the team default (it may raise or
 *   lower it); for a grant or link holder the result is the most restrictive
 *   of the override and the grant/link — grants and links raise a document,
 *   never a section, so an override of `none` hides the section from every
 *   principal below manager.
 * - An agent (every call made with an API token or an OAuth token, on every
 *   face) is capped by `aiAccess`: the section's override, else the
 *   document's; an OAuth token of scope `read` is capped to reading as well.
 * - Changing access — permissions, share links, roles, members, invites,
 *   tokens, and a section's own overrides however they would change (a
 *   section write, a revert, a merge and its resolutions) — is for people
 *   only (`accessChangeRefusal`, `changesSectionAccess`).
 */
import type { Role } from "@/db/schema";
import type { Permission } from "@/server/core/document-model";

const RANK: Record<Permission, number> = { none: 0, read: 1, edit: 2 };

export const atLeast = (have: Permission, need: Permission): boolean => RANK[have] >= RANK[need];
export const minPermission = (a: Permission, b: Permission): Permission => (RANK[a] <= RANK[b] ? a : b);

/**
 * Who a credential speaks for. A signed-in browser session (and the CLI, run by
 * whoever holds the database) is the person; an API token is an agent, on
 * every face — MCP, tRPC, live rooms — whoever owns it.
 */
export type Principal = "person" | "agent";

export type AccessSubject =
  /** `cap`: the most the credential allows (an OAuth token of scope `read`), below the person's standing. */
  { kind: "member"; userId: string; role: Role; principal: Principal; cap?: Permission } | { kind: "share"; permission: Permission };

/** What the policy needs to know about a document and the subject's standing on it. */
export interface DocumentFacts {
  createdBy: string;
  defaultPermission: Permission;
  aiAccess: Permission;
  /** The subject's own grant on this document, if any. */
  grant: Permission | null;
}

export interface SectionOverrides {
  defaultPermission: Permission | null;
  aiAccess: Permission | null;
}

export type AccessRefusal = { code: "PERMISSION_DENIED"; message: string };

const AGENTS_CANNOT_CHANGE_ACCESS =
  "An API token acts as an agent; agents cannot change access, roles, invites, tokens or the workspace's settings.";

export const AGENT_CANNOT_CHANGE_ACCESS = `${AGENTS_CANNOT_CHANGE_ACCESS} Sign in to do this.`;

/**
 * The one rule for changing access (a document's permissions and share links,
 * a section's `defaultPermission` and `aiAccess`, workspace roles and members,
 * invites, API tokens): only a person may, never an agent — an agent must not
 * raise its own limits or mint credentials. Returns the refusal, or null when
 * the principal may (who else may is the caller's role question, asked after
 * this). `nextStep` tells the agent what to do instead, where signing in is
 * not the whole answer.
 */
export function accessChangeRefusal(principal: Principal, nextStep = "Sign in to do this."): AccessRefusal | null {
  return principal === "agent" ? { code: "PERMISSION_DENIED", message: `${AGENTS_CANNOT_CHANGE_ACCESS} ${nextStep}` } : null;
}

/**
 * Whether a section's overrides differ between two versions of it (`null`
 * before: the section is new, so any override it brings is a change). A
 * section that goes away changes no one's access to what remains.
 */
export function changesSectionAccess(before: SectionOverrides | null | undefined, after: SectionOverrides): boolean {
  return (before?.defaultPermission ?? null) !== after.defaultPermission || (before?.aiAccess ?? null) !== after.aiAccess;
}

const isAgent = (subject: AccessSubject): boolean => subject.kind === "member" && subject.principal === "agent";

/** Owners, admins and the document's creator, whoever acts for them. */
function holdsManagerRole(subject: AccessSubject, doc: DocumentFacts): boolean {
  return subject.kind === "member" && (subject.role === "owner" || subject.role === "admin" || subject.userId === doc.createdBy);
}

/** Managers set permissions and share links — in person only. */
export function canManageDocument(subject: AccessSubject, doc: DocumentFacts): boolean {
  return subject.kind === "member" && accessChangeRefusal(subject.principal) === null && holdsManagerRole(subject, doc);
}

/** The subject's standing on the document, before any AI cap. */
function humanDocumentPermission(subject: AccessSubject, doc: DocumentFacts): Permission {
  if (subject.kind === "share") return subject.permission;
  if (holdsManagerRole(subject, doc)) return "edit";
  if (doc.grant) return doc.grant;
  return subject.role === "guest" ? "none" : doc.defaultPermission;
}

/** The subject's permission on a section, before any AI cap. */
function humanSectionPermission(subject: AccessSubject, doc: DocumentFacts, section: SectionOverrides): Permission {
  const document = humanDocumentPermission(subject, doc);
  if (holdsManagerRole(subject, doc) || document === "none") return document;
  const override = section.defaultPermission;
  if (override === null) return document;
  // A member holding no grant: the override replaces the team default for this section.
  if (subject.kind === "member" && doc.grant === null) return override;
  // A grant or a share link raises the document, never a section: the most restrictive wins.
  return minPermission(document, override);
}

/** The subject's permission on the document as a whole (its identity, tags, properties, new sections). */
export function documentPermission(subject: AccessSubject, doc: DocumentFacts): Permission {
  const human = humanDocumentPermission(subject, doc);
  return credentialCap(subject, isAgent(subject) ? minPermission(human, doc.aiAccess) : human);
}

/** The credential's own cap (an OAuth token of scope `read`) over a permission. */
const credentialCap = (subject: AccessSubject, permission: Permission): Permission =>
  subject.kind === "member" && subject.cap ? minPermission(permission, subject.cap) : permission;

/** The subject's permission on one section, given that section's overrides. */
export function sectionPermission(subject: AccessSubject, doc: DocumentFacts, section: SectionOverrides): Permission {
  if (documentPermission(subject, doc) === "none") return "none";
  const human = humanSectionPermission(subject, doc, section);
  return credentialCap(subject, isAgent(subject) ? minPermission(human, section.aiAccess ?? doc.aiAccess) : human);
}

/**
 * The subject's permission on a section in any version of the document (a
 * branch, a commit, a side of a merge): that version's overrides decide,
 * except that a section hidden from the subject at the default branch's head
 * now (`atDefaultHead`: its overrides there, if it is there) is hidden in
 * every version. Hiding covers the past: every override reaches the default
 * branch through a merge, so an older copy of a section, on another branch or
 * at an older commit, never reveals what the default branch hides now.
 */
export function sectionPermissionInVersion(
  subject: AccessSubject,
  doc: DocumentFacts,
  version: SectionOverrides,
  atDefaultHead: SectionOverrides | undefined,
): Permission {
  if (atDefaultHead && sectionPermission(subject, doc, atDefaultHead) === "none") return "none";
  return sectionPermission(subject, doc, version);
}

/**
 * Whether the agent cap (`aiAccess`) is the reason the subject holds less than
 * `need`: its person, signed in, would hold it. Lets refusals name the real reason.
 */
export function agentCapBelow(subject: AccessSubject, doc: DocumentFacts, need: Permission, section?: SectionOverrides): boolean {
  if (!isAgent(subject) || subject.kind !== "member") return false;
  const person: AccessSubject = { ...subject, principal: "person" };
  const have = section ? sectionPermission(subject, doc, section) : documentPermission(subject, doc);
  const personHas = section ? sectionPermission(person, doc, section) : documentPermission(person, doc);
  return !atLeast(have, need) && atLeast(personHas, need);
}

/**
 * Whether a section version is hidden from someone who can read its document:
 * a team override of `none` (hidden below manager) or an AI override of
 * `none` (hidden from agents). Generated messages that would quote a commit
 * touching such a version are written without the quote.
 */
export const isRestrictedSection = (section: SectionOverrides): boolean =>
  section.defaultPermission === "none" || section.aiAccess === "none";
