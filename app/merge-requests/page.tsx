import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { PageHeading } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt, type MergeAnalysisView, memberNames, type MergeRequestView, UUID_PATTERN } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { AuthorFilter } from "./author-filter";
import { ReviewerStates, StatusBadge } from "./parts";
import "./merge-requests.css";

export const metadata: Metadata = { title: "Merge requests" };

const PAGE_SIZE = 20;
const STATUSES = ["open", "merged", "closed"] as const;
type Status = (typeof STATUSES)[number];

export default async function MergeRequestsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const user = await requireUser(
    withQuery("/merge-requests", Object.fromEntries(Object.entries(query).map(([k, v]) => [k, firstParam(v)]))),
  );
  const documentId = firstParam(query.documentId);
  const statusParam = firstParam(query.status);
  const status: Status | undefined = statusParam === "all" ? undefined : (STATUSES.find((s) => s === statusParam) ?? "open");
  const author = firstParam(query.author);
  const authorId = author && UUID_PATTERN.test(author) ? author : undefined;
  const waiting = firstParam(query.waiting) === "1";
  const cursor = firstParam(query.cursor);
  const bridge = getBridge();

  const [listed, document] = await Promise.all([
    attempt(
      async (): Promise<{ mergeRequests: MergeRequestView[]; nextCursor: string | null }> =>
        bridge.callTool("merge_requests", user.id, {
          action: "list",
          ...(documentId && UUID_PATTERN.test(documentId) ? { documentId } : {}),
          ...(status ? { status } : {}),
          ...(authorId ? { authorId } : {}),
          ...(waiting ? { awaitingReviewBy: user.id } : {}),
          ...(cursor ? { cursor } : {}),
          limit: PAGE_SIZE,
        }),
    ),
    documentId && UUID_PATTERN.test(documentId)
      ? attempt(async (): Promise<{ name: string }> => bridge.callTool("documents", user.id, { action: "get", documentId }))
      : Promise.resolve(null),
  ]);
  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list merge requests" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }
  const requests = listed.value.mergeRequests;
  // Whether an open request has conflicts is the analysis's answer; closed and merged ones are history.
  const analyses = new Map(
    await Promise.all(
      requests
        .filter((r) => r.status === "open")
        .map(
          async (r) =>
            [
              r.mergeRequestId,
              await attempt(
                async (): Promise<MergeAnalysisView> =>
                  bridge.callTool("merge_requests", user.id, { action: "analyze", mergeRequestId: r.mergeRequestId }),
              ),
            ] as const,
        ),
    ),
  );
  const names = await attempt(() => memberNames(user.id, [...requests.map((r) => r.authorId), ...(authorId ? [authorId] : [])]));
  const nameOf = (userId: string) => (names.ok ? (names.value.get(userId) ?? "a former member") : "someone");
  const filters = { documentId, status: statusParam, author, waiting: waiting ? "1" : undefined };

  return (
    <AppShell user={user}>
      <PageHeading
        title="Merge requests"
        description={
          document?.ok ? (
            <>
              Proposed changes to <strong>{document.value.name}</strong> ·{" "}
              <Link href={withQuery("/merge-requests", { ...filters, documentId: undefined })}>all documents</Link>
            </>
          ) : (
            "Branches proposed for merging, newest first. Open one to review its changes."
          )
        }
        action={
          documentId ? (
            <Link className="button button-primary" href={withQuery("/merge-requests/new", { documentId })}>
              New merge request
            </Link>
          ) : undefined
        }
      />
      <form method="get" action="/merge-requests" className="mr-filters" aria-label="Filter merge requests">
        {documentId ? <input type="hidden" name="documentId" value={documentId} /> : null}
        <label className="field">
          <span>Status</span>
          <select name="status" defaultValue={statusParam === "all" ? "all" : (status ?? "open")}>
            <option value="open">Open</option>
            <option value="merged">Merged</option>
            <option value="closed">Closed</option>
            <option value="all">All</option>
          </select>
        </label>
        <AuthorFilter key={authorId} me={user.id} filtered={authorId ? { userId: authorId, name: nameOf(authorId) } : null} />
        <label className="mr-check">
          <input type="checkbox" name="waiting" value="1" defaultChecked={waiting} /> Waiting for my review
        </label>
        <button type="submit" className="button">
          Filter
        </button>
      </form>

      {requests.length === 0 ? (
        <div className="empty-state" data-testid="merge-request-list-empty">
          <p>No merge requests match these filters.</p>
          <p className="muted small">Open one from a branch on a document&apos;s page.</p>
        </div>
      ) : (
        <ul className="mr-list" data-testid="merge-request-list">
          {requests.map((r) => {
            const analysis = analyses.get(r.mergeRequestId);
            return (
              <li key={r.mergeRequestId} className="mr-row" data-testid="merge-request-row">
                <div className="mr-row-main">
                  <Link href={`/merge-requests/${r.mergeRequestId}`} className="mr-row-title">
                    {r.title}
                  </Link>
                  <div className="mr-row-meta muted small">
                    <StatusBadge status={r.status} />
                    <span className="mr-branches">
                      <code>{r.sourceBranch}</code> → <code>{r.targetBranch}</code>
                    </span>
                    <span>
                      by {nameOf(r.authorId)} · <TimeAgo value={r.createdAt} />
                    </span>
                    {analysis?.ok && analysis.value.hasConflicts ? (
                      <span className="badge badge-conflict" data-testid="conflicts-flag">
                        Conflicts
                      </span>
                    ) : null}
                  </div>
                </div>
                <ReviewerStates request={r} />
              </li>
            );
          })}
        </ul>
      )}
      <nav className="pager" aria-label="Pages">
        {cursor ? <Link href={withQuery("/merge-requests", filters)}>First page</Link> : null}
        {listed.value.nextCursor ? (
          <Link href={withQuery("/merge-requests", { ...filters, cursor: listed.value.nextCursor })}>Older</Link>
        ) : null}
      </nav>
    </AppShell>
  );
}
