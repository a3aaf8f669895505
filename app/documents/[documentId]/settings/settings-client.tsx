"use client";

/**
 * The document settings page's forms. Every call goes through the typed tRPC
 * tools, which decide again whether the person may do it; the page hiding a
 * control is a courtesy. Where the server takes a change only through a merge
 * request (a deletion always; any change while the default branch is
 * protected) the form makes the branch, writes there, opens the request and
 * lands on it.
 */
import { useRouter } from "next/navigation";
import { type FormEvent, useId, useState } from "react";
import type { ActionResult } from "@/app/_lib/action-result";
import { useDocumentsTool, useMergeRequestsTool } from "@/app/_lib/tool-call";

type Refusal = { code: string; message: string };
type Pending = { kind: "idle" } | { kind: "pending" } | { kind: "done"; message: string } | { kind: "error"; refusal: Refusal };

/** A refusal as the page shows it: the server's code and its message (what to do next). */
export function CodedError({ refusal }: { refusal: Refusal | null }) {
  if (!refusal) return null;
  return (
    <p className="form-error coded-error" role="alert" data-code={refusal.code}>
      <code>{refusal.code}</code> {refusal.message}
    </p>
  );
}

/** A branch name for a change made on the way to a merge request: `<prefix>-<UTC yyyymmdd-hhmmss>` (BRANCH_EXISTS in the same second). */
const branchFor = (prefix: string) => `${prefix}-${new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-")}`;

/**
 * Makes a branch from the default branch, writes on it and opens a merge
 * request into the default branch: the way a deletion (and, while the default
 * branch is protected, every change) reaches it. A failed write takes its
 * branch back, so nothing is left behind.
 */
export function useThroughMergeRequest() {
  const documents = useDocumentsTool();
  const mergeRequests = useMergeRequestsTool();
  return async (options: {
    documentId: string;
    defaultBranch: string;
    prefix: string;
    title: string;
    write: (branchName: string) => Promise<ActionResult<unknown>>;
  }): Promise<ActionResult<{ mergeRequestId: string }>> => {
    const { documentId, defaultBranch } = options;
    const branchName = branchFor(options.prefix);
    const created = await documents({ action: "create_branch", documentId, branchName, sourceBranch: defaultBranch });
    if (!created.ok) return created;
    const written = await options.write(branchName);
    const opened = written.ok
      ? await mergeRequests({ action: "create", documentId, sourceBranch: branchName, targetBranch: defaultBranch, title: options.title })
      : written;
    if (!opened.ok) {
      await documents({ action: "delete_branch", documentId, branchName, discardDraft: true });
      return opened;
    }
    return { ok: true, value: { mergeRequestId: (opened.value as { mergeRequestId: string }).mergeRequestId } };
  };
}

/** Rename and move in one form: a commit on the default branch, or a merge request while it is protected. */
export function NameAndPathForm({
  documentId,
  defaultBranch,
  name,
  path,
  isProtected,
}: {
  documentId: string;
  defaultBranch: string;
  name: string;
  path: string;
  isProtected: boolean;
}) {
  const router = useRouter();
  const documents = useDocumentsTool();
  const throughMergeRequest = useThroughMergeRequest();
  const [state, setState] = useState<Pending>({ kind: "idle" });
  const ids = useId();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const newName = data.get("name")?.toString() ?? "";
    const newPath = data.get("path")?.toString() ?? "";
    const changes = {
      ...(newName !== name ? { newName } : {}),
      ...(newPath !== path ? { newPath } : {}),
    };
    if (Object.keys(changes).length === 0) {
      setState({ kind: "done", message: "Nothing to save: the name and path are as they were." });
      return;
    }
    setState({ kind: "pending" });
    if (isProtected) {
      const opened = await throughMergeRequest({
        documentId,
        defaultBranch,
        prefix: "rename",
        title: `Rename or move ${path}`,
        write: (branchName) => documents({ action: "update", documentId, branchName, ...changes }),
      });
      if (!opened.ok) return setState({ kind: "error", refusal: opened });
      router.push(`/merge-requests/${opened.value.mergeRequestId}`);
      return;
    }
    const saved = await documents({ action: "update", documentId, branchName: defaultBranch, ...changes });
    if (!saved.ok) return setState({ kind: "error", refusal: saved });
    setState({ kind: "done", message: "Saved." });
    router.refresh();
  }

  return (
    <form className="manage-form" onSubmit={onSubmit} aria-label="Name and path" data-testid="name-path-form">
      <label className="field" htmlFor={`${ids}-name`}>
        <span>Name</span>
        <input id={`${ids}-name`} type="text" name="name" defaultValue={name} required maxLength={200} />
      </label>
      <label className="field" htmlFor={`${ids}-path`}>
        <span>Path</span>
        <input id={`${ids}-path`} type="text" name="path" defaultValue={path} required maxLength={500} spellCheck={false} />
        <small className="muted">Folders are the parts before a slash, e.g. handbook/onboarding. Unique among live documents.</small>
      </label>
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={state.kind === "pending"}>
          {state.kind === "pending" ? "Saving…" : isProtected ? "Propose in a merge request" : "Save name and path"}
        </button>
        {state.kind === "done" ? (
          <span className="muted small" role="status">
            {state.message}
          </span>
        ) : null}
      </div>
      <CodedError refusal={state.kind === "error" ? state.refusal : null} />
    </form>
  );
}

