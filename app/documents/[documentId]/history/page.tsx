/**
 * A branch's history: its commits (paged), and for the one selected, what it
 * changed per section against its parent (the `show` action's `changes`), a
 * link to the document as it left it, and Revert for those who may edit.
 */
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { Fragment } from "react";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel, failedPage } from "@/app/_components/error-panel";
import { PersonNames } from "@/app/_components/person-names";
import { TimeAgo } from "@/app/_components/time-ago";
import { shortId } from "@/app/_lib/format";
import { attempt, commitLog, isCommitRef, listBranches, UUID_PATTERN } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { splitCoAuthors } from "@/server/core/commit-messages";
import { CommitList } from "../commit-list";
import { PathBreadcrumb } from "../document-body";
import { RevertButton } from "./revert-button";
import { changeCount, SectionChangeList } from "./section-change-list";
import "./history.css";

type Props = { params: Promise<{ documentId: string }>; searchParams: Promise<SearchParams> };

export const metadata: Metadata = { title: "History" };

export default async function HistoryPage({ params, searchParams }: Props) {
  const { documentId } = await params;
  const query = await searchParams;
  const requestedBranch = firstParam(query.branch);
  const cursor = firstParam(query.cursor);
  const selected = firstParam(query.commit);
  const basePath = `/documents/${encodeURIComponent(documentId)}`;
  const historyPath = `${basePath}/history`;
  const user = await requireUser(withQuery(historyPath, { branch: requestedBranch, commit: selected, cursor }));
  if (!UUID_PATTERN.test(documentId) || (selected !== undefined && !isCommitRef(selected))) notFound();

  const [document, branches] = await Promise.all([
    attempt(() => getBridge().callTool("documents", user.id, { action: "get", documentId })),
    attempt(() => listBranches(user.id, documentId)),
  ]);
  if (!document.ok) return failedPage(user, "Could not open this document", document);
  const doc = document.value;
  const branchName = requestedBranch ?? doc.defaultBranch;
  const log = await attempt(() => commitLog(user.id, documentId, branchName, cursor));
  if (!log.ok) return failedPage(user, "Could not load the history", log);
  const commitId = selected ?? log.value.commits[0]?.commitId;
  const shown = commitId
    ? await attempt(() => getBridge().callTool("documents", user.id, { action: "show", documentId, commitId }))
    : undefined;
  if (shown && !shown.ok && shown.code === "NOT_FOUND") notFound();
  // The commit as `show` resolved it (a short id in the URL names a full one) and its message split from its co-authors.
  const viewing = shown?.ok ? shown.value.commit.commitId : commitId;
  const shownMessage = shown?.ok ? splitCoAuthors(shown.value.commit.message) : undefined;
  // The head the page shows (its branch as listed); a revert names it, so nothing committed since is taken back unseen.
  const headCommitId = branches.ok ? branches.value.find((b) => b.name === branchName)?.headCommitId : undefined;
  const canRevert = doc.yourPermission === "edit" && headCommitId !== undefined;
  const branchNames = branches.ok ? branches.value.map((b) => b.name) : [branchName];

  return (
    <AppShell user={user} wide>
      <PathBreadcrumb
        path={doc.path}
        label="Breadcrumb"
        leading={
          <li>
            <Link href="/">Documents</Link>
          </li>
        }
      />
      <div className="page-heading history-heading">
        <div>
          <h1>History</h1>
          <p className="muted">
            <Link href={withQuery(basePath, { branch: branchName })}>{doc.name}</Link> on <strong>{branchName}</strong>, newest first.
          </p>
        </div>
        <form method="get" action={historyPath} className="branch-form">
          <label className="visually-hidden" htmlFor="history-branch">
            Branch
          </label>
          <select id="history-branch" name="branch" defaultValue={branchName}>
            {branchNames.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
          <button type="submit" className="button">
            Switch
          </button>
        </form>
      </div>

      {firstParam(query.unchanged) ? (
        <div className="banner banner-info" role="status">
          The branch already matched that commit, so no revert commit was needed.
        </div>
      ) : null}

      <div className="history-layout">
        <section className="panel history-log" aria-label="Commits">
          {log.value.commits.length === 0 ? (
            <p className="muted small">No commits.</p>
          ) : (
            <CommitList
              commits={log.value.commits}
              headId={cursor ? undefined : log.value.commits[0]?.commitId}
              viewing={viewing}
              hrefFor={(id) => withQuery(historyPath, { branch: branchName, cursor, commit: id })}
            />
          )}
          {cursor || log.value.nextCursor ? (
            <nav className="pager pager-small" aria-label="History pages">
              {cursor ? (
                <Link href={withQuery(historyPath, { branch: branchName })} prefetch={false}>
                  Newest
                </Link>
              ) : (
                <span />
              )}
              {log.value.nextCursor ? (
                <Link href={withQuery(historyPath, { branch: branchName, cursor: log.value.nextCursor })} prefetch={false}>
                  Older commits →
                </Link>
              ) : null}
            </nav>
          ) : null}
        </section>

        <section className="history-commit" aria-label="Selected commit" data-testid="commit-details">
          {!shown ? (
            <p className="muted">Select a commit to see what it changed.</p>
          ) : !shown.ok ? (
            <ErrorPanel title="Could not show this commit" code={shown.code} message={shown.message} />
          ) : (
            <>
              <header className="panel history-commit-header">
                <pre className="history-message">{shownMessage?.body}</pre>
                <p className="commit-meta">
                  <span data-testid="commit-made-by">{shown.value.commit.madeBy}</span>
                  {shownMessage && shownMessage.coAuthors.length > 0 ? (
                    <>
                      <span>with</span>
                      <PersonNames people={shownMessage.coAuthors} label="Co-authors" />
                    </>
                  ) : null}
                  <span aria-hidden="true">·</span>
                  <TimeAgo value={shown.value.commit.createdAt} />
                  <span aria-hidden="true">·</span>
                  <code>{shortId(shown.value.commit.commitId)}</code>
                  {shown.value.commit.kind !== "write" ? <span className="badge badge-small">{shown.value.commit.kind}</span> : null}
                  {shown.value.commit.parentIds.length > 1 ? (
                    <span className="muted">
                      merges{" "}
                      {shown.value.commit.parentIds.map((parentId, index) => (
                        <Fragment key={parentId}>
                          {index > 0 ? " + " : null}
                          <Link href={withQuery(historyPath, { branch: branchName, commit: parentId })} prefetch={false}>
                            <code>{shortId(parentId)}</code>
                          </Link>
                        </Fragment>
                      ))}
                    </span>
                  ) : null}
                </p>
                <div className="button-row">
                  <Link className="button" href={withQuery(basePath, { branch: branchName, commit: shown.value.commit.commitId })}>
                    View the document at this commit
                  </Link>
                  {canRevert ? (
                    <RevertButton
                      documentId={documentId}
                      branchName={branchName}
                      commitId={shown.value.commit.commitId}
                      headCommitId={headCommitId}
                    />
                  ) : null}
                </div>
              </header>
              <h2 className="history-changes-title">
                {changeCount(shown.value.changes)}
                {shown.value.commit.parentIds.length > 1 ? <span className="muted small"> against the first parent</span> : null}
              </h2>
              <SectionChangeList changes={shown.value.changes} />
            </>
          )}
        </section>
      </div>
    </AppShell>
  );
}
