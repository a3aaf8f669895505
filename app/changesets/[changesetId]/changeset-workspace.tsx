"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { type DiffView, DiffViewToggle, SectionDiff } from "@/app/_components/section-diff";
import {
  type ConflictSides,
  ConflictSideText,
  SECTION_STATUS_LABELS,
  SideChoice,
} from "@/app/merge-requests/[mergeRequestId]/review-client";
import { StatusBadge } from "@/app/merge-requests/parts";
import type { ToolOutput } from "@/server/actions/registry";
import { useChangesetsTool } from "../changesets-tool";

type Changeset = ToolOutput<"changesets", { action: "get" }>;
type Analysis = ToolOutput<"changesets", { action: "analyze" }>;
type ItemAnalysis = NonNullable<Analysis["analyses"][number]["analysis"]>;

/** What the merge keeps of a conflicting section: one side, or a text written here. */
type SectionChoice = { resolution: "source" | "target" } | { resolution: "merged"; text: string };
/** Per document: each conflicting section's choice and the document-level ones. */
type DocumentChoices = {
  sections: Record<string, SectionChoice>;
  tagResolution?: "source" | "target";
  documentDeletionResolution?: "delete" | "keep";
  resolvedPath?: string;
  properties: Record<string, "source" | "target">;
};

const EMPTY: DocumentChoices = { sections: {}, properties: {} };

