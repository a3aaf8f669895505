import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { cache, type ReactNode } from "react";
import { AppShell } from "@/app/_components/app-shell";
import { failedPage } from "@/app/_components/error-panel";
import { ToastProvider } from "@/app/_components/toast";
import { shortId } from "@/app/_lib/format";
import {
  attempt,
  commitLog,
  listBranches,
  readDocument,
  isCommitRef,
  UUID_PATTERN,
  type BranchSummary,
  type CommitLog,
  type DocumentSection,
  type MergeRequestView,
  type Outcome,
} from "@/app/_lib/quire";
import { firstParam, withQuery, type SearchParams } from "@/app/_lib/search-params";
import { getSessionUser, requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { CommitList } from "./commit-list";
import { AccessNote, DocumentActions, loadDocumentAccess } from "./document-access";
import { DocumentBody, PathBreadcrumb, referenceTitle, SectionFrame, sortedSections } from "./document-body";
import { RemoveReferenceButton } from "./live/document-links";
import { LiveDocument } from "./live/live-document";
import type { RoomAddress } from "./live/live-room";
import { initialSections, sectionBadges } from "./live/initial-sections";
import { NewBranchForm } from "./live/new-branch-form";

type Props = { params: Promise<{ documentId: string }>; searchParams: Promise<SearchParams> };

/** One read per request, shared by generateMetadata and the page. */
const readOnce = cache((userId: string, documentId: string, branchName?: string, commitId?: string) =>
  // `read` ignores the branch when given a commit, so only one of the two is sent.
  attempt(() => readDocument(userId, documentId, commitId ? { commitId } : { branchName })),
);

export async function generateMetadata({ params, searchParams }: Props): Promise<Metadata> {
  const { documentId } = await params;
  const query = await searchParams;
  const user = await getSessionUser();
  if (!user || !UUID_PATTERN.test(documentId)) return { title: "Document" };
  const read = await readOnce(user.id, documentId, firstParam(query.branch), firstParam(query.commit));
  return { title: read.ok ? read.value.name : "Document" };
}

export default async function DocumentPage({ params, searchParams }: Props) {
  const { documentId } = await params;
  const query = await searchParams;
  const branch = firstParam(query.branch);
  const commit = firstParam(query.commit);
  const logCursor = firstParam(query.logCursor);
  const basePath = `/documents/${encodeURIComponent(documentId)}`;
  const user = await requireUser(withQuery(basePath, { branch, commit, logCursor }));
  if (!UUID_PATTERN.test(documentId) || (commit !== undefined && !isCommitRef(commit))) notFound();

  const [read, branches, access] = await Promise.all([
    readOnce(user.id, documentId, branch, commit),
    attempt(() => listBranches(user.id, documentId)),
    loadDocumentAccess(user.id, documentId),
  ]);
  if (!read.ok) return failedPage(user, "Could not open this document", read);
  const doc = read.value;
  // Reading a commit is branch-less: the branch is the one the visitor came from, else the default.
  const branchName = doc.branchName ?? branch ?? (branches.ok ? branches.value.find((b) => b.isDefault)?.name : undefined) ?? null;
  const [log, openRequests] = await Promise.all([
    attempt(() => commitLog(user.id, documentId, branchName ?? undefined, logCursor)),
    attempt(
      async (): Promise<{ mergeRequests: MergeRequestView[] }> =>
        getBridge().callTool("merge_requests", user.id, { action: "list", documentId, status: "open", limit: 5 }),
    ),
  ]);
  const isDefaultBranch = branches.ok && branches.value.some((b) => b.isDefault && b.name === branchName);
  const sections = sortedSections(doc);
  const branchHref = withQuery(basePath, { branch: branchName });
  const canEdit = access.ok && access.value.yourPermission === "edit";
  // A branch head is live: its rooms give the sections, editable for editors; a commit or a deleted document is history.
  const live = !commit && !doc.deleted && branchName !== null;

  return (
    <AppShell user={user} wide>
      <DocumentBody
        doc={doc}
        sections={sections}
        breadcrumb={
          <PathBreadcrumb
            path={doc.path}
            label="Breadcrumb"
            leading={
              <li>
                <Link href="/">Documents</Link>
              </li>
            }
          />
        }
        banners={
          <>
            {live && canEdit ? (
              <div className="banner banner-info" role="status" data-testid="branch-mark">
                You are editing{" "}
                <span className="branch-pill" title="Branch">
                  <BranchIcon /> {branchName}
                </span>
                {isDefaultBranch ? " (the default branch)" : ""}. Everyone's edits here form one shared draft, saved as you type; Commit
                makes it a commit on this branch.
              </div>
            ) : null}
            {commit ? (
              <div className="banner banner-info" role="status" data-testid="commit-banner">
                Viewing commit <code>{shortId(commit)}</code> — <Link href={branchHref}>back to branch head</Link>
              </div>
            ) : null}
            {doc.deleted ? (
              <div className="banner banner-warning" role="status">
                This document is deleted{" "}
                {commit ? (
                  "at this commit"
                ) : (
                  <>
                    on <strong>{branchName}</strong>
                  </>
                )}
                . Its history is kept.
              </div>
            ) : null}
          </>
        }
        titleAction={<DocumentActions documentId={documentId} access={access} />}
        meta={{
          before: (
            <>
              {/* Links to the sidebar's panels: on a phone the sidebar is below the whole document. */}
              {branchName ? (
                <a href="#branch-panel" className="branch-pill" title="Switch branch">
                  <BranchIcon /> {branchName}
                </a>
              ) : null}
              <span>
                {commit ? "commit" : "head"} <code>{shortId(doc.headCommitId)}</code>
              </span>
              <a href="#history-panel">History</a>
            </>
          ),
          after: <AccessNote access={access} />,
        }}
        renderSection={(section) => <SectionView key={section.sectionId} section={section} />}
        liveSections={
          live ? (
            // One toast for the live page: Undo after a delete, what Commit did, a room's refusal.
            <ToastProvider>
              <LiveDocument
                documentId={documentId}
                branchName={branchName}
                me={{ userId: user.id, name: user.name }}
                canEdit={canEdit}
                order={sections.map((s) => s.sectionId)}
                resolvedCommentIds={sections.flatMap((s) => s.comments.filter((c) => c.status === "resolved").map((c) => c.commentId))}
                sections={initialSections(sections, {
                  editsByDefault: canEdit,
                  editable: editsSection,
                  references: (section) => (
                    <SectionReferences section={section} removableOn={editsSection(section) ? { documentId, branchName } : undefined} />
                  ),
                })}
              />
            </ToastProvider>
          ) : undefined
        }
        asideTop={
          <>
            <BranchPanel
              basePath={basePath}
              current={branchName}
              branches={branches}
              newBranch={canEdit && branchName !== null ? <NewBranchForm documentId={documentId} sourceBranch={branchName} /> : null}
            />
            <MergeRequestsPanel documentId={documentId} branchName={isDefaultBranch ? null : branchName} requests={openRequests} />
          </>
        }
        asideBottom={
          <HistoryPanel
            basePath={basePath}
            branchName={branchName}
            viewing={commit ? doc.headCommitId : undefined}
            log={log}
            logCursor={logCursor}
          />
        }
      />
    </AppShell>
  );
}

/** The document's open merge requests, and opening one from the branch being viewed. */
function MergeRequestsPanel({
  documentId,
  branchName,
  requests,
}: {
  documentId: string;
  branchName: string | null;
  requests: Outcome<{ mergeRequests: MergeRequestView[] }>;
}) {
  const all = `/merge-requests?documentId=${encodeURIComponent(documentId)}`;
  return (
    <section className="panel" aria-labelledby="merge-requests-panel-title" data-testid="merge-requests-panel">
      <h2 className="panel-title" id="merge-requests-panel-title">
        Merge requests
      </h2>
      {!requests.ok ? (
        <p className="muted small">Merge requests could not be listed: {requests.message}</p>
      ) : requests.value.mergeRequests.length === 0 ? (
        <p className="muted small">No open merge requests.</p>
      ) : (
        <ul className="panel-list">
          {requests.value.mergeRequests.map((r) => (
            <li key={r.mergeRequestId}>
              <Link href={`/merge-requests/${r.mergeRequestId}`}>{r.title}</Link>{" "}
              <span className="muted small">
                {r.sourceBranch} → {r.targetBranch}
              </span>
            </li>
          ))}
        </ul>
      )}
      <p className="small">
        <Link href={all}>All merge requests</Link>
        {branchName ? (
          <>
            {" · "}
            <Link href={withQuery("/merge-requests/new", { documentId, source: branchName })}>Open a merge request from {branchName}</Link>
          </>
        ) : null}
      </p>
    </section>
  );
}

/** A section's "See also" links; with `removableOn` (the branch of a live page, for its editors) each can be removed. */
function SectionReferences({ section, removableOn }: { section: DocumentSection; removableOn?: RoomAddress }) {
  return (
    <ul>
      {section.references.map((ref) => (
        <li key={ref.referenceId}>
          <Link
            href={`/documents/${encodeURIComponent(ref.targetDocumentId)}${ref.targetSectionId ? `#section-${ref.targetSectionId}` : ""}`}
          >
            {referenceTitle(ref)}
          </Link>
          {removableOn ? <RemoveReferenceButton address={removableOn} referenceId={ref.referenceId} title={referenceTitle(ref)} /> : null}
        </li>
      ))}
    </ul>
  );
}

/**
 * Whether this person edits a section: the server's answer in `read`
 * (`yourPermission`, the policy's own decision), so the page offers an editor
 * exactly where the live room will take the edits.
 */
const editsSection = (section: DocumentSection): boolean => section.yourPermission === "edit";

function SectionView({ section }: { section: DocumentSection }) {
  return (
    <SectionFrame
      section={section}
      badges={sectionBadges(section).map((badge) => (
        <span key={badge} className="badge" title="Section permission override">
          {badge}
        </span>
      ))}
      references={<SectionReferences section={section} />}
    />
  );
}

function BranchPanel({
  basePath,
  current,
  branches,
  newBranch,
}: {
  basePath: string;
  current: string | null;
  branches: Outcome<BranchSummary[]>;
  newBranch: ReactNode;
}) {
  const names = branches.ok ? sortBranches(branches.value).map((b) => ({ name: b.name, isDefault: b.isDefault })) : [];
  if (current !== null && !names.some((b) => b.name === current)) names.unshift({ name: current, isDefault: false });
  return (
    <section className="panel" id="branch-panel" aria-labelledby="branch-panel-title">
      <h2 className="panel-title" id="branch-panel-title">
        Branch
      </h2>
      <form method="get" action={basePath} className="branch-form">
        <label className="visually-hidden" htmlFor="branch-select">
          Branch
        </label>
        <select id="branch-select" name="branch" defaultValue={current ?? undefined}>
          {names.map((b) => (
            <option key={b.name} value={b.name}>
              {b.name}
              {b.isDefault ? " (default)" : ""}
            </option>
          ))}
        </select>
        <button type="submit" className="button">
          Switch
        </button>
      </form>
      <p className="muted small">
        {branches.ok ? `${names.length} branch${names.length === 1 ? "" : "es"}` : `Branches could not be listed: ${branches.message}`}
      </p>
      {newBranch}
    </section>
  );
}

function sortBranches(branches: BranchSummary[]): BranchSummary[] {
  return [...branches].sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.name.localeCompare(b.name));
}

/** The branch's commits. Its links are not prefetched: a long history would otherwise load every commit's page ahead of a click. */
function HistoryPanel({
  basePath,
  branchName,
  viewing,
  log,
  logCursor,
}: {
  basePath: string;
  branchName: string | null;
  viewing: string | undefined;
  log: Outcome<CommitLog>;
  logCursor: string | undefined;
}) {
  return (
    <section className="panel" id="history-panel" aria-labelledby="history-panel-title">
      <h2 className="panel-title" id="history-panel-title">
        History {branchName ? <span className="muted">on {branchName}</span> : null}
      </h2>
      {!log.ok ? (
        <p className="muted small">The history could not be loaded: {log.message}</p>
      ) : log.value.commits.length === 0 ? (
        <p className="muted small">No commits.</p>
      ) : (
        <CommitList
          commits={log.value.commits}
          headId={!logCursor && branchName !== null ? log.value.commits[0]?.commitId : undefined}
          viewing={viewing}
          hrefFor={(commitId) => withQuery(basePath, { branch: branchName, commit: commitId })}
        />
      )}
      <p className="small">
        <Link href={withQuery(`${basePath}/history`, { branch: branchName, commit: viewing })} prefetch={false}>
          Full history with changes
        </Link>
      </p>
      {log.ok && (logCursor || log.value.nextCursor) ? (
        <nav className="pager pager-small" aria-label="History pages">
          {logCursor ? (
            <Link href={withQuery(basePath, { branch: branchName, commit: viewing })} prefetch={false}>
              Newest
            </Link>
          ) : (
            <span />
          )}
          {log.value.nextCursor ? (
            <Link href={withQuery(basePath, { branch: branchName, commit: viewing, logCursor: log.value.nextCursor })} prefetch={false}>
              Older commits →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}

function BranchIcon() {
  return (
    <svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
      <circle cx="4.5" cy="3.5" r="1.75" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <circle cx="4.5" cy="12.5" r="1.75" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <circle cx="11.5" cy="5" r="1.75" fill="none" stroke="currentColor" strokeWidth="1.3" />
      <path d="M4.5 5.25v5.5M11.5 6.75c0 3-7 2.5-7 4" fill="none" stroke="currentColor" strokeWidth="1.3" />
    </svg>
  );
}
