"use client";

import { useRouter } from "next/navigation";
import { ConfirmButton } from "@/app/_components/confirm-button";
import { useDocumentsTool } from "@/app/_lib/tool-call";

/**
 * "Revert to this commit", confirmed inline; then the history shows the new
 * revert commit. It names the branch head the page showed, so a commit made
 * since is never taken back unseen (the server answers BRANCH_MOVED).
 */
export function RevertButton({
  documentId,
  branchName,
  commitId,
  headCommitId,
}: {
  documentId: string;
  branchName: string;
  commitId: string;
  headCommitId: string;
}) {
  const router = useRouter();
  const documents = useDocumentsTool();
  return (
    <ConfirmButton
      label="Revert to this commit"
      question={`Make a new commit on ${branchName} that restores the document as this commit left it?`}
      confirmLabel="Revert"
      pendingLabel="Reverting…"
      onConfirm={async () => {
        const result = await documents({ action: "revert", documentId, branchName, commitId, expectedHeadCommitId: headCommitId });
        if (!result.ok) return result.message;
        const query = new URLSearchParams({ branch: branchName, commit: result.value.commitId });
        if (!result.value.changed) query.set("unchanged", "1");
        router.push(`/documents/${documentId}/history?${query}`);
        router.refresh();
        return null;
      }}
    />
  );
}
