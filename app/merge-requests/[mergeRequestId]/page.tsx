import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache } from "react";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel, failedPage } from "@/app/_components/error-panel";
import { TimeAgo } from "@/app/_components/time-ago";
import { shortId } from "@/app/_lib/format";
import {
  attempt,
  type CommitShow,
  listBranches,
  memberNames,
  type MergeAnalysisView,
  type MergeRequestView,
  type Outcome,
  UUID_PATTERN,
} from "@/app/_lib/quire";
import { getSessionUser, requireUser } from "@/app/_lib/session";
import { changeCount, SectionChangeList } from "@/app/documents/[documentId]/history/section-change-list";
import { DeleteBranchButton } from "@/app/documents/[documentId]/settings/settings-client";
import { getBridge } from "@/server/bridge";
import { actingName } from "@/server/core/agents";
import { conflictSides } from "../conflict-sides";
import { ReviewerStates, StatusBadge } from "../parts";
import { HeaderEditor, LiveNotice, type MyReviewState, ReviewActions, ReviewWorkspace } from "./review-client";
import "../merge-requests.css";

type Props = { params: Promise<{ mergeRequestId: string }> };

const getOnce = cache((userId: string, mergeRequestId: string) =>
  attempt(async (): Promise<MergeRequestView> => getBridge().callTool("merge_requests", userId, { action: "get", mergeRequestId })),
);

export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { mergeRequestId } = await params;
  const user = await getSessionUser();
  if (!user || !UUID_PATTERN.test(mergeRequestId)) return { title: "Merge request" };
  const found = await getOnce(user.id, mergeRequestId);
  return { title: found.ok ? found.value.title : "Merge request" };
}

/**
 * Your review as the buttons need it: an approval that does not cover every change you may see now (stale, given as
 * an agent, or given before a section was added) can be given again.
 */
function myReviewState(request: MergeRequestView, mine: MergeRequestView["reviewers"][number]): MyReviewState {
  if (mine.state !== "approved") return mine.state;
  // The author's own approval never counts, so it covers nothing to renew.
  const coversEveryChange =
    request.authorId === mine.userId || request.sectionReviews.every((section) => section.approvedBy.includes(mine.userId));
  return mine.reviewedAs === "person" && !mine.stale && coversEveryChange ? "approved" : "outdated";
}

