"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ReviewerPicker } from "@/app/_components/member-picker";
import type { WorkspacePerson } from "@/app/_lib/quire";
import { useChangesetsTool } from "../changesets-tool";

/** Opens the changeset for the documents the page listed: title, description and reviewers (never its author, `authorId`). */
export function NewChangesetForm({
  authorId,
  source,
  target,
  prefix,
}: {
  authorId: string;
  source: string;
  target: string;
  prefix: string;
}) {
  const router = useRouter();
  const changesets = useChangesetsTool();
  const [reviewers, setReviewers] = useState<WorkspacePerson[]>([]);
  const [state, setState] = useState<{ kind: "idle" | "pending" } | { kind: "error"; message: string }>({ kind: "idle" });

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setState({ kind: "pending" });
    const description = String(form.get("description") ?? "").trim();
    const result = await changesets({
      action: "create",
      sourceBranch: source,
      targetBranch: target,
      pathPrefix: prefix,
      title: String(form.get("title") ?? ""),
      ...(description ? { description } : {}),
      ...(reviewers.length > 0 ? { reviewerIds: reviewers.map((r) => r.userId) } : {}),
    });
    if (!result.ok) return setState({ kind: "error", message: result.message });
    router.push(`/changesets/${result.value.changesetId}`);
  }

  return (
    <form className="panel form mr-create" onSubmit={onSubmit} aria-label="Open the changeset">
      <label className="field">
        <span>Title</span>
        <input name="title" required maxLength={300} defaultValue={`Merge ${source} into ${target}`} />
      </label>
      <label className="field">
        <span>Description</span>
        <textarea name="description" rows={3} />
      </label>
      <ReviewerPicker author={authorId} chosen={reviewers} onChange={setReviewers} />
      {state.kind === "error" ? (
        <p className="form-error" role="alert">
          {state.message}
        </p>
      ) : null}
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={state.kind === "pending"}>
          {state.kind === "pending" ? "Opening…" : "Open changeset"}
        </button>
      </div>
    </form>
  );
}
