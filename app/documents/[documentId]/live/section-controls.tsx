"use client";

/**
 * The structure controls of the live document: beside each section a drag
 * handle, move up/down (the keyboard way to reorder) and a "⋯" menu with
 * "Add section below", Permissions and Delete (at once, with an Undo
 * toast); add at the top and the end. Each
 * goes through the `sections` tool; the outline room then shows the new
 * order to everyone.
 */
import { useRouter } from "next/navigation";
import { createContext, type DragEvent, type ReactNode, useContext, useState } from "react";
import { field, InlineError, useActionForm } from "@/app/_components/action-form";
import { useToast } from "@/app/_components/toast";
import type { RoomAddress } from "./live-room";
import { MenuButton } from "./menu-button";
import { SectionPermissions } from "./section-permissions";
import { useDocumentsTool, useSectionsTool } from "./tools";

/** The drag payload of a section being moved (not a file, so image drop ignores it). */
const SECTION_DRAG_TYPE = "application/x-quire-section";

/** A section's drag, from its handle: the section id as the payload, the section as the picture. */
export function startSectionDrag(event: DragEvent<HTMLElement>, sectionId: string) {
  event.dataTransfer.setData(SECTION_DRAG_TYPE, sectionId);
  event.dataTransfer.effectAllowed = "move";
  const section = (event.target as HTMLElement).closest("[data-section-id]");
  if (section) event.dataTransfer.setDragImage(section, 16, 16);
}

/** A section's name as the page shows it, for announcements. */
const sectionName = (section: Element | null | undefined) => section?.querySelector("h2")?.textContent?.trim() || "The section";

/** Says what the structure controls did, for screen readers (a polite live region beside the sections). */
const AnnounceContext = createContext<(message: string) => void>(() => {});

/**
 * Where a dragged section lands, for the element holding all sections: the
 * section under the pointer, before it when in its upper half, after it when
 * in its lower half; a line marks the place while dragging (`data-drop` on
 * that section). Sections far off screen are in the DOM as frames, so every
 * one is a target whether or not its editor is mounted.
 */
function useSectionDrop(address: RoomAddress, announce: (message: string) => void) {
  const router = useRouter();
  const sections = useSectionsTool();
  const [error, setError] = useState<string | null>(null);
  const targetOf = (event: DragEvent<HTMLElement>): { before: string; section: HTMLElement; edge: "before" | "after" } | null => {
    const section = (event.target as HTMLElement).closest<HTMLElement>("section[data-section-id]");
    if (!section) return null;
    const box = section.getBoundingClientRect();
    if (event.clientY < box.top + box.height / 2) return { before: section.dataset.sectionId!, section, edge: "before" };
    const all = [...event.currentTarget.querySelectorAll<HTMLElement>("section[data-section-id]")];
    return { before: all[all.indexOf(section) + 1]?.dataset.sectionId ?? "", section, edge: "after" };
  };
  const unmark = (list: HTMLElement) => {
    for (const marked of list.querySelectorAll("[data-drop]")) marked.removeAttribute("data-drop");
  };
  /** Accepts a section's drag over the list and marks where it would land. */
  const mark = (event: DragEvent<HTMLElement>) => {
    if (!event.dataTransfer.types.includes(SECTION_DRAG_TYPE)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "move";
    const target = targetOf(event);
    if (!target || target.section.getAttribute("data-drop") === target.edge) return;
    unmark(event.currentTarget);
    target.section.setAttribute("data-drop", target.edge);
  };
  return {
    error,
    handlers: {
      onDragEnter: mark,
      onDragOver: mark,
      onDragLeave: (event: DragEvent<HTMLElement>) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) unmark(event.currentTarget);
      },
      onDragEnd: (event: DragEvent<HTMLElement>) => unmark(event.currentTarget),
      onDrop: async (event: DragEvent<HTMLElement>) => {
        const list = event.currentTarget;
        unmark(list);
        const sectionId = event.dataTransfer.getData(SECTION_DRAG_TYPE);
        const target = sectionId ? targetOf(event) : null;
        if (!target) return;
        event.preventDefault();
        const moved = sectionName(list.querySelector(`[data-section-id="${CSS.escape(sectionId)}"]`));
        const before = target.before ? sectionName(list.querySelector(`[data-section-id="${CSS.escape(target.before)}"]`)) : null;
        const result = await sections({
          action: "move",
          documentId: address.documentId,
          branchName: address.branchName,
          sectionId,
          beforeSectionId: target.before || null,
        });
        setError(result.ok ? null : result.message);
        if (!result.ok) return;
        announce(before ? `Moved “${moved}” before “${before}”.` : `Moved “${moved}” to the end.`);
        router.refresh();
      },
    },
  };
}

/** Around the section list: where dragged sections drop, and what the structure controls say. */
export function SectionArrangement({ address, children }: { address: RoomAddress; children: ReactNode }) {
  const [announcement, setAnnouncement] = useState("");
  const drop = useSectionDrop(address, setAnnouncement);
  return (
    <>
      <AnnounceContext.Provider value={setAnnouncement}>
        <div className="section-list" {...drop.handlers}>
          {children}
        </div>
      </AnnounceContext.Provider>
      <p className="visually-hidden" role="status" data-testid="structure-status">
        {announcement}
      </p>
      {drop.error ? (
        <p className="inline-error" role="alert">
          The section was not moved: {drop.error}
        </p>
      ) : null}
    </>
  );
}

