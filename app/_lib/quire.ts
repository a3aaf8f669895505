/**
 * The app's typed view of the Quire tools it reads, over the in-process bridge,
 * in the server's own result types (never redeclared here).
 */
import type { DocumentsResults } from "@/server/actions/documents";
import { MAX_MEMBERS_GOT, type MemberList } from "@/server/actions/members";
import type { DocumentView } from "@/server/actions/read";
import { isDomainError } from "@/server/core/errors";
import { SHORT_COMMIT_ID } from "@/server/core/names";
import { getBridge } from "@/server/bridge";

/** The server's own view types: the app renders exactly what the tools return. */
export type { Permission, SectionReference } from "@/server/core/document-model";
export type { DocumentSummary } from "@/server/actions/documents";
export type { CommitSummary } from "@/server/actions/history";
export type { ThreadView } from "@/server/actions/comments";
export type { CommentReplyView } from "@/server/actions/read";
export type { DocumentView as DocumentRead, SectionView as DocumentSection, TagView as DocumentTag } from "@/server/actions/read";
export type DocumentList = DocumentsResults["list"];
export type BranchSummary = DocumentsResults["list_branches"]["branches"][number];
export type CommitLog = DocumentsResults["log"];
export type CommitShow = DocumentsResults["show"];

export interface DocumentListOptions {
  cursor?: string;
  /** Text in the name or path. */
  search?: string;
  orderBy?: "path" | "updated";
}

/** Someone in the workspace, by id and name. */
export type WorkspacePerson = Pick<MemberList["members"][number], "userId" | "name">;

/** The names of these people (as the caller's workspace knows them), by user id; anyone else is absent. */
export async function memberNames(userId: string, userIds: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(userIds)];
  const names = new Map<string, string>();
  for (let at = 0; at < wanted.length; at += MAX_MEMBERS_GOT) {
    const { members } = await getBridge().callTool("members", userId, { action: "get", userIds: wanted.slice(at, at + MAX_MEMBERS_GOT) });
    for (const member of members) names.set(member.userId, member.name);
  }
  return names;
}

export async function listDocuments(userId: string, options: DocumentListOptions = {}): Promise<DocumentList> {
  const result: DocumentList = await getBridge().callTool("documents", userId, {
    action: "list",
    limit: 100,
    ...(options.cursor ? { cursor: options.cursor } : {}),
    ...(options.search ? { search: options.search } : {}),
    ...(options.orderBy ? { orderBy: options.orderBy } : {}),
  });
  return result;
}

export async function readDocument(
  userId: string,
  documentId: string,
  at: { branchName?: string; commitId?: string },
): Promise<DocumentView> {
  const result: DocumentView = await getBridge().callTool("read", userId, {
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

/** A commit as a URL may name it: its id, or a short id (the tools resolve it, or answer NOT_FOUND / AMBIGUOUS_COMMIT_ID). */
export function isCommitRef(value: string): boolean {
  return UUID_PATTERN.test(value) || SHORT_COMMIT_ID.test(value);
}

export type { MergeRequestView } from "@/server/actions/merge-request-view";
export type { MergeAnalysisView, MergeSectionView } from "@/server/actions/merge-state";
