"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { type DiffView, DiffViewToggle, SectionDiff } from "@/app/_components/section-diff";
import { SECTION_STATUS_LABELS } from "@/app/merge-requests/[mergeRequestId]/review-client";
import {
  type ConflictSides,
  DocumentConflicts,
  type MergeChoices,
  missingChoices,
  NO_CHOICES,
  resolutionsOf,
  SectionConflict,
} from "@/app/merge-requests/conflict-choices";
import { StatusBadge } from "@/app/merge-requests/parts";
import type { ToolOutput } from "@/server/actions/registry";
import { useChangesetsTool } from "../changesets-tool";

type Changeset = ToolOutput<"changesets", { action: "get" }>;
type Analysis = ToolOutput<"changesets", { action: "analyze" }>;
type ItemAnalysis = NonNullable<Analysis["analyses"][number]["analysis"]>;

/** What one document still needs before the merge, in words. */
const missingFor = (analysis: ItemAnalysis, choices: MergeChoices): string[] => [
  ...missingChoices(analysis, choices),
  ...(analysis.hiddenConflicts > 0 ? [`${analysis.hiddenConflicts} conflicting section(s) you may not see`] : []),
];

/** The items, each document's changes and conflicts, one Approve and one Merge for them all. */
export function ChangesetWorkspace({
  changeset,
  analysis,
  conflictSides,
  userId,
}: {
  changeset: Changeset;
  analysis: Analysis | null;
  conflictSides: Record<string, ConflictSides>;
  userId: string;
}) {
  const router = useRouter();
  const changesets = useChangesetsTool();
  const [view, setView] = useState<DiffView>("split");
  const [choices, setChoices] = useState<Record<string, MergeChoices>>({});
  const [state, setState] = useState<{ kind: "idle" | "merging" | "approving" } | { kind: "error"; message: string }>({ kind: "idle" });
  const open = changeset.status === "open";
  const analyses = new Map((analysis?.analyses ?? []).map((a) => [a.documentId, a.analysis]));
  const choicesOf = (documentId: string) => choices[documentId] ?? NO_CHOICES;
  const update = (documentId: string, change: (c: MergeChoices) => MergeChoices) =>
    setChoices((all) => ({ ...all, [documentId]: change(all[documentId] ?? NO_CHOICES) }));

  const missing = changeset.items.flatMap((item) => {
    const a = analyses.get(item.documentId);
    return a ? missingFor(a, choicesOf(item.documentId)).map((m) => `${item.path}: ${m}`) : [];
  });
  const needingApprovals = changeset.items.filter((i) => changeset.itemsNeedingApprovals.includes(i.documentId));
  const upToDate = changeset.items.filter((i) => analyses.get(i.documentId)?.upToDate);
  const closedItems = changeset.items.filter((i) => i.mergeRequest.status === "closed");
  const blocked =
    missing.length > 0 || needingApprovals.length > 0 || changeset.hiddenItems > 0 || upToDate.length > 0 || closedItems.length > 0;
  const reviewsSomething = changeset.items.some(
    (i) => i.mergeRequest.status === "open" && i.mergeRequest.reviewers.some((r) => r.userId === userId),
  );

  /** Merges exactly the heads the page showed: a document that moved since refuses the whole changeset (BRANCH_MOVED). */
  async function merge() {
    setState({ kind: "merging" });
    const result = await changesets({
      action: "execute",
      changesetId: changeset.changesetId,
      itemResolutions: Object.entries(choices).map(([documentId, c]) => ({
        documentId,
        ...resolutionsOf(c),
      })),
      expectedHeads: (analysis?.analyses ?? [])
        .filter((a) => a.analysis !== null)
        .map((a) => ({
          documentId: a.documentId,
          sourceHeadCommitId: a.analysis!.sourceHeadCommitId,
          targetHeadCommitId: a.analysis!.targetHeadCommitId,
        })),
    });
    if (!result.ok) return setState({ kind: "error", message: result.message });
    setState({ kind: "idle" });
    router.refresh();
  }

  async function approve() {
    setState({ kind: "approving" });
    const result = await changesets({
      action: "approve",
      changesetId: changeset.changesetId,
      expectedHeads: (analysis?.analyses ?? [])
        .filter((a) => a.analysis !== null)
        .map((a) => ({
          documentId: a.documentId,
          sourceHeadCommitId: a.analysis!.sourceHeadCommitId,
          targetHeadCommitId: a.analysis!.targetHeadCommitId,
        })),
    });
    if (!result.ok) return setState({ kind: "error", message: result.message });
    setState({ kind: "idle" });
    router.refresh();
  }

  return (
    <div className="mr-layout">
      <div className="mr-main">
        <section className="mr-section" aria-labelledby="items-title">
          <h2 id="items-title">Documents</h2>
          <ul className="cs-items" data-testid="changeset-items">
            {changeset.items.map((item) => {
              const a = analyses.get(item.documentId);
              const request = item.mergeRequest;
              return (
                <li key={item.documentId} className="cs-item" data-testid="changeset-item">
                  <span>
                    <a href={`#document-${item.documentId}`} className="cs-path">
                      {item.path}
                    </a>{" "}
                    <Link href={`/merge-requests/${request.mergeRequestId}`} className="small">
                      request
                    </Link>
                  </span>
                  <span className="mr-row-meta muted small">
                    <StatusBadge status={request.status} />
                    {a?.fastForward ? <span data-testid="item-fast-forward">Fast-forward</span> : null}
                    {a && missingFor(a, NO_CHOICES).length > 0 ? <span className="badge badge-conflict">Conflicts</span> : null}
                    {request.requiredApprovals > 0 ? (
                      <span>
                        {request.approvals} of {request.requiredApprovals} approvals
                      </span>
                    ) : null}
                  </span>
                </li>
              );
            })}
          </ul>
          {changeset.hiddenItems > 0 ? (
            <p className="banner banner-warning" role="status" data-testid="hidden-items">
              {changeset.hiddenItems} more document{changeset.hiddenItems === 1 ? "" : "s"} you may not see; someone who can read every
              document must merge this changeset.
            </p>
          ) : null}
        </section>

        {open && analysis ? (
          <section className="mr-section" aria-labelledby="changes-title">
            <div className="mr-section-heading">
              <h2 id="changes-title">Changes</h2>
              <DiffViewToggle view={view} onChange={setView} />
            </div>
            {changeset.items.map((item) => {
              const a = analyses.get(item.documentId);
              if (!a) return null;
              const c = choicesOf(item.documentId);
              const sides = conflictSides[item.documentId] ?? {};
              const changes = a.sections.filter((s) => s.status !== "unchanged");
              return (
                <div key={item.documentId} id={`document-${item.documentId}`} className="cs-document" data-testid="changeset-document">
                  <h3>{item.path}</h3>
                  {a.fastForward ? (
                    <p className="muted small">Fast-forward: {changeset.targetBranch} has no commits of its own here.</p>
                  ) : null}
                  {changes.map((s) => (
                    <article key={s.sectionId} className="mr-change-card" data-testid="change" data-status={s.status}>
                      <h4>
                        <span className={`mr-change mr-change-${s.status}`}>{SECTION_STATUS_LABELS[s.status]}</span> {s.name}
                      </h4>
                      {s.sourceDiff ? (
                        <div className="mr-diff-block">
                          {s.status === "conflict" ? (
                            <p className="mr-diff-label small muted">Changes on {changeset.sourceBranch} (source)</p>
                          ) : null}
                          <SectionDiff unified={s.sourceDiff} view={view} label={`${s.name}: changes on ${changeset.sourceBranch}`} />
                        </div>
                      ) : null}
                      {s.status === "conflict" && s.targetDiff ? (
                        <div className="mr-diff-block">
                          <p className="mr-diff-label small muted">Changes on {changeset.targetBranch} (target)</p>
                          <SectionDiff unified={s.targetDiff} view={view} label={`${s.name}: changes on ${changeset.targetBranch}`} />
                        </div>
                      ) : null}
                      {s.status === "conflict" ? (
                        <SectionConflict
                          section={s}
                          sides={sides[s.sectionId]}
                          sourceBranch={changeset.sourceBranch}
                          targetBranch={changeset.targetBranch}
                          choice={c.sections[s.sectionId]}
                          onChoose={(choice) =>
                            update(item.documentId, (d) => ({ ...d, sections: { ...d.sections, [s.sectionId]: choice } }))
                          }
                          name={`resolution-${item.documentId}-${s.sectionId}`}
                        />
                      ) : null}
                    </article>
                  ))}
                  <DocumentConflicts
                    analysis={a}
                    choices={c}
                    onChange={(change) => update(item.documentId, change)}
                    name={`document-${item.documentId}`}
                  />
                </div>
              );
            })}
          </section>
        ) : null}
      </div>

      {open ? (
        <aside className="mr-aside">
          <section className="panel" aria-labelledby="merge-title">
            <h2 className="panel-title" id="merge-title">
              Review and merge
            </h2>
            <p className="muted small">Every document merges in one step, or none does. Each document&apos;s own approval rule holds.</p>
            {missing.length > 0 ? (
              <p className="form-hint" data-testid="missing-choices">
                Choose for every conflict before merging. Still missing: {missing.join("; ")}.
              </p>
            ) : null}
            {needingApprovals.length > 0 ? (
              <p className="form-hint" data-testid="approvals-missing">
                Still needing approvals: {needingApprovals.map((i) => i.path).join(", ")}.
              </p>
            ) : null}
            {upToDate.length > 0 || closedItems.length > 0 ? (
              <p className="form-hint">
                Nothing to merge or closed: {[...upToDate, ...closedItems].map((i) => i.path).join(", ")}. Remove them from the changeset
                first.
              </p>
            ) : null}
            {state.kind === "error" ? (
              <p className="form-error" role="alert">
                {state.message}
              </p>
            ) : null}
            <div className="button-row cs-merge-buttons">
              {reviewsSomething ? (
                <button type="button" className="button" onClick={approve} disabled={state.kind === "approving"}>
                  {state.kind === "approving" ? "Approving…" : "Approve"}
                </button>
              ) : null}
              <button type="button" className="button button-primary" disabled={blocked || state.kind === "merging"} onClick={merge}>
                {state.kind === "merging"
                  ? "Merging…"
                  : `Merge ${changeset.items.length} document${changeset.items.length === 1 ? "" : "s"}`}
              </button>
              <ActionConfirmButton
                label="Close changeset"
                question="Close without merging? Its merge requests stay open."
                confirmLabel="Close it"
                pendingLabel="Closing…"
                action={() => changesets({ action: "close", changesetId: changeset.changesetId })}
              />
            </div>
          </section>
        </aside>
      ) : null}
    </div>
  );
}