/** What one document still needs before the merge, in words. */
function missingFor(analysis: ItemAnalysis, choices: DocumentChoices): string[] {
  return [
    ...analysis.sections.filter((s) => s.status === "conflict" && !choices.sections[s.sectionId]).map((s) => `section “${s.name}”`),
    analysis.hasTagConflicts && !choices.tagResolution ? "tags" : "",
    analysis.hasPathCollision && !choices.resolvedPath?.trim() ? "path" : "",
    analysis.hasDocumentDeletionConflict && !choices.documentDeletionResolution ? "deletion" : "",
    ...analysis.propertyConflicts.filter((c) => !choices.properties[c.columnId]).map((c) => `property ${c.columnId.slice(0, 8)}`),
    analysis.hiddenConflicts > 0 ? `${analysis.hiddenConflicts} conflicting section(s) you may not see` : "",
  ].filter(Boolean);
}

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
  const [choices, setChoices] = useState<Record<string, DocumentChoices>>({});
  const [state, setState] = useState<{ kind: "idle" | "merging" | "approving" } | { kind: "error"; message: string }>({ kind: "idle" });
  const open = changeset.status === "open";
  const analyses = new Map((analysis?.analyses ?? []).map((a) => [a.documentId, a.analysis]));
  const choicesOf = (documentId: string) => choices[documentId] ?? EMPTY;
  const update = (documentId: string, change: (c: DocumentChoices) => DocumentChoices) =>
    setChoices((all) => ({ ...all, [documentId]: change(all[documentId] ?? EMPTY) }));

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
        resolutions: Object.entries(c.sections).map(([sectionId, choice]) =>
          choice.resolution === "merged"
            ? {
                sectionId,
                resolution: "merged" as const,
                content: choice.text === "" ? [] : [{ blockType: "text" as const, text: choice.text }],
              }
            : { sectionId, resolution: choice.resolution },
        ),
        tagResolution: c.tagResolution,
        documentDeletionResolution: c.documentDeletionResolution,
        resolvedPath: c.resolvedPath?.trim() || undefined,
        scalarPropertyResolutions: Object.keys(c.properties).length > 0 ? c.properties : undefined,
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
                    {a && missingFor(a, EMPTY).length > 0 ? <span className="badge badge-conflict">Conflicts</span> : null}
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
                        <fieldset className="mr-conflict" data-testid="conflict">
                          <legend>Keep which version of “{s.name}”?</legend>
                          <div className="mr-sides">
                            {(["source", "target"] as const).map((side) => (
                              <div key={side} className="mr-side">
                                <p className="small muted">
                                  {side === "source" ? changeset.sourceBranch : changeset.targetBranch} ({side})
                                </p>
                                {sides[s.sectionId] ? <ConflictSideText side={sides[s.sectionId]![side]} /> : null}
                                <label className="mr-choice">
                                  <input
                                    type="radio"
                                    name={`resolution-${item.documentId}-${s.sectionId}`}
                                    checked={c.sections[s.sectionId]?.resolution === side}
                                    onChange={() =>
                                      update(item.documentId, (d) => ({
                                        ...d,
                                        sections: { ...d.sections, [s.sectionId]: { resolution: side } },
                                      }))
                                    }
                                  />
                                  Keep {side}
                                </label>
                              </div>
                            ))}
                          </div>
                          {s.proposedMerge ? (
                            <div className="mr-proposed">
                              <label className="mr-choice">
                                <input
                                  type="radio"
                                  name={`resolution-${item.documentId}-${s.sectionId}`}
                                  checked={c.sections[s.sectionId]?.resolution === "merged"}
                                  onChange={() =>
                                    update(item.documentId, (d) => ({
                                      ...d,
                                      sections: { ...d.sections, [s.sectionId]: { resolution: "merged", text: s.proposedMerge!.text } },
                                    }))
                                  }
                                />
                                Write a merge
                              </label>
                              {c.sections[s.sectionId]?.resolution === "merged" ? (
                                <textarea
                                  className="mr-merge-editor"
                                  aria-label={`Merged text of ${s.name}`}
                                  value={(c.sections[s.sectionId] as { text: string }).text}
                                  rows={6}
                                  onChange={(event) =>
                                    update(item.documentId, (d) => ({
                                      ...d,
                                      sections: { ...d.sections, [s.sectionId]: { resolution: "merged", text: event.target.value } },
                                    }))
                                  }
                                />
                              ) : null}
                            </div>
                          ) : null}
                        </fieldset>
                      ) : null}
                    </article>
                  ))}
                  {a.hasTagConflicts ? (
                    <SideChoice
                      legend="Tags"
                      name={`tags-${item.documentId}`}
                      value={c.tagResolution}
                      onChange={(v) => update(item.documentId, (d) => ({ ...d, tagResolution: v }))}
                    />
                  ) : null}
                  {a.propertyConflicts.map((p) => (
                    <SideChoice
                      key={p.columnId}
                      legend={`Property ${p.columnId.slice(0, 8)}: ${String(p.source ?? "unset")} (source) or ${String(p.target ?? "unset")} (target)`}
                      name={`property-${item.documentId}-${p.columnId}`}
                      value={c.properties[p.columnId]}
                      onChange={(v) => update(item.documentId, (d) => ({ ...d, properties: { ...d.properties, [p.columnId]: v } }))}
                    />
                  ))}
                  {a.hasPathCollision ? (
                    <label className="field">
                      <span>Path after the merge (both branches moved the document, or its new path is taken)</span>
                      <input
                        value={c.resolvedPath ?? ""}
                        onChange={(e) => update(item.documentId, (d) => ({ ...d, resolvedPath: e.target.value }))}
                      />
                    </label>
                  ) : null}
                  {a.hasDocumentDeletionConflict ? (
                    <fieldset className="mr-conflict">
                      <legend>One branch deleted the document while the other changed it</legend>
                      {(["keep", "delete"] as const).map((v) => (
                        <label key={v} className="mr-choice">
                          <input
                            type="radio"
                            name={`deletion-${item.documentId}`}
                            checked={c.documentDeletionResolution === v}
                            onChange={() => update(item.documentId, (d) => ({ ...d, documentDeletionResolution: v }))}
                          />
                          {v === "keep" ? "Keep the document" : "Delete the document"}
                        </label>
                      ))}
                    </fieldset>
                  ) : null}
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