/** Deleting goes through a merge request, as the server asks: after a confirmation, a branch, the deletion there, and the request. */
export function DeleteDocumentButton({ documentId, defaultBranch, path }: { documentId: string; defaultBranch: string; path: string }) {
  const router = useRouter();
  const documents = useDocumentsTool();
  const throughMergeRequest = useThroughMergeRequest();
  const [state, setState] = useState<{ kind: "idle" } | { kind: "asking" } | { kind: "pending" } | { kind: "error"; refusal: Refusal }>({
    kind: "idle",
  });

  async function confirm() {
    setState({ kind: "pending" });
    const opened = await throughMergeRequest({
      documentId,
      defaultBranch,
      prefix: "delete",
      title: `Delete ${path}`,
      write: (branchName) => documents({ action: "delete", documentId, branchName }),
    });
    if (!opened.ok) return setState({ kind: "error", refusal: opened });
    router.push(`/merge-requests/${opened.value.mergeRequestId}`);
  }

  if (state.kind === "idle" || state.kind === "error") {
    return (
      <div>
        <button type="button" className="button button-danger-quiet" onClick={() => setState({ kind: "asking" })}>
          Delete document…
        </button>
        <CodedError refusal={state.kind === "error" ? state.refusal : null} />
      </div>
    );
  }
  return (
    <div className="confirm confirm-asking manage-delete">
      <span className="confirm-question">
        Open a merge request that deletes <strong>{path}</strong> from {defaultBranch}? It is deleted once the request is merged, and can be
        restored from Deleted documents.
      </span>
      <div className="button-row">
        <button type="button" className="button button-danger" disabled={state.kind === "pending"} onClick={confirm}>
          {state.kind === "pending" ? "Opening the merge request…" : "Delete through a merge request"}
        </button>
        <button
          type="button"
          className="button button-quiet"
          disabled={state.kind === "pending"}
          onClick={() => setState({ kind: "idle" })}
        >
          Cancel
        </button>
      </div>
    </div>
  );
}

/** The document's merge rule, for those who manage it. */
export function RequiredApprovalsForm({ documentId, requiredApprovals }: { documentId: string; requiredApprovals: number }) {
  const router = useRouter();
  const mergeRequests = useMergeRequestsTool();
  const [state, setState] = useState<Pending>({ kind: "idle" });
  const id = useId();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const value = Number(new FormData(event.currentTarget).get("requiredApprovals"));
    setState({ kind: "pending" });
    const saved = await mergeRequests({ action: "set_required_approvals", documentId, requiredApprovals: value });
    if (!saved.ok) return setState({ kind: "error", refusal: saved });
    setState({ kind: "done", message: "Saved." });
    router.refresh();
  }

  return (
    <form
      className="manage-form manage-form-inline"
      onSubmit={onSubmit}
      aria-label="Required approvals"
      data-testid="required-approvals-form"
    >
      <label className="field field-narrow" htmlFor={id}>
        <span>Required approvals</span>
        <input id={id} name="requiredApprovals" type="number" min={0} max={20} step={1} defaultValue={requiredApprovals} required />
      </label>
      <div className="button-row">
        <button type="submit" className="button" disabled={state.kind === "pending"}>
          {state.kind === "pending" ? "Saving…" : "Save"}
        </button>
        {state.kind === "done" ? (
          <span className="muted small" role="status">
            {state.message}
          </span>
        ) : null}
      </div>
      <CodedError refusal={state.kind === "error" ? state.refusal : null} />
    </form>
  );
}

/**
 * Deletes a branch after a confirmation. `uncommittedChanges`: the branch's
 * draft holds live edits, which the question names and the call throws away
 * (the server refuses otherwise). `onDeleted` runs instead of a refresh.
 */
export function DeleteBranchButton({
  documentId,
  branchName,
  uncommittedChanges,
  label = "Delete",
  onDeletedHref,
}: {
  documentId: string;
  branchName: string;
  uncommittedChanges: boolean;
  label?: string;
  onDeletedHref?: string;
}) {
  const router = useRouter();
  const documents = useDocumentsTool();
  const [state, setState] = useState<
    { kind: "idle" } | { kind: "asking" } | { kind: "pending" } | { kind: "error"; refusal: Refusal } | { kind: "deleted" }
  >({ kind: "idle" });

  async function confirm() {
    setState({ kind: "pending" });
    const deleted = await documents({ action: "delete_branch", documentId, branchName, discardDraft: uncommittedChanges });
    if (!deleted.ok) return setState({ kind: "error", refusal: deleted });
    setState({ kind: "deleted" });
    if (onDeletedHref) router.push(onDeletedHref);
    else router.refresh();
  }

  if (state.kind === "deleted") {
    return (
      <span className="muted small" role="status">
        Branch {branchName} deleted.
      </span>
    );
  }
  if (state.kind === "idle" || state.kind === "error") {
    return (
      <div className="confirm">
        <button
          type="button"
          className="button button-small button-danger-quiet"
          onClick={() => setState({ kind: "asking" })}
          aria-label={label === "Delete" ? `Delete branch ${branchName}` : undefined}
        >
          {label}
        </button>
        <CodedError refusal={state.kind === "error" ? state.refusal : null} />
      </div>
    );
  }
  return (
    <div className="confirm confirm-asking">
      <span className="confirm-question">
        Delete branch <code>{branchName}</code>? {uncommittedChanges ? "Its uncommitted live edits are thrown away. " : ""}Its commits stay
        in the history.
      </span>
      <button type="button" className="button button-small button-danger" disabled={state.kind === "pending"} onClick={confirm}>
        {state.kind === "pending" ? "Deleting…" : "Delete branch"}
      </button>
      <button
        type="button"
        className="button button-small button-quiet"
        disabled={state.kind === "pending"}
        onClick={() => setState({ kind: "idle" })}
      >
        Cancel
      </button>
    </div>
  );
}
