"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { FormError, field, optionalField } from "@/app/_components/action-form";
import { ReviewerPicker } from "@/app/_components/member-picker";
import type { WorkspacePerson } from "@/app/_lib/quire";
import { useMergeRequestsTool } from "@/app/_lib/tool-call";

export function CreateForm({
  authorId,
  documentId,
  branches,
  source,
  target,
  suggestedTitle,
  incoming,
}: {
  /** Who opens the request (the signed-in person): not offered as its reviewer. */
  authorId: string;
  documentId: string;
  branches: string[];
  source: string;
  target: string;
  suggestedTitle: string;
  /** What the source brings the target: its commits the target lacks, or why that could not be told. */
  incoming: { commits: number } | { unread: string };
}) {
  const router = useRouter();
  const mergeRequests = useMergeRequestsTool();
  const [reviewers, setReviewers] = useState<WorkspacePerson[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    const result = await mergeRequests({
      action: "create",
      documentId,
      sourceBranch: field(form, "source"),
      targetBranch: field(form, "target"),
      title: field(form, "title"),
      description: optionalField(form, "description"),
      reviewerIds: reviewers.map((r) => r.userId),
    });
    setPending(false);
    if (!result.ok) return setError(result.message);
    router.push(`/merge-requests/${result.value.mergeRequestId}`);
  }

  /** Changing a branch reloads the page, which recomputes the title suggestion and what the source brings. */
  function pickBranches(form: HTMLFormElement) {
    const data = new FormData(form);
    const params = new URLSearchParams({ documentId, source: String(data.get("source")), target: String(data.get("target")) });
    router.replace(`/merge-requests/new?${params}`);
  }

  const empty = source === target || ("commits" in incoming && incoming.commits === 0);
  return (
    <form className="panel form mr-create" onSubmit={onSubmit} aria-label="New merge request">
      <div className="mr-create-branches">
        <label className="field">
          <span>Source branch</span>
          <select name="source" defaultValue={source} onChange={(e) => pickBranches(e.currentTarget.form!)}>
            {branches.map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
        </label>
        <span aria-hidden="true">→</span>
        <label className="field">
          <span>Target branch</span>
          <select name="target" defaultValue={target} onChange={(e) => pickBranches(e.currentTarget.form!)}>
            {branches.map((b) => (
              <option key={b}>{b}</option>
            ))}
          </select>
        </label>
      </div>
      {empty ? (
        <p className="banner banner-warning" role="status" data-testid="empty-request">
          {source === target
            ? "Source and target are the same branch: a merge request brings one branch into another."
            : `Nothing to merge: ${target} already has every commit of ${source}. Commit to ${source} first, then open the request.`}
        </p>
      ) : "unread" in incoming ? (
        <p className="banner banner-warning" role="alert" data-testid="incoming-unread">
          {incoming.unread}
        </p>
      ) : (
        <p className="muted small">
          {incoming.commits} commit{incoming.commits === 1 ? "" : "s"} on {source} that {target} does not have.
        </p>
      )}
      <label className="field">
        <span>Title</span>
        <input name="title" defaultValue={suggestedTitle} key={suggestedTitle} required maxLength={300} />
      </label>
      <label className="field">
        <span>Description (markdown)</span>
        <textarea name="description" rows={5} />
      </label>
      <ReviewerPicker author={authorId} chosen={reviewers} onChange={setReviewers} />
      <FormError error={error} spaced={false} />
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={empty || pending}>
          {pending ? "Opening…" : "Open merge request"}
        </button>
      </div>
    </form>
  );
}