/**
 * A section's tools, one compact row: the drag grip, ↑ ↓ (the keyboard way to
 * reorder) and "⋯", a menu holding the rest (Add section below,
 * Permissions…, and Delete, last and out of the way). Add and Permissions
 * open their form as a panel under the row, so the row never wraps.
 */
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
  const sections = useSectionsTool();
  const documents = useDocumentsTool();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  const [panel, setPanel] = useState<"add" | "permissions" | null>(null);
  const toast = useToast();
  const announce = useContext(AnnounceContext);
  const { documentId, branchName } = address;
  const move = async (direction: "up" | "down", from: Element) => {
    const section = from.closest<HTMLElement>("section[data-section-id]");
    const name = sectionName(section);
    // Up: before the section above; down: before the one after the section below (or to the end).
    const siblings = [...(section?.closest(".section-list")?.querySelectorAll<HTMLElement>("section[data-section-id]") ?? [])];
    const at = section ? siblings.indexOf(section) : -1;
    const before = direction === "up" ? siblings[at - 1] : siblings[at + 2];
    setPending(true);
    const result = await sections({
      action: "move",
      documentId,
      branchName,
      sectionId,
      beforeSectionId: before?.dataset.sectionId ?? null,
    });
    setPending(false);
    setError(result.ok ? null : result.message);
    if (!result.ok) return;
    announce(`Moved “${name}” ${direction}, to place ${direction === "up" ? index : index + 2} of ${count}.`);
    router.refresh();
  };
  const remove = async () => {
    setPending(true);
    const result = await sections({ action: "delete", documentId, branchName, sectionId });
    setPending(false);
    setError(result.ok ? null : result.message);
    if (!result.ok) return;
    router.refresh();
    toast({
      message: "Section deleted",
      action: {
        label: "Undo",
        run: async () => {
          const undone = await documents({
            action: "undo",
            documentId,
            branchName,
            expectedHeadCommitId: result.value.commitId,
            commitMessage: "Undo: restore the deleted section",
          });
          if (!undone.ok) return undone.message;
          router.refresh();
          return null;
        },
      },
    });
  };
  return (
    <div className="section-tools" data-testid="section-tools">
      <span
        className="drag-handle"
        draggable
        title="Drag to move (or use ↑ ↓)"
        aria-hidden="true"
        data-testid="drag-handle"
        onDragStart={(event) => startSectionDrag(event, sectionId)}
      >
        ⠿
      </span>
      <button
        type="button"
        className="button button-small button-quiet"
        disabled={pending || index === 0}
        onClick={(event) => move("up", event.currentTarget)}
        aria-label="Move section up"
        title="Move section up"
      >
        ↑
      </button>
      <button
        type="button"
        className="button button-small button-quiet"
        disabled={pending || index === count - 1}
        onClick={(event) => move("down", event.currentTarget)}
        aria-label="Move section down"
        title="Move section down"
      >
        ↓
      </button>
      <MenuButton
        label="⋯"
        buttonLabel="More section actions"
        menuLabel="Section actions"
        disabled={pending}
        items={[
          { label: "Add section below", onSelect: () => setPanel("add") },
          { label: "Permissions…", onSelect: () => setPanel("permissions") },
          { label: "Delete section", onSelect: remove, danger: true },
        ]}
      />
      {panel === "add" ? (
        <div className="section-tools-panel" data-overlay="">
          <AddSectionForm address={address} position={index + 1} onClose={() => setPanel(null)} />
        </div>
      ) : panel === "permissions" ? (
        <div className="section-tools-panel" data-overlay="">
          <SectionPermissions address={address} sectionId={sectionId} onClose={() => setPanel(null)} />
        </div>
      ) : null}
      <InlineError error={error} />
    </div>
  );
}

/** "+ Add a section at the top / at the end": a button that opens the name field in place. */
export function AddSection({ address, position, label }: { address: RoomAddress; position: number; label: string }) {
  const [open, setOpen] = useState(false);
  if (!open) {
    return (
      <div className="add-section">
        <button type="button" className="button button-small button-quiet" onClick={() => setOpen(true)}>
          + {label}
        </button>
      </div>
    );
  }
  return <AddSectionForm address={address} position={position} onClose={() => setOpen(false)} />;
}

/** The new section's name, then one `sections` create at `position`. */
function AddSectionForm({ address, position, onClose }: { address: RoomAddress; position: number; onClose: () => void }) {
  const sections = useSectionsTool();
  const { pending, error, onSubmit } = useActionForm(
    (data) =>
      sections({
        action: "create",
        documentId: address.documentId,
        branchName: address.branchName,
        name: field(data, "name").trim(),
        content: [{ blockType: "text", text: "" }],
        position,
      }),
    onClose,
  );
  return (
    <form className="add-section add-section-open" onSubmit={onSubmit} aria-label="Add a section">
      <label>
        <span className="visually-hidden">New section name</span>
        {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, and typing the name is the next step */}
        <input name="name" required maxLength={200} placeholder="New section name" autoFocus />
      </label>
      <button type="submit" className="button button-small button-primary" disabled={pending}>
        {pending ? "Adding…" : "Add section"}
      </button>
      <button type="button" className="button button-small button-quiet" onClick={onClose} disabled={pending}>
        Cancel
      </button>
      <InlineError error={error} />
    </form>
  );
}
