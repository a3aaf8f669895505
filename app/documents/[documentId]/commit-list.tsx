/**
 * A branch's commits, newest first: message, author, time, short id (a link
 * chosen by the page), and marks for merges, reverts, the head and the commit
 * being viewed. Links are not prefetched: a long history would otherwise load
 * every commit's page ahead of a click.
 */
import Link from "next/link";
import { TimeAgo } from "@/app/_components/time-ago";
import { firstLine, shortId } from "@/app/_lib/format";
import type { CommitSummary } from "@/app/_lib/quire";

export function CommitList({
  commits,
  headId,
  viewing,
  hrefFor,
}: {
  commits: readonly CommitSummary[];
  /** The branch head, when this page of the log starts at it. */
  headId: string | undefined;
  viewing: string | undefined;
  hrefFor: (commitId: string) => string;
}) {
  return (
    <ol className="commit-log" data-testid="commit-log">
      {commits.map((c) => {
        const isViewing = viewing !== undefined && (c.commitId === viewing || c.commitId.startsWith(viewing));
        return (
          <li key={c.commitId} className={isViewing ? "commit commit-current" : "commit"}>
            <p className="commit-message" title={c.message}>
              {firstLine(c.message)}
            </p>
            <p className="commit-meta">
              <span data-testid="commit-made-by">{c.madeBy}</span>
              <span aria-hidden="true">·</span>
              <TimeAgo value={c.createdAt} />
              <span aria-hidden="true">·</span>
              <Link href={hrefFor(c.commitId)} prefetch={false} className="commit-id" title={`View commit ${c.commitId}`}>
                {shortId(c.commitId)}
              </Link>
              {c.kind !== "write" ? <span className="badge badge-small">{c.kind}</span> : null}
              {c.commitId === headId ? <span className="badge badge-small">head</span> : null}
              {isViewing ? <span className="badge badge-small badge-accent">viewing</span> : null}
            </p>
          </li>
        );
      })}
    </ol>
  );
}
