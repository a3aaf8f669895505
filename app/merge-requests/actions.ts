"use server";

/**
 * Server actions behind the merge request pages. Each runs as the signed-in
 * user through the bridge, where the merge_requests tool asks the access
 * policies; the pages only show what the tool answers.
 */
import { type ActionResult, runAsUser } from "@/app/_lib/action-result";
import type { MergeRequestView } from "@/app/_lib/quire";
import { getBridge } from "@/server/bridge";

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const asReviewer = <T>(run: (userId: string) => Promise<T>) => runAsUser("merge request", run);

export interface PickedMember {
  userId: string;
  name: string;
  email: string;
}

/** Members whose name or email starts with the query (for the reviewer picker). */
export async function searchMembers(query: unknown): Promise<ActionResult<PickedMember[]>> {
  const q = text(query).trim();
  if (q === "") return { ok: true, value: [] };
  return asReviewer(async (me) => {
    const found: { members: PickedMember[] } = await getBridge().callTool("members", me, { action: "search", query: q, limit: 8 });
    return found.members.map(({ userId, name, email }) => ({ userId, name, email }));
  });
}

export async function createMergeRequest(input: {
  documentId: unknown;
  sourceBranch: unknown;
  targetBranch: unknown;
  title: unknown;
  description: unknown;
  reviewerIds: unknown;
}): Promise<ActionResult<{ mergeRequestId: string }>> {
  const reviewerIds = Array.isArray(input.reviewerIds) ? input.reviewerIds.map(text).filter(Boolean) : [];
  const description = text(input.description).trim();
  return asReviewer(async (me) => {
    const created: MergeRequestView = await getBridge().callTool("merge_requests", me, {
      action: "create",
      documentId: text(input.documentId),
      sourceBranch: text(input.sourceBranch),
      targetBranch: text(input.targetBranch),
      title: text(input.title),
      ...(description ? { description } : {}),
      reviewerIds,
    });
    return { mergeRequestId: created.mergeRequestId };
  });
}

export async function editMergeRequest(mergeRequestId: unknown, input: { title: unknown; description: unknown }): Promise<ActionResult> {
  const description = text(input.description).trim();
  return asReviewer(async (me) => {
    await getBridge().callTool("merge_requests", me, {
      action: "update",
      mergeRequestId: text(mergeRequestId),
      newTitle: text(input.title),
      newDescription: description === "" ? null : description,
    });
    return undefined;
  });
}

export type Verdict = "approve" | "request_changes" | "reset";

/** Records the user's review; an approval names the heads the page showed, so nothing unseen is approved. */
export async function reviewMergeRequest(
  mergeRequestId: unknown,
  verdict: Verdict,
  heads: { source: string; target: string },
): Promise<ActionResult> {
  return asReviewer(async (me) => {
    const id = text(mergeRequestId);
    if (verdict === "approve") {
      await getBridge().callTool("merge_requests", me, {
        action: "approve",
        mergeRequestId: id,
        expectedSourceHeadCommitId: text(heads.source),
        expectedTargetHeadCommitId: text(heads.target),
      });
    } else await getBridge().callTool("merge_requests", me, { action: verdict, mergeRequestId: id });
    return undefined;
  });
}

export type SectionChoice = { resolution: "source" | "target" } | { resolution: "merged"; text: string };

export interface MergeChoices {
  sections: Record<string, SectionChoice>;
  tagResolution?: "source" | "target";
  scalarPropertyResolutions?: Record<string, "source" | "target">;
  resolvedPath?: string;
  documentDeletionResolution?: "delete" | "keep";
  commitMessage?: string;
  heads: { source: string; target: string };
}

/** Merges exactly the heads the page showed (the server refuses with BRANCH_MOVED otherwise). */
export async function executeMergeRequest(
  mergeRequestId: unknown,
  choices: MergeChoices,
): Promise<ActionResult<{ mergeCommitId: string }>> {
  const resolutions = Object.entries(choices.sections).map(([sectionId, choice]) =>
    choice.resolution === "merged"
      ? { sectionId, resolution: "merged" as const, content: choice.text === "" ? [] : [{ blockType: "text" as const, text: choice.text }] }
      : { sectionId, resolution: choice.resolution },
  );
  return asReviewer(async (me) => {
    const merged = await getBridge().callTool("merge_requests", me, {
      action: "execute",
      mergeRequestId: text(mergeRequestId),
      resolutions,
      ...(choices.tagResolution ? { tagResolution: choices.tagResolution } : {}),
      ...(choices.scalarPropertyResolutions ? { scalarPropertyResolutions: choices.scalarPropertyResolutions } : {}),
      ...(choices.resolvedPath ? { resolvedPath: choices.resolvedPath } : {}),
      ...(choices.documentDeletionResolution ? { documentDeletionResolution: choices.documentDeletionResolution } : {}),
      ...(choices.commitMessage ? { commitMessage: choices.commitMessage } : {}),
      expectedSourceHeadCommitId: text(choices.heads.source),
      expectedTargetHeadCommitId: text(choices.heads.target),
    });
    return { mergeCommitId: merged.mergeCommitId };
  });
}

export async function closeMergeRequest(mergeRequestId: unknown): Promise<ActionResult> {
  return asReviewer(async (me) => {
    await getBridge().callTool("merge_requests", me, { action: "close", mergeRequestId: text(mergeRequestId) });
    return undefined;
  });
}

/** The two branches' heads now: a cheap read (no analysis) the detail page polls to notice a branch moving. */
export async function branchHeads(
  documentId: unknown,
  branches: { source: string; target: string },
): Promise<ActionResult<{ source: string | null; target: string | null }>> {
  return asReviewer(async (me) => {
    const listed: { branches: Array<{ name: string; headCommitId: string }> } = await getBridge().callTool("documents", me, {
      action: "list_branches",
      documentId: text(documentId),
    });
    const head = (name: string) => listed.branches.find((b) => b.name === name)?.headCommitId ?? null;
    return { source: head(text(branches.source)), target: head(text(branches.target)) };
  });
}
