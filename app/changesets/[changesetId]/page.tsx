import type { Metadata } from "next";
import { MarkdownDescription } from "@/app/_components/markdown-description";
import Link from "next/link";
import { notFound } from "next/navigation";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel, failedPage } from "@/app/_components/error-panel";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt, memberNames, UUID_PATTERN } from "@/app/_lib/quire";
import { requireUser } from "@/app/_lib/session";
import type { ConflictSides } from "@/app/merge-requests/conflict-choices";
import { conflictSides } from "@/app/merge-requests/conflict-sides";
import { StatusBadge } from "@/app/merge-requests/parts";
import { getBridge } from "@/server/bridge";
import { ChangesetWorkspace } from "./changeset-workspace";
import "../../merge-requests/merge-requests.css";
import "../changesets.css";

type Props = { params: Promise<{ changesetId: string }> };

export const metadata: Metadata = { title: "Changeset" };

export default async function ChangesetPage({ params }: Props) {
  const { changesetId } = await params;
  const user = await requireUser(`/changesets/${encodeURIComponent(changesetId)}`);
  if (!UUID_PATTERN.test(changesetId)) notFound();
  const bridge = getBridge();
  const found = await attempt(() => bridge.callTool("changesets", user.id, { action: "get", changesetId }));
  if (!found.ok) return failedPage(user, "Could not open this changeset", found);
  const changeset = found.value;
  const [analysis, members] = await Promise.all([
    changeset.status === "open"
      ? attempt(() => bridge.callTool("changesets", user.id, { action: "analyze", changesetId, proposals: true }))
      : null,
    attempt(() => memberNames(user.id, [changeset.authorId])),
  ]);
  const sides: Record<string, ConflictSides> = {};
  if (analysis?.ok) {
    await Promise.all(
      analysis.value.analyses.map(async (item) => {
        const ids = (item.analysis?.sections ?? []).filter((s) => s.status === "conflict").map((s) => s.sectionId);
        sides[item.documentId] = await conflictSides(user.id, item.documentId, changeset, ids);
      }),
    );
  }
  const author = members.ok ? members.value.get(changeset.authorId) : undefined;

  return (
    <AppShell user={user} wide>
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <ol>
          <li>
            <Link href="/changesets">Changesets</Link>
          </li>
          <li aria-current="page">{changeset.title}</li>
        </ol>
      </nav>
      <header className="mr-header">
        <h1 data-testid="changeset-title">{changeset.title}</h1>
        {changeset.description ? <MarkdownDescription text={changeset.description} className="muted" /> : null}
        <div className="mr-row-meta muted small">
          <StatusBadge status={changeset.status} />
          <span className="mr-branches">
            <code>{changeset.sourceBranch}</code> → <code>{changeset.targetBranch}</code>
          </span>
          <span>
            opened {author ? `by ${author} ` : changeset.authorId === user.id ? "by you " : ""}
            <TimeAgo value={changeset.createdAt} />
          </span>
        </div>
      </header>
      {changeset.status !== "open" ? (
        <div className="banner banner-info" role="status" data-testid="final-state">
          {changeset.status === "merged" ? (
            <>
              Merged <TimeAgo value={changeset.mergedAt ?? changeset.updatedAt} />: every document below in one step.
            </>
          ) : (
            <>
              Closed <TimeAgo value={changeset.closedAt ?? changeset.updatedAt} /> without merging.
            </>
          )}
        </div>
      ) : null}
      {analysis && !analysis.ok ? (
        <ErrorPanel title="Could not analyze this changeset" code={analysis.code} message={analysis.message} />
      ) : null}
      <ChangesetWorkspace changeset={changeset} analysis={analysis?.ok ? analysis.value : null} conflictSides={sides} userId={user.id} />
    </AppShell>
  );
}
