/**
 * Who may do what, decided in one place over rows already loaded. Every
 * action, the read path, diffs, downloads and (later) the live-collaboration
 * upgrade ask these functions; none of them decides on its own.
 *
 * Permissions are ordered none < read < edit.
 * - Workspace owners and admins, and a document's creator, manage the document: edit everywhere
 *   (managing — permissions, share links — is for humans only, never an AI call).
 * - Members: their own grant on the document if they have one, else the team
 *   default — the section's `defaultPermission` override where set, else the document's.
 * - Guests: only what a grant gives them.
 * - A share-link visitor: the link's permission on that one document.
 * - Every MCP call is an AI call: the result is capped by `aiAccess` (the
 *   section's override, else the document's).
 */
import type { Role } from "@/db/schema";
import type { Permission } from "@/server/core/document-model";

const RANK: Record<Permission, number> = { none: 0, read: 1, edit: 2 };

export const atLeast = (have: Permission, need: Permission): boolean => RANK[have] >= RANK[need];
export const minPermission = (a: Permission, b: Permission): Permission => (RANK[a] <= RANK[b] ? a : b);

export type AccessSubject =
  | { kind: "member"; userId: string; role: Role; isAi: boolean }
  | { kind: "share"; permission: Permission };

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

/** Managers set permissions and share links. Never through an AI call: an agent must not raise its own limits. */
export function canManageDocument(subject: AccessSubject, doc: DocumentFacts): boolean {
  return (
    subject.kind === "member" &&
    !subject.isAi &&
    (subject.role === "owner" || subject.role === "admin" || subject.userId === doc.createdBy)
  );
}

const isManagerRole = (subject: AccessSubject) =>
  subject.kind === "member" && (subject.role === "owner" || subject.role === "admin");

function humanPermission(subject: AccessSubject, doc: DocumentFacts, teamDefault: Permission): Permission {
  if (subject.kind === "share") return subject.permission;
  if (isManagerRole(subject) || subject.userId === doc.createdBy) return "edit";
  if (doc.grant) return doc.grant;
  return subject.role === "guest" ? "none" : teamDefault;
}

/** The subject's permission on the document as a whole (its identity, tags, properties, new sections). */
export function documentPermission(subject: AccessSubject, doc: DocumentFacts): Permission {
  const human = humanPermission(subject, doc, doc.defaultPermission);
  return subject.kind === "member" && subject.isAi ? minPermission(human, doc.aiAccess) : human;
}

/** The subject's permission on one section, given that section's overrides. */
export function sectionPermission(subject: AccessSubject, doc: DocumentFacts, section: SectionOverrides): Permission {
  const document = documentPermission(subject, doc);
  if (document === "none") return "none";
  const human = humanPermission(subject, doc, section.defaultPermission ?? doc.defaultPermission);
  return subject.kind === "member" && subject.isAi ? minPermission(human, section.aiAccess ?? doc.aiAccess) : human;
}

/** The strictest of a section's permissions across the versions an operation touches. */
export function strictestSectionPermission(
  subject: AccessSubject,
  doc: DocumentFacts,
  versions: ReadonlyArray<SectionOverrides | null | undefined>,
): Permission {
  return versions.reduce<Permission>(
    (acc, v) => (v ? minPermission(acc, sectionPermission(subject, doc, v)) : acc),
    "edit",
  );
}
