import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { PageHeading } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt, memberNames } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { StatusBadge } from "@/app/merge-requests/parts";
import { getBridge } from "@/server/bridge";
import "../merge-requests/merge-requests.css";
import "./changesets.css";

export const metadata: Metadata = { title: "Changesets" };

const PAGE_SIZE = 20;
const STATUSES = ["open", "merged", "closed"] as const;

export default async function ChangesetsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const statusParam = firstParam(query.status);
  const cursor = firstParam(query.cursor);
  const user = await requireUser(withQuery("/changesets", { status: statusParam, cursor }));
  const status = statusParam === "all" ? undefined : (STATUSES.find((s) => s === statusParam) ?? "open");
  const listed = await attempt(() =>
    getBridge().callTool("changesets", user.id, {
      action: "list",
      ...(status ? { status } : {}),
      ...(cursor ? { cursor } : {}),
      limit: PAGE_SIZE,
    }),
  );
  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list changesets" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }
  const { changesets, nextCursor } = listed.value;
  const names = await attempt(() =>
    memberNames(
      user.id,
      changesets.map((c) => c.authorId),
    ),
  );
  return (
    <AppShell user={user}>
      <PageHeading
        title="Changesets"
        description="One review and one merge for a change that spans documents: every document merges, or none."
        action={
          <Link className="button button-primary" href="/changesets/new">
            Open a changeset
          </Link>
        }
      />
      <form method="get" action="/changesets" className="mr-filters" aria-label="Filter changesets">
        <label className="field">
          <span>Status</span>
          <select name="status" defaultValue={statusParam === "all" ? "all" : (status ?? "open")}>
            <option value="open">Open</option>
            <option value="merged">Merged</option>
            <option value="closed">Closed</option>
            <option value="all">All</option>
          </select>
        </label>
        <button type="submit" className="button">
          Filter
        </button>
      </form>
      {changesets.length === 0 ? (
        <div className="empty-state" data-testid="changeset-list-empty">
          <p>No changesets match.</p>
          <p className="muted small">Open one from a branch name shared by several documents.</p>
        </div>
      ) : (
        <ul className="mr-list" data-testid="changeset-list">
          {changesets.map((c) => (
            <li key={c.changesetId} className="mr-row" data-testid="changeset-row">
              <div className="mr-row-main">
                <Link href={`/changesets/${c.changesetId}`} className="mr-row-title">
                  {c.title}
                </Link>
                <div className="mr-row-meta muted small">
                  <StatusBadge status={c.status} />
                  <span className="mr-branches">
                    <code>{c.sourceBranch}</code> → <code>{c.targetBranch}</code>
                  </span>
                  <span>
                    by {names.ok ? (names.value.get(c.authorId) ?? "a former member") : "someone"} · <TimeAgo value={c.createdAt} />
                  </span>
                </div>
              </div>
              <p className="muted small cs-counts" data-testid="changeset-counts">
                {c.items.length + c.hiddenItems} document{c.items.length + c.hiddenItems === 1 ? "" : "s"}
                {c.itemCounts.merged > 0 ? ` · ${c.itemCounts.merged} merged` : ""}
                {c.hiddenItems > 0 ? ` · ${c.hiddenItems} you may not see` : ""}
              </p>
            </li>
          ))}
        </ul>
      )}
      <nav className="pager" aria-label="Pages">
        {cursor ? <Link href={withQuery("/changesets", { status: statusParam })}>First page</Link> : null}
        {nextCursor ? <Link href={withQuery("/changesets", { status: statusParam, cursor: nextCursor })}>Older</Link> : null}
      </nav>
    </AppShell>
  );
}
