"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { FormError, useActionForm } from "@/app/_components/action-form";
import { createDocument } from "@/app/documents/actions";

/** "New document": a path (folders separated by /) and an optional name; opens the new document on main. */
export function NewDocumentForm() {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const { pending, error, onSubmit } = useActionForm(
    (data) => createDocument({ path: data.get("path"), name: data.get("name") }),
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
