"use client";

import { MarkdownDescription } from "@/app/_components/markdown-description";
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { FormError, field, optionalField } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { type DiffView, DiffViewToggle, SectionDiff } from "@/app/_components/section-diff";
import type { MergeAnalysisView, MergeRequestView } from "@/app/_lib/quire";
import { useMergeRequestsTool } from "@/app/_lib/tool-call";
import { useTRPC } from "@/app/_lib/trpc";
import {
  type ConflictSides,
  DocumentConflicts,
  type MergeChoices,
  missingChoices,
  NO_CHOICES,
  resolutionsOf,
  SectionConflict,
} from "../conflict-choices";

const MAX_COMMIT_MESSAGE_CHARS = 1000;
/** Sections with more diff lines than this start collapsed. */
const LARGE_DIFF_LINES = 60;

export function HeaderEditor({
  mergeRequestId,
  title,
  description,
  editable,
}: {
  mergeRequestId: string;
  title: string;
  description: string | null;
  editable: boolean;
}) {
  const router = useRouter();
  const mergeRequests = useMergeRequestsTool();
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const result = await mergeRequests({
      action: "update",
      mergeRequestId,
      newTitle: field(form, "title"),
      // An emptied description removes it.
      newDescription: optionalField(form, "description") ?? null,
    });
    if (!result.ok) return setError(result.message);
    setError(null);
    setEditing(false);
    router.refresh();
  }
  if (editing) {
    return (
      <form className="form mr-edit" onSubmit={onSubmit} aria-label="Edit title and description">
        <label className="field">
          <span>Title</span>
          <input name="title" defaultValue={title} required maxLength={300} />
        </label>
        <label className="field">
          <span>Description (markdown)</span>
          <textarea name="description" defaultValue={description ?? ""} rows={5} />
        </label>
        <FormError error={error} spaced={false} />
        <div className="button-row">
          <button type="submit" className="button button-primary">
            Save
          </button>
          <button type="button" className="button button-quiet" onClick={() => setEditing(false)}>
            Cancel
          </button>
        </div>
      </form>
    );
  }
  return (
    <div className="mr-title-block">
      <div className="mr-title-row">
        <h1 className="doc-title">{title}</h1>
        {editable ? (
          <button type="button" className="button button-small" onClick={() => setEditing(true)}>
            Edit
          </button>
        ) : null}
      </div>
      {description ? <MarkdownDescription text={description} className="doc-description mr-description" /> : null}
    </div>
  );
}

/**
 * Follows the branch heads (the branchHeads subscription: now, then on every
 * move); when either differs from the analysis on screen, says so and offers
 * the fresh analysis (what was on screen is never merged).
 */
export function LiveNotice({
  documentId,
  branches,
  heads,
}: {
  documentId: string;
  branches: { source: string; target: string };
  heads: { source: string; target: string };
}) {
  const router = useRouter();
  const trpc = useTRPC();
  const [moved, setMoved] = useState<string[]>([]);
  useSubscription(
    trpc.branchHeads.subscriptionOptions(
      { documentId, branchNames: [branches.source, branches.target] },
      {
        onData: (now) => {
          // A branch deleted since is absent, so it reads as moved too.
          const head = (name: string) => now.branches.find((b) => b.name === name)?.headCommitId;
          setMoved(
            [
              head(branches.source) !== heads.source ? branches.source : "",
              head(branches.target) !== heads.target ? branches.target : "",
            ].filter(Boolean),
          );
        },
      },
    ),
  );
  if (moved.length === 0) return null;
  return (
    <div className="banner banner-warning mr-live" role="status" data-testid="branch-moved">
      <span>
        {moved.map((b) => `“${b}”`).join(" and ")} moved since this page was loaded. Approving and merging use what you see, so look at the
        fresh changes first.
      </span>
      <button type="button" className="button button-small button-primary" onClick={() => router.refresh()}>
        Show the fresh analysis
      </button>
    </div>
  );
}

