"use client";

/** "New branch" from the branch being viewed: the server checks the name and access; the form then closes and the page opens the new branch. */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { field, InlineError, useActionForm } from "@/app/_components/action-form";
import { useDocumentsTool } from "./tools";
import "./live.css";

export function NewBranchForm({ documentId, sourceBranch }: { documentId: string; sourceBranch: string }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const documents = useDocumentsTool();
  const { pending, error, onSubmit } = useActionForm(
    (data) => documents({ action: "create_branch", documentId, branchName: field(data, "branchName").trim(), sourceBranch }),
    (created) => {
      // Done: the form closes and the page opens the new branch.
      setOpen(false);
      router.push(`/documents/${encodeURIComponent(documentId)}?branch=${encodeURIComponent(created.branchName)}`);
    },
  );
  if (!open) {
    return (
      <button type="button" className="button button-small new-branch-button" onClick={() => setOpen(true)}>
        New branch from {sourceBranch}
      </button>
    );
  }
  return (
    <form className="new-branch-form" onSubmit={onSubmit} aria-label="New branch">
      <label htmlFor="new-branch-name">New branch from {sourceBranch}</label>
      {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, and the name is what comes next */}
      <input id="new-branch-name" name="branchName" required maxLength={100} placeholder="e.g. spring-prices" autoFocus />
      <div className="new-branch-actions">
        <button type="submit" className="button button-small button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create"}
        </button>
        <button type="button" className="button button-small button-quiet" onClick={() => setOpen(false)} disabled={pending}>
          Cancel
        </button>
      </div>
      <InlineError error={error} />
    </form>
  );
}
