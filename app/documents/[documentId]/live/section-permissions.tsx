"use client";

/**
 * A section's permission overrides (team default and AI access), changed from
 * the section's tools. Opening it reads the current values; on the default
 * branch the form stays read only and says why (changes go through a merge
 * request). The server decides who may change them; a refusal shows its message.
 */
import { useState } from "react";
import { FormError, useActionForm } from "@/app/_components/action-form";
import { type PermissionChoice, readSectionPermissions, type SectionPermissionsView, setSectionPermissions } from "./actions";
import type { RoomAddress } from "./live-room";

const CHOICES: ReadonlyArray<{ value: string; label: string }> = [
  { value: "", label: "Inherit from document" },
  { value: "edit", label: "Edit" },
  { value: "read", label: "Read" },
  { value: "none", label: "None" },
];

export function SectionPermissions({ address, sectionId }: { address: RoomAddress; sectionId: string }) {
  const [open, setOpen] = useState(false);
  const [view, setView] = useState<SectionPermissionsView | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) =>
      setSectionPermissions({
        ...address,
        sectionId,
        defaultPermission: data.get("defaultPermission"),
        aiAccess: data.get("aiAccess"),
      }),
    () => setOpen(false),
  );
  const toggle = async () => {
    if (open) {
      setOpen(false);
      return;
    }
    setOpen(true);
    setView(null);
    setLoadError(null);
    const result = await readSectionPermissions({ ...address, sectionId });
    if (result.ok) setView(result.value);
    else setLoadError(result.message);
  };
  const formId = `section-permissions-${sectionId}`;
  return (
    <div className="section-permissions">
      <button type="button" className="button button-small button-quiet" aria-expanded={open} aria-controls={formId} onClick={toggle}>
        Permissions
      </button>
      {open ? (
        <form id={formId} className="section-permissions-form" data-overlay="" aria-label="Section permissions" onSubmit={onSubmit}>
          {loadError ? (
            <p className="inline-error" role="alert">
              {loadError}
            </p>
          ) : !view ? (
            <p className="muted">Loading permissions…</p>
          ) : (
            <>
              <PermissionSelect
                name="defaultPermission"
                label="Team"
                current={view.defaultPermission}
                locked={view.lockedReason !== null}
              />
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
          <button type="button" className="button button-small button-quiet" onClick={() => setOpen(false)} disabled={pending}>
            Close
          </button>
          <FormError error={error} />
        </form>
      ) : null}
    </div>
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