/** Your review as the buttons need it; `outdated`: an approval that does not cover every change now, so it can be given again. */
export type MyReviewState = "pending" | "approved" | "changes_requested" | "outdated";

type Verdict = "approve" | "request_changes" | "reset";

export function ReviewActions({
  mergeRequestId,
  myState,
  heads,
}: {
  mergeRequestId: string;
  myState: MyReviewState | null;
  heads: { source: string; target: string };
}) {
  const router = useRouter();
  const mergeRequests = useMergeRequestsTool();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  if (myState === null) return <p className="muted small">You are not a reviewer of this request.</p>;
  async function review(verdict: Verdict) {
    setPending(true);
    // An approval names the heads the page showed, so nothing unseen is approved (BRANCH_MOVED otherwise).
    const result = await (verdict === "approve"
      ? mergeRequests({
          action: "approve",
          mergeRequestId,
          expectedSourceHeadCommitId: heads.source,
          expectedTargetHeadCommitId: heads.target,
        })
      : mergeRequests({ action: verdict, mergeRequestId }));
    setPending(false);
    if (!result.ok) return setError(result.message);
    setError(null);
    router.refresh();
  }
  return (
    <div className="mr-review-actions">
      <div className="button-row">
        {myState !== "approved" ? (
          <button type="button" className="button button-primary" disabled={pending} onClick={() => review("approve")}>
            Approve
          </button>
        ) : null}
        {myState !== "changes_requested" ? (
          <button type="button" className="button" disabled={pending} onClick={() => review("request_changes")}>
            Request changes
          </button>
        ) : null}
        {myState !== "pending" ? (
          <button type="button" className="button button-quiet" disabled={pending} onClick={() => review("reset")}>
            Withdraw review
          </button>
        ) : null}
      </div>
      <FormError error={error} spaced={false} />
    </div>
  );
}

/** How a section's status in a merge reads on the review pages (merge requests and changesets). */
export const SECTION_STATUS_LABELS = {
  added: "Added",
  deleted: "Deleted",
  modified: "Modified",
  conflict: "Conflict",
  unchanged: "Unchanged",
} as const;

type SectionReview = MergeRequestView["sectionReviews"][number];

/** Whether a changed section still needs a review, else who reviewed it as it is now. */
function ReviewMark({ review, reviewerNames }: { review: SectionReview | undefined; reviewerNames: Map<string, string> }) {
  if (!review) return null;
  if (review.needsReview) {
    return (
      <span className="mr-review-mark mr-review-needed" data-testid="needs-review">
        Needs review
      </span>
    );
  }
  if (review.approvedBy.length === 0) return null;
  return (
    <span className="mr-review-mark mr-review-done" data-testid="reviewed-by">
      Reviewed by {review.approvedBy.map((id) => reviewerNames.get(id) ?? "a former reviewer").join(", ")}
    </span>
  );
}

/** The changed sections still needing a review, by name; those the reader may not see are only counted. */
function sectionsNeedingReview(request: MergeRequestView): string {
  const named = request.sectionReviews.filter((s) => s.needsReview).map((s) => `“${s.name}”`);
  const hidden = request.hiddenSectionsNeedingReview;
  return [...named, ...(hidden > 0 ? [`${hidden} section${hidden === 1 ? "" : "s"} you may not see`] : [])].join(", ");
}

