/**
 * The app's typed view of the Quire tools it reads, over the in-process bridge.
 * The interfaces below are the shapes the pages render; annotating each call's
 * result with them makes tsc report any drift from the server's tool outputs.
 */
import type { Block } from "@/server/core/blocks";
import { isDomainError } from "@/server/core/errors";
import { getBridge } from "@/server/bridge";

export type Permission = "edit" | "read" | "none";

export interface DocumentSummary {
  documentId: string;
  path: string;
  name: string;
  description: string | null;
  updatedAt: string | Date;
}

export interface DocumentList {
  documents: DocumentSummary[];
  nextCursor: string | null;
}

export interface DocumentTag {
  tagId: string;
  path: string;
  displayName: string | null;
  color: string | null;
}

export interface SectionReference {
  referenceId: string;
  targetDocumentId: string;
  targetSectionId: string | null;
  displayTitle: string | null;
}

export interface DocumentSection {
  sectionId: string;
  name: string;
  content: Block[];
  contentHash: string;
  position: number;
  defaultPermission: Permission | null;
  aiAccess: Permission | null;
  references: SectionReference[];
  /** Storage key -> signed download URL; empty for a share-link visitor. */
  downloads: Record<string, string>;
}

export interface DocumentRead {
  documentId: string;
  path: string;
  name: string;
  description: string | null;
  deleted: boolean;
  /** The branch read, or null when reading a commit directly. */
  branchName: string | null;
  headCommitId: string;
  tags: DocumentTag[];
  properties: Record<string, string | number | boolean>;
  sections: DocumentSection[];
}

export interface BranchSummary {
  name: string;
  headCommitId: string;
  isDefault: boolean;
  createdAt: string | Date;
  updatedAt: string | Date;
}

export interface CommitSummary {
  commitId: string;
  message: string;
  authorId: string | null;
  authorName: string | null;
  createdAt: string | Date;
  parentIds: string[];
  kind: string;
}

export interface CommitLog {
  commits: CommitSummary[];
  nextCursor: string | null;
}

export async function listDocuments(userId: string, cursor?: string): Promise<DocumentList> {
  const result: DocumentList = await getBridge().callTool("documents", userId, {
    action: "list",
    limit: 100,
    ...(cursor ? { cursor } : {}),
  });
  return result;
}

export async function readDocument(
  userId: string,
  documentId: string,
  at: { branchName?: string; commitId?: string },
): Promise<DocumentRead> {
  const result: DocumentRead = await getBridge().callTool("read", userId, {
    documentId,
    ...(at.branchName ? { branchName: at.branchName } : {}),
    ...(at.commitId ? { commitId: at.commitId } : {}),
  });
  return result;
}

export async function listBranches(userId: string, documentId: string): Promise<BranchSummary[]> {
  const result: { branches: BranchSummary[] } = await getBridge().callTool("documents", userId, {
    action: "list_branches",
    documentId,
  });
  return result.branches;
}

/** Newest first; `branchName` undefined means the document's default branch. */
export async function commitLog(userId: string, documentId: string, branchName: string | undefined, cursor?: string): Promise<CommitLog> {
  const result: CommitLog = await getBridge().callTool("documents", userId, {
    action: "log",
    documentId,
    ...(branchName ? { branchName } : {}),
    limit: 30,
    ...(cursor ? { cursor } : {}),
  });
  return result;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; code: string; message: string };

/**
 * Runs a bridge call and turns a DomainError into a value, so pages can call
 * Next's notFound()/redirect() outside any try block. Other errors propagate
 * to the error boundary.
 */
export async function attempt<T>(run: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await run() };
  } catch (error) {
    if (isDomainError(error)) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
