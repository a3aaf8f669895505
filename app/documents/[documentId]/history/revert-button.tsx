"use client";

import { useRouter } from "next/navigation";
import { ConfirmButton } from "@/app/_components/confirm-button";
import { revertToCommit } from "./actions";

/** "Revert to this commit", confirmed inline; then the history shows the new revert commit. */
export function RevertButton({ documentId, branchName, commitId }: { documentId: string; branchName: string; commitId: string }) {
  const router = useRouter();
  return (
    <ConfirmButton
      label="Revert to this commit"
      question={`Make a new commit on ${branchName} that restores the document as this commit left it?`}
      confirmLabel="Revert"
      pendingLabel="Reverting…"
      onConfirm={async () => {
        const result = await revertToCommit({ documentId, branchName, commitId });
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
