"use client";

import { useState } from "react";
import { FormError, field, useActionForm } from "@/app/_components/action-form";
import { useWorkspaceTool } from "@/app/_lib/tool-call";

/** Renames the workspace (owners and admins); the header follows once it is saved. */
export function WorkspaceNameForm({ name }: { name: string }) {
  const workspace = useWorkspaceTool();
  const [saved, setSaved] = useState<string | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) => workspace({ action: "rename", name: field(data, "name") }),
    (renamed) => setSaved(renamed.workspace.name),
  );

  return (
    <>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Rename the workspace">
        <label className="field field-grow">
          <span>Workspace name</span>
          {/* Keyed by the saved name, so the field shows it again after the form is reset. */}
          <input key={name} name="name" type="text" required maxLength={80} defaultValue={name} autoComplete="off" />
        </label>
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Saving…" : "Save"}
        </button>
      </form>
      <FormError error={error} />
      {saved !== null && !error ? (
        <p className="form-saved" role="status">
          Saved. Everyone now sees “{saved}”.
        </p>
      ) : null}
    </>
  );
}
