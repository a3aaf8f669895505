"use client";

/**
 * Restore on the Deleted view. On an unprotected default branch the document
 * comes back at once (a commit there: restoring loses nothing); while the
 * default branch is protected the restoration is proposed in a merge request,
 * as every change to it is. When a live document took the path meanwhile the
 * server says PATH_TAKEN and the person picks another path here.
 */
import { useRouter } from "next/navigation";
import { type FormEvent, useId, useState } from "react";
import { CodedError, useThroughMergeRequest } from "@/app/documents/[documentId]/settings/settings-client";
import { useDocumentsTool } from "@/app/_lib/tool-call";

type Refusal = { code: string; message: string };

export function RestoreDocumentButton({
  documentId,
  defaultBranch,
  path,
  requiredApprovals,
}: {
  documentId: string;
  defaultBranch: string;
  path: string;
  requiredApprovals: number;
}) {
  const router = useRouter();
  const documents = useDocumentsTool();
  const throughMergeRequest = useThroughMergeRequest();
  const [state, setState] = useState<{ kind: "idle" } | { kind: "pending" } | { kind: "error"; refusal: Refusal } | { kind: "restored" }>({
    kind: "idle",
  });
  const [askPath, setAskPath] = useState(false);
  const id = useId();

  async function restore(newPath?: string) {
    setState({ kind: "pending" });
    const moved = newPath !== undefined && newPath !== path ? { newPath } : {};
    if (requiredApprovals > 0) {
      const opened = await throughMergeRequest({
        documentId,
        defaultBranch,
        prefix: "restore",
        title: `Restore ${path}`,
        write: (branchName) => documents({ action: "restore", documentId, branchName, ...moved }),
      });
      if (!opened.ok) return refused(opened);
      router.push(`/merge-requests/${opened.value.mergeRequestId}`);
      return;
    }
    const restored = await documents({ action: "restore", documentId, branchName: defaultBranch, ...moved });
    if (!restored.ok) return refused(restored);
    setState({ kind: "restored" });
    router.refresh();
  }

  function refused(refusal: Refusal) {
    if (refusal.code === "PATH_TAKEN") setAskPath(true);
    setState({ kind: "error", refusal });
  }

  function onSubmitPath(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    void restore(new FormData(event.currentTarget).get("newPath")?.toString() ?? path);
  }

  if (state.kind === "restored") {
    return (
      <span className="muted small" role="status">
        Restored. <a href={`/documents/${documentId}`}>Open it</a>
      </span>
    );
  }
  return (
    <div className="restore">
      {askPath ? (
        <form className="inline-form" onSubmit={onSubmitPath} aria-label={`Restore ${path} under another path`}>
          <label className="field" htmlFor={id}>
            <span>Restore under another path</span>
            <input id={id} type="text" name="newPath" defaultValue={`${path}-restored`} required maxLength={500} spellCheck={false} />
          </label>
          <button type="submit" className="button button-small" disabled={state.kind === "pending"}>
            {state.kind === "pending" ? "Restoring…" : "Restore here"}
          </button>
        </form>
      ) : (
        <button
          type="button"
          className="button button-small"
          disabled={state.kind === "pending"}
          onClick={() => void restore()}
          aria-label={`Restore ${path}`}
        >
          {state.kind === "pending" ? "Restoring…" : requiredApprovals > 0 ? "Propose restoring" : "Restore"}
        </button>
      )}
      <CodedError refusal={state.kind === "error" ? state.refusal : null} />
    </div>
  );
}
