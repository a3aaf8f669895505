"use client";

/**
 * A section's permission overrides (team default and AI access), changed from
 * the section's "⋯" menu (Permissions…). Opening it reads the current values; on the default
 * branch the form stays read only and says why (changes go through a merge
 * request). The server decides who may change them; a refusal shows its message.
 */
import { useEffect, useState } from "react";
import { FormError, field, useActionForm } from "@/app/_components/action-form";
import type { Permission } from "@/app/_lib/quire";
import type { RoomAddress } from "./live-room";
import { useDocumentsTool, useReadNow, useSectionsTool } from "./tools";

/** An override as the form shows it: a permission, or null to inherit from the document. */
type PermissionChoice = Permission | null;

interface SectionPermissionsView {
  defaultPermission: PermissionChoice;
  aiAccess: PermissionChoice;
  /** Set when the overrides cannot be changed here: the default branch, where a change goes through a merge request. */
  lockedReason: string | null;
}

/** The select's value as the `sections` tool takes it ("" = inherit); the tool's schema judges anything else. */
const choiceOf = (data: FormData, name: string) => field(data, name) || null;

const CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: "", label: "Inherit from document" },
  { value: "edit", label: "Edit" },
  { value: "read", label: "Read" },
  { value: "none", label: "None" },
];

export function SectionPermissions({ address, sectionId, onClose }: { address: RoomAddress; sectionId: string; onClose: () => void }) {
  const [view, setView] = useState<SectionPermissionsView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const documents = useDocumentsTool();
  const sections = useSectionsTool();
  const readNow = useReadNow();
  const { documentId, branchName } = address;
  const { pending, error, onSubmit } = useActionForm(
    (data) =>
      sections({
        action: "update",
        documentId,
        branchName,
        sectionId,
        // The schema takes edit | read | none | null; anything else a tampered form sends is refused there.
        defaultPermission: choiceOf(data, "defaultPermission") as PermissionChoice,
        aiAccess: choiceOf(data, "aiAccess") as PermissionChoice,
        commitMessage: "Change section permissions",
      }),
    onClose,
  );
  // Opening reads the current values (the tools' own answers, as of now).
  // biome-ignore lint/correctness/useExhaustiveDependencies: read once per opening; the tool hooks are new functions each render
  useEffect(() => {
    let current = true;
    void (async () => {
      const [document, read] = await Promise.all([
        documents({ action: "get", documentId }),
        readNow({ documentId, branchName, sectionIds: [sectionId] }),
      ]);
      if (!current) return;
      if (!document.ok) return setLoadError(document.message);
      if (!read.ok) return setLoadError(read.message);
      const section = read.value.sections.find((s) => s.sectionId === sectionId);
      if (!section) return setLoadError("This section is no longer on the branch.");
      const { defaultBranch } = document.value;
      setView({
        defaultPermission: section.defaultPermission,
        aiAccess: section.aiAccess,
        lockedReason:
          branchName === defaultBranch
            ? `Section permissions cannot be changed directly on the default branch "${defaultBranch}": change them on another branch and merge it with a merge request, so the change is reviewed.`
            : null,
      });
    })();
    return () => {
      current = false;
    };
  }, [documentId, branchName, sectionId]);
  return (
    <form className="section-permissions-form" aria-label="Section permissions" onSubmit={onSubmit}>
      {loadError ? (
        <p className="inline-error" role="alert">
          {loadError}
        </p>
      ) : !view ? (
        <p className="muted">Loading permissions…</p>
      ) : (
        <>
          <PermissionSelect name="defaultPermission" label="Team" current={view.defaultPermission} locked={view.lockedReason !== null} />
          <PermissionSelect name="aiAccess" label="AI" current={view.aiAccess} locked={view.lockedReason !== null} />
          {view.lockedReason ? (
            <p className="muted section-permissions-reason">{view.lockedReason}</p>
          ) : (
            <button type="submit" className="button button-small button-primary" disabled={pending}>
              {pending ? "Saving…" : "Save permissions"}
            </button>
          )}
        </>
      )}
      <button type="button" className="button button-small button-quiet" onClick={onClose} disabled={pending}>
        Close
      </button>
      <FormError error={error} />
    </form>
  );
}

function PermissionSelect({ name, label, current, locked }: { name: string; label: string; current: PermissionChoice; locked: boolean }) {
  return (
    <label className="section-permissions-field">
      <span>{label}</span>
      <select name={name} defaultValue={current ?? ""} disabled={locked}>
        {CHOICES.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    </label>
  );
}