export default async function MergeRequestPage({ params }: Props) {
  const { mergeRequestId } = await params;
  const user = await requireUser(`/merge-requests/${encodeURIComponent(mergeRequestId)}`);
  if (!UUID_PATTERN.test(mergeRequestId)) notFound();
  const found = await getOnce(user.id, mergeRequestId);
  if (!found.ok) return failedPage(user, "Could not open this merge request", found);
  const request = found.value;
  const bridge = getBridge();
  const mergeCommitId = request.status === "merged" ? request.mergeCommitId : null;
  const [analysis, merged, document, authorMatch, sourceBranch] = await Promise.all([
    request.status === "open"
      ? attempt(
          async (): Promise<MergeAnalysisView> =>
            bridge.callTool("merge_requests", user.id, { action: "analyze", proposals: true, mergeRequestId }),
        )
      : Promise.resolve(null),
    // A merged request shows what its merge brought: the merge result against where the target stood before it (recorded
    // since migration 0015; before, a merge commit against its first parent, which is the same commit).
    mergeCommitId
      ? attempt(() =>
          bridge.callTool("documents", user.id, {
            action: "show",
            documentId: request.documentId,
            commitId: mergeCommitId,
            ...(request.mergedOntoCommitId ? { baseCommitId: request.mergedOntoCommitId } : {}),
          }),
        )
      : Promise.resolve(null),
    attempt(
      async (): Promise<{ name: string; path: string; yourPermission: string }> =>
        bridge.callTool("documents", user.id, { action: "get", documentId: request.documentId }),
    ),
    attempt(() => memberNames(user.id, [request.authorId])),
    // After a merge the source branch is offered for deletion while it exists.
    request.status === "merged"
      ? attempt(async () => (await listBranches(user.id, request.documentId)).find((b) => b.name === request.sourceBranch) ?? null)
      : Promise.resolve(null),
  ]);
  const conflictIds = analysis?.ok ? analysis.value.sections.filter((s) => s.status === "conflict").map((s) => s.sectionId) : [];
  const sides = await conflictSides(user.id, request.documentId, request, conflictIds);
  const author = authorMatch.ok ? authorMatch.value.get(request.authorId) : undefined;
  const isAuthor = request.authorId === user.id;
  const opener = author ?? (isAuthor ? "you" : undefined);
  const myReview = request.reviewers.find((r) => r.userId === user.id) ?? null;
  const documentPath = `/documents/${encodeURIComponent(request.documentId)}`;

  return (
    <AppShell user={user} wide>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <ol>
          <li>
            <Link href="/merge-requests">Merge requests</Link>
          </li>
          <li>
            <Link href={`/merge-requests?documentId=${encodeURIComponent(request.documentId)}`}>
              {document.ok ? document.value.name : "Document"}
            </Link>
          </li>
          <li aria-current="page">{request.title}</li>
        </ol>
      </nav>
      <header className="mr-header">
        <HeaderEditor
          mergeRequestId={mergeRequestId}
          title={request.title}
          description={request.description}
          editable={isAuthor && request.status === "open"}
        />
        <div className="mr-row-meta muted small">
          <StatusBadge status={request.status} />
          <span className="mr-branches">
            <Link href={`${documentPath}?branch=${encodeURIComponent(request.sourceBranch)}`}>
              <code>{request.sourceBranch}</code>
            </Link>{" "}
            →{" "}
            <Link href={`${documentPath}?branch=${encodeURIComponent(request.targetBranch)}`}>
              <code>{request.targetBranch}</code>
            </Link>
          </span>
          <span>
            opened {opener ? `by ${actingName(opener, request.agentName ? { name: request.agentName } : null)} ` : ""}
            <TimeAgo value={request.createdAt} />
          </span>
        </div>
      </header>

      <div className="mr-layout">
        <div className="mr-main">
          {request.status !== "open" ? (
            <div className="banner banner-info" role="status" data-testid="final-state">
              {request.status === "merged" ? (
                <>
                  Merged <TimeAgo value={request.mergedAt ?? request.updatedAt} />
                  {request.mergeCommitId ? (
                    <>
                      {" "}
                      as{" "}
                      <Link href={`${documentPath}?branch=${encodeURIComponent(request.targetBranch)}&commit=${request.mergeCommitId}`}>
                        <code>{request.mergeCommitId.slice(0, 8)}</code>
                      </Link>
                    </>
                  ) : null}
                  .
                  {sourceBranch?.ok && sourceBranch.value && document.ok && document.value.yourPermission === "edit" ? (
                    <span className="mr-delete-branch" data-testid="delete-source-branch">
                      <DeleteBranchButton
                        documentId={request.documentId}
                        branchName={request.sourceBranch}
                        uncommittedChanges={sourceBranch.value.draft.uncommittedChanges}
                        label={`Delete branch ${request.sourceBranch}`}
                      />
                    </span>
                  ) : sourceBranch?.ok && sourceBranch.value === null ? (
                    <span className="muted" data-testid="source-branch-gone">
                      {" "}
                      Branch <code>{request.sourceBranch}</code> has been deleted.
                    </span>
                  ) : null}
                </>
              ) : (
                <>
                  Closed <TimeAgo value={request.closedAt ?? request.updatedAt} /> without merging.
                </>
              )}
            </div>
          ) : null}
          {merged ? (
            <MergedChanges
              merged={merged}
              mergedOntoCommitId={request.mergedOntoCommitId}
              historyHref={`${documentPath}/history?branch=${encodeURIComponent(request.targetBranch)}&commit=${mergeCommitId}`}
            />
          ) : null}
          {request.status !== "open" ? null : analysis && !analysis.ok ? (
            <ErrorPanel title="Could not analyze this merge" code={analysis.code} message={analysis.message} />
          ) : analysis?.ok ? (
            <>
              <LiveNotice
                // A fresh analysis (new heads) starts a fresh watch.
                key={`${analysis.value.sourceHeadCommitId}:${analysis.value.targetHeadCommitId}`}
                documentId={request.documentId}
                branches={{ source: request.sourceBranch, target: request.targetBranch }}
                heads={{ source: analysis.value.sourceHeadCommitId, target: analysis.value.targetHeadCommitId }}
              />
              <ReviewWorkspace request={request} analysis={analysis.value} conflictSides={sides} />
            </>
          ) : null}
        </div>
        <aside className="mr-aside">
          <section className="panel" aria-labelledby="reviewers-title">
            <h2 className="panel-title" id="reviewers-title">
              Reviewers
            </h2>
            <ReviewerStates request={request} />
            <p className="muted small" data-testid="approval-rule">
              {request.requiredApprovals > 0
                ? `${request.approvals} of ${request.requiredApprovals} required approval${request.requiredApprovals === 1 ? "" : "s"}.`
                : `${request.approvals} approval${request.approvals === 1 ? "" : "s"}; this document requires none.`}{" "}
              An approval covers the sections its reviewer saw, as they saw them: a section changed or added since needs its own review.
              Reviews made with an API token are an agent&apos;s and do not count.
            </p>
            {request.status === "open" && analysis?.ok ? (
              <ReviewActions
                mergeRequestId={mergeRequestId}
                myState={myReview ? myReviewState(request, myReview) : null}
                heads={{ source: analysis.value.sourceHeadCommitId, target: analysis.value.targetHeadCommitId }}
              />
            ) : null}
          </section>
        </aside>
      </div>
    </AppShell>
  );
}

