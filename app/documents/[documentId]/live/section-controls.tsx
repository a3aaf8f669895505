"use client";

/** The structure buttons of the live document: move and delete beside each section, add at a place. Each goes through the `sections` tool; the outline room then shows the new order to everyone. */
import { useRouter } from "next/navigation";
import { useState } from "react";
import { useActionForm } from "@/app/_components/action-form";
import { ConfirmButton } from "@/app/_components/confirm-button";
import { addSection, deleteSection, moveSection } from "./actions";
import type { RoomAddress } from "./live-room";

export function SectionControls({
  address,
  sectionId,
  index,
  count,
}: {
  address: RoomAddress;
  sectionId: string;
  index: number;
  count: number;
}) {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const move = async (direction: "up" | "down") => {
    setPending(true);
    const result = await moveSection({ ...address, sectionId, direction });
    setPending(false);
    setError(result.ok ? null : result.message);
    if (result.ok) router.refresh();
  };
  return (
    <>
      <button
        type="button"
        className="button button-small button-quiet"
        disabled={pending || index === 0}
        onClick={() => move("up")}
        aria-label="Move section up"
      >
        ↑
      </button>
      <button
        type="button"
        className="button button-small button-quiet"
        disabled={pending || index === count - 1}
        onClick={() => move("down")}
        aria-label="Move section down"
      >
        ↓
      </button>
      <ConfirmButton
        label="Delete"
        question="Delete this section on this branch? It stays in history."
        confirmLabel="Delete section"
        pendingLabel="Deleting…"
        onConfirm={async () => {
          const result = await deleteSection({ ...address, sectionId });
          if (!result.ok) return result.message;
          router.refresh();
          return null;
        }}
      />
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
    </>
  );
}

export function AddSection({ address, position, label }: { address: RoomAddress; position: number; label: string }) {
  const [open, setOpen] = useState(false);
  const { pending, error, onSubmit } = useActionForm(
    (data) => addSection({ ...address, name: String(data.get("name") ?? ""), position }),
    () => setOpen(false),
  );
  if (!open) {
    return (
      <div className="add-section">
        <button type="button" className="button button-small button-quiet" onClick={() => setOpen(true)}>
          + {label}
        </button>
      </div>
    );
  }
  return (
    <form className="add-section add-section-open" onSubmit={onSubmit}>
      <label>
        <span className="visually-hidden">New section name</span>
        {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, and typing the name is the next step */}
        <input name="name" required maxLength={200} placeholder="New section name" autoFocus />
      </label>
      <button type="submit" className="button button-small button-primary" disabled={pending}>
        {pending ? "Adding…" : "Add section"}
      </button>
      <button type="button" className="button button-small button-quiet" onClick={() => setOpen(false)} disabled={pending}>
        Cancel
      </button>
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
