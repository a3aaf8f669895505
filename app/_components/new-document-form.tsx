"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { FormError, field, optionalField, useActionForm } from "@/app/_components/action-form";
import { useDocumentsTool } from "@/app/_lib/tool-call";

/** "New document": a path (folders separated by /) and an optional name; opens the new document on main. */
export function NewDocumentForm() {
  const router = useRouter();
  const documents = useDocumentsTool();
  const [open, setOpen] = useState(false);
  const { pending, error, onSubmit } = useActionForm(
    (data) => documents({ action: "create", path: field(data, "path"), name: optionalField(data, "name") }),
    (created) => router.push(`/documents/${created.documentId}`),
  );

  if (!open) {
    return (
      <button type="button" className="button button-primary" onClick={() => setOpen(true)}>
        New document
      </button>
    );
  }
  return (
    <form className="new-document" onSubmit={onSubmit} aria-label="New document">
      <label className="field">
        <span>Path</span>
        {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, to be typed in */}
        <input name="path" type="text" required maxLength={500} placeholder="handbook/onboarding" autoComplete="off" autoFocus />
      </label>
      <label className="field">
        <span>Name (optional)</span>
        <input name="name" type="text" maxLength={200} placeholder="Onboarding" autoComplete="off" />
      </label>
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create"}
        </button>
        <button type="button" className="button button-quiet" onClick={() => setOpen(false)} disabled={pending}>
          Cancel
        </button>
      </div>
      <FormError error={error} />
    </form>
  );
}