/**
 * The changes a merged request brought: the merge result against where the target stood before the merge (for a merge
 * commit, its first parent). A request merged by fast-forward before that was recorded (migration 0015) has no such
 * commit to compare with, so the page says so and links to the history, where each commit it brought shows its changes.
 */
function MergedChanges({
  merged,
  mergedOntoCommitId,
  historyHref,
}: {
  merged: Outcome<CommitShow>;
  mergedOntoCommitId: string | null;
  historyHref: string;
}) {
  if (!merged.ok) return <ErrorPanel title="Could not show the merged changes" code={merged.code} message={merged.message} />;
  const { commit, changes } = merged.value;
  if (commit.kind !== "merge" && !mergedOntoCommitId) {
    return (
      <section className="mr-merged-changes" aria-labelledby="merged-changes-title">
        <h2 id="merged-changes-title">Merged changes</h2>
        <p className="muted small" data-testid="merged-fast-forward">
          This merge was a fast-forward: the target branch moved to the source&apos;s head, <code>{shortId(commit.commitId)}</code>, without
          a merge commit. <Link href={historyHref}>See the commits it brought in the history</Link>.
        </p>
      </section>
    );
  }
  return (
    <section className="mr-merged-changes" aria-labelledby="merged-changes-title">
      <h2 id="merged-changes-title">
        Merged changes <span className="muted small">({changeCount(changes).toLowerCase()})</span>
      </h2>
      {commit.kind !== "merge" ? (
        <p className="muted small" data-testid="merged-fast-forward">
          A fast-forward: the target branch moved from <code>{shortId(mergedOntoCommitId!)}</code> to the source&apos;s head,{" "}
          <code>{shortId(commit.commitId)}</code>, without a merge commit. <Link href={historyHref}>Its commits in the history</Link>.
        </p>
      ) : null}
      <SectionChangeList changes={changes} />
    </section>
  );
}
