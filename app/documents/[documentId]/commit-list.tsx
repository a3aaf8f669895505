/**
 * A branch's commits, newest first: message and short id (links chosen by the
 * page), author and co-authors (as people, not trailer lines), time, and marks for merges, reverts, the head and the commit
 * being viewed. Links are not prefetched: a long history would otherwise load
 * every commit's page ahead of a click.
 */
import Link from "next/link";
import { PersonNames } from "@/app/_components/person-names";
import { TimeAgo } from "@/app/_components/time-ago";
import { firstLine, shortId } from "@/app/_lib/format";
import type { CommitSummary } from "@/app/_lib/quire";
import { splitCoAuthors } from "@/server/core/commit-messages";

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
        const isViewing = c.commitId === viewing;
        const { body, coAuthors } = splitCoAuthors(c.message);
        return (
          <li key={c.commitId} className={isViewing ? "commit commit-current" : "commit"}>
            <p className="commit-message" title={body}>
              <Link href={hrefFor(c.commitId)} prefetch={false}>
                {firstLine(body)}
              </Link>
            </p>
            <p className="commit-meta">
              <span data-testid="commit-made-by">{c.madeBy}</span>
              {coAuthors.length > 0 ? (
                <>
                  <span>with</span>
                  <PersonNames people={coAuthors} label="Co-authors" />
                </>
              ) : null}
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