/** Changes, conflicts and the merge form of an open request. */
export function ReviewWorkspace({
  request,
  analysis,
  conflictSides,
}: {
  request: MergeRequestView;
  analysis: MergeAnalysisView;
  conflictSides: ConflictSides;
}) {
  const router = useRouter();
  const mergeRequests = useMergeRequestsTool();
  const [view, setView] = useState<DiffView>("split");
  const [choices, setChoices] = useState<MergeChoices>(NO_CHOICES);
  const [message, setMessage] = useState(analysis.generatedCommitMessage ?? "");
  const [state, setState] = useState<{ kind: "idle" | "pending" } | { kind: "error"; message: string }>({ kind: "idle" });
  const changes = analysis.sections.filter((s) => s.status !== "unchanged");
  const conflicts = analysis.sections.filter((s) => s.status === "conflict");

  const missing = missingChoices(analysis, choices);
  const messageTooLong = !analysis.fastForward && message.length > MAX_COMMIT_MESSAGE_CHARS;
  const approvalsShort = request.requiredApprovals > request.approvals;
  const reviews = new Map(request.sectionReviews.map((r) => [r.sectionId, r]));
  const reviewerNames = new Map(request.reviewers.map((r) => [r.userId, r.name]));
  const stillNeedingReview = sectionsNeedingReview(request);
  const blocked = analysis.upToDate || missing.length > 0 || messageTooLong || approvalsShort || analysis.hiddenConflicts > 0;

  /** Merges exactly the heads the page showed (the server refuses with BRANCH_MOVED otherwise). */
  async function merge() {
    setState({ kind: "pending" });
    const result = await mergeRequests({
      action: "execute",
      mergeRequestId: request.mergeRequestId,
      ...resolutionsOf(choices),
      commitMessage: analysis.fastForward || message === analysis.generatedCommitMessage ? undefined : message,
      expectedSourceHeadCommitId: analysis.sourceHeadCommitId,
      expectedTargetHeadCommitId: analysis.targetHeadCommitId,
    });
    if (!result.ok) return setState({ kind: "error", message: result.message });
    setState({ kind: "idle" });
    router.refresh();
  }

  return (
    <>
      <section className="mr-section" aria-labelledby="changes-title">
        <div className="mr-section-heading">
          <h2 id="changes-title">Changes</h2>
          <DiffViewToggle view={view} onChange={setView} />
        </div>
        {analysis.upToDate ? (
          <p className="muted" data-testid="up-to-date">
            Nothing to merge: {request.targetBranch} already has every commit of {request.sourceBranch}.
          </p>
        ) : null}
        {analysis.hiddenConflicts > 0 ? (
          <p className="banner banner-warning" role="status" data-testid="hidden-sections">
            {analysis.hiddenConflicts} conflicting section{analysis.hiddenConflicts === 1 ? "" : "s"} you may not see; someone who can see
            {analysis.hiddenConflicts === 1 ? " it" : " them"} must merge this request.
          </p>
        ) : null}
        {changes.length > 0 ? (
          <nav className="mr-navigator" aria-label="Changed sections">
            <ol>
              {changes.map((s) => (
                <li key={s.sectionId}>
                  <a href={`#change-${s.sectionId}`}>
                    <span className={`mr-change mr-change-${s.status}`}>{SECTION_STATUS_LABELS[s.status]}</span> {s.name}
                  </a>
                </li>
              ))}
            </ol>
          </nav>
        ) : null}
        {changes.map((s) => {
          const diffs = [
            s.sourceDiff ? { label: `${request.sourceBranch} (source)`, unified: s.sourceDiff } : null,
            s.status === "conflict" && s.targetDiff ? { label: `${request.targetBranch} (target)`, unified: s.targetDiff } : null,
          ].filter((d): d is { label: string; unified: string } => d !== null);
          const large = diffs.reduce((n, d) => n + d.unified.split("\n").length, 0) > LARGE_DIFF_LINES;
          const body = diffs.map((d) => (
            <div key={d.label} className="mr-diff-block">
              {diffs.length > 1 ? <p className="mr-diff-label small muted">Changes on {d.label}</p> : null}
              <SectionDiff unified={d.unified} view={view} label={`${s.name}: changes on ${d.label}`} />
            </div>
          ));
          return (
            <article key={s.sectionId} id={`change-${s.sectionId}`} className="mr-change-card" data-testid="change" data-status={s.status}>
              <h3>
                <span className={`mr-change mr-change-${s.status}`}>{SECTION_STATUS_LABELS[s.status]}</span> {s.name}
                <ReviewMark review={reviews.get(s.sectionId)} reviewerNames={reviewerNames} />
              </h3>
              {large ? (
                <details>
                  <summary>Large change: show the diff</summary>
                  {body}
                </details>
              ) : (
                body
              )}
            </article>
          );
        })}
      </section>

      {conflicts.length > 0 ||
      analysis.hasTagConflicts ||
      analysis.hasPathCollision ||
      analysis.hasDocumentDeletionConflict ||
      analysis.propertyConflicts.length > 0 ? (
        <section className="mr-section" aria-labelledby="conflicts-title">
          <h2 id="conflicts-title">Conflicts</h2>
          <p className="muted small">Both branches changed these. Choose what the merge keeps.</p>
          {conflicts.map((s) => (
            <SectionConflict
              key={s.sectionId}
              section={s}
              sides={conflictSides[s.sectionId]}
              sourceBranch={request.sourceBranch}
              targetBranch={request.targetBranch}
              choice={choices.sections[s.sectionId]}
              onChoose={(choice) => setChoices((c) => ({ ...c, sections: { ...c.sections, [s.sectionId]: choice } }))}
              name={`resolution-${s.sectionId}`}
            />
          ))}
          <DocumentConflicts analysis={analysis} choices={choices} onChange={setChoices} name="document" />
        </section>
      ) : null}

      <section className="mr-section" aria-labelledby="merge-title">
        <h2 id="merge-title">Merge</h2>
        {analysis.fastForward ? (
          <p data-testid="fast-forward">
            Fast-forward: {request.targetBranch} has no commits of its own, so it simply moves to {request.sourceBranch}&apos;s head. No
            merge commit is written.
          </p>
        ) : analysis.upToDate ? null : (
          <label className="field">
            <span>Commit message</span>
            <textarea value={message} onChange={(event) => setMessage(event.target.value)} rows={6} aria-describedby="message-rule" />
            <span id="message-rule" className={`small ${messageTooLong ? "form-error" : "muted"}`} data-testid="message-rule">
              {message.length} / {MAX_COMMIT_MESSAGE_CHARS} characters.
              {messageTooLong
                ? " A merge commit message holds at most 1,000 characters: the generated one lists every commit of the branch. Shorten it before merging."
                : " Generated from the branch's commits; edit it if you like."}
            </span>
          </label>
        )}
        {missing.length > 0 ? (
          <p className="form-hint" data-testid="missing-choices">
            Choose for every conflict before merging. Still missing: {missing.join(", ")}.
          </p>
        ) : null}
        {approvalsShort ? (
          <p className="form-hint" data-testid="approvals-missing">
            This document requires {request.requiredApprovals} approval{request.requiredApprovals === 1 ? "" : "s"} from people of every
            changed section, as it is now.{" "}
            {stillNeedingReview
              ? `Still needing a review: ${stillNeedingReview}.`
              : `${request.approvals} ${request.approvals === 1 ? "counts" : "count"} now.`}
          </p>
        ) : null}
        {state.kind === "error" ? (
          <p className="form-error" role="alert">
            {state.message}
          </p>
        ) : null}
        <div className="button-row mr-merge-row">
          <button type="button" className="button button-primary" disabled={blocked || state.kind === "pending"} onClick={merge}>
            {state.kind === "pending" ? "Merging…" : analysis.fastForward ? "Fast-forward merge" : "Merge"}
          </button>
          <ActionConfirmButton
            label="Close request"
            question="Close without merging? This cannot be undone."
            confirmLabel="Close it"
            pendingLabel="Closing…"
            action={() => mergeRequests({ action: "close", mergeRequestId: request.mergeRequestId })}
          />
        </div>
      </section>
    </>
  );
}
