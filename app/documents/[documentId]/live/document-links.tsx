"use client";

/**
 * Links between Quire documents from the editor: the block menu's "Link to a
 * Quire document…" finds a document by name or path among those this person
 * may see (the `documents` tool's own `list`, so nothing hidden is offered)
 * and adds it to the section's "See also" list (`sections add_reference`);
 * editors remove a link there. Each is one commit.
 */
import { useRouter } from "next/navigation";
import { type KeyboardEvent, useEffect, useId, useRef, useState } from "react";
import { InlineError } from "@/app/_components/action-form";
import type { DocumentSummary } from "@/app/_lib/quire";
import type { RoomAddress } from "./live-room";
import { useDocumentsTool, useSectionsTool } from "./tools";

/** Moves focus between the picker's search field and its results with the arrow keys. */
function moveFocus(event: KeyboardEvent<HTMLElement>) {
  if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
  const stops = [...event.currentTarget.querySelectorAll<HTMLElement>("input, [data-result]")];
  const at = stops.indexOf(document.activeElement as HTMLElement);
  const next = stops[at + (event.key === "ArrowDown" ? 1 : -1)];
  if (next) {
    event.preventDefault();
    next.focus();
  }
}

export function DocumentLinkPicker({ address, sectionId, onClose }: { address: RoomAddress; sectionId: string; onClose: () => void }) {
  const router = useRouter();
  const documents = useDocumentsTool();
  // The search's timer calls the latest one: it is a new function at each render (the call's own progress
  // re-renders), which must not restart the search and drop its answer.
  const listDocuments = useRef(documents);
  listDocuments.current = documents;
  const sections = useSectionsTool();
  const fieldId = useId();
  const [search, setSearch] = useState("");
  const [found, setFound] = useState<DocumentSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  useEffect(() => {
    const wanted = search.trim();
    if (!wanted) {
      setFound(null);
      return;
    }
    let current = true;
    // Asked once typing pauses, and only the latest answer is shown.
    const timer = setTimeout(async () => {
      // The `documents` tool's own list: only documents this person may see are offered.
      const result = await listDocuments.current({ action: "list", search: wanted, orderBy: "updated", limit: 8 });
      if (!current) return;
      if (result.ok) {
        setFound(result.value.documents.filter((d) => d.documentId !== address.documentId));
        setError(null);
      } else setError(result.message);
    }, 150);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [search, address.documentId]);

  const link = async (target: DocumentSummary) => {
    setPending(true);
    // The link's text is the name as found here: a reference does not carry its target's name, which a reader may not be allowed to see.
    const result = await sections({
      action: "add_reference",
      documentId: address.documentId,
      branchName: address.branchName,
      sectionId,
      targetDocumentId: target.documentId,
      displayTitle: target.name.slice(0, 300),
    });
    setPending(false);
    if (!result.ok) {
      setError(result.message);
      return;
    }
    onClose();
    router.refresh();
  };

  return (
    <fieldset className="block-fields document-link-picker" onKeyDown={moveFocus}>
      <legend className="visually-hidden">Link to a Quire document</legend>
      <label className="field" htmlFor={fieldId}>
        Find a document by name or path
      </label>
      {/* biome-ignore lint/a11y/noAutofocus: the picker opens on request, and the name is the next thing to type */}
      <input id={fieldId} type="search" value={search} onChange={(event) => setSearch(event.target.value)} autoFocus />
      {found === null ? null : found.length === 0 ? (
        <p className="muted small" role="status">
          No document you can see matches “{search.trim()}”.
        </p>
      ) : (
        <ul className="document-link-results" aria-label="Matching documents">
          {found.map((d) => (
            <li key={d.documentId}>
              <button type="button" className="button button-small button-quiet" data-result="" disabled={pending} onClick={() => link(d)}>
                {d.name} <span className="muted">{d.path}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="button-row">
        <button type="button" className="button button-small button-quiet" onClick={onClose} disabled={pending}>
          Cancel
        </button>
      </div>
      <InlineError error={error} />
    </fieldset>
  );
}

/** Removes one "See also" link of a section (for people who edit it). */
export function RemoveReferenceButton({ address, referenceId, title }: { address: RoomAddress; referenceId: string; title: string }) {
  const router = useRouter();
  const sections = useSectionsTool();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const remove = async () => {
    setPending(true);
    const result = await sections({
      action: "remove_reference",
      documentId: address.documentId,
      branchName: address.branchName,
      referenceId,
    });
    setPending(false);
    setError(result.ok ? null : result.message);
    if (result.ok) router.refresh();
  };
  return (
    <>
      <button
        type="button"
        className="button button-small button-quiet"
        aria-label={`Remove the link to ${title}`}
        disabled={pending}
        onClick={remove}
      >
        Remove
      </button>
      <InlineError error={error} />
    </>
  );
}
