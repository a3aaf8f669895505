"use client";

/**
 * "Insert block" under each editable section: a menu of every block kind of
 * the spec's block table. Text is added at once; image, file and CSV ask for
 * a file (uploaded through `upload_url`, then one commit, as image drop does);
 * a document link asks for its URL and name; a database embed for the
 * database's id; a link to a Quire document is found by name and goes to the
 * section's "See also" list (document-links.tsx). Each is one commit adding the block after the block the
 * writer was last in (`afterIndex`; at the end when they have been in none);
 * the section's room then shows it to every open page. The server
 * checks each block, and its refusal is shown here as it is worded.
 */
import Papa from "papaparse";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { useActionForm, InlineError } from "@/app/_components/action-form";
import type { Block } from "@/server/core/blocks";
import { DocumentLinkPicker } from "./document-links";
import { mediaTypeOf, useUploadAsBlock } from "./image-drop";
import type { RoomAddress } from "./live-room";
import { MenuButton } from "./menu-button";
import { useInsertBlock } from "./tools";

type FileKind = "image" | "file" | "csv";
type FormKind = "document" | "database" | "quire";

const KINDS: ReadonlyArray<{ kind: "text" | FileKind | FormKind; label: string }> = [
  { kind: "text", label: "Text" },
  { kind: "image", label: "Image…" },
  { kind: "file", label: "File…" },
  { kind: "csv", label: "CSV table…" },
  { kind: "document", label: "Document link…" },
  { kind: "database", label: "Database embed…" },
  { kind: "quire", label: "Link to a Quire document…" },
];

const ACCEPT: Record<FileKind, string> = { image: "image/*", file: "", csv: ".csv,text/csv" };

/** A CSV file's header row and number of data rows, as papaparse reads it (quotes, embedded newlines, BOM). */
async function csvShape(file: File): Promise<{ headers: string[]; rowCount: number }> {
  const parsed = Papa.parse<string[]>(await file.text(), { skipEmptyLines: true });
  const [headers = [], ...rows] = parsed.data;
  return { headers, rowCount: rows.length };
}

async function fileBlock(kind: FileKind, file: File): Promise<(key: string) => Block> {
  const mediaType = mediaTypeOf(file);
  const filename = file.name || "file";
  if (kind === "image") return (key) => ({ blockType: "image", type: "storage", mediaType, key });
  if (kind === "file") return (key) => ({ blockType: "file", type: "storage", mediaType, key, filename });
  const shape = await csvShape(file);
  return (key) => ({ blockType: "csv", type: "storage", mediaType: "text/csv", key, filename, ...shape });
}

export function BlockMenu({
  address,
  sectionId,
  afterIndex,
}: {
  address: RoomAddress;
  sectionId: string;
  /** Where the new block goes: after this block (read when the block is added). */
  afterIndex: () => number | undefined;
}) {
  const router = useRouter();
  const insertBlock = useInsertBlock();
  const uploadAsBlock = useUploadAsBlock();
  const [form, setForm] = useState<FormKind | null>(null);
  const [state, setState] = useState<{ kind: "idle" } | { kind: "pending" } | { kind: "error"; message: string }>({ kind: "idle" });
  const fileKind = useRef<FileKind>("file");
  const fileInput = useRef<HTMLInputElement>(null);

  const finish = (error: string | null) => {
    setState(error ? { kind: "error", message: error } : { kind: "idle" });
    if (!error) router.refresh();
  };
  const add = async (block: Block) => {
    setState({ kind: "pending" });
    const result = await insertBlock(address, sectionId, block, afterIndex());
    finish(result.ok ? null : result.message);
  };
  const choose = (kind: (typeof KINDS)[number]["kind"]) => {
    if (kind === "text") void add({ blockType: "text", text: "" });
    else if (kind === "document" || kind === "database" || kind === "quire") setForm(kind);
    else {
      fileKind.current = kind;
      const input = fileInput.current!;
      input.accept = ACCEPT[kind];
      input.click();
    }
  };

  return (
    <div className="block-menu">
      <MenuButton
        label={state.kind === "pending" ? "Adding…" : "+ Insert block"}
        menuLabel="Insert block"
        disabled={state.kind === "pending"}
        items={KINDS.map(({ kind, label }) => ({ label, onSelect: () => choose(kind) }))}
      />
      <input
        ref={fileInput}
        type="file"
        className="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
        data-testid="block-file-input"
        onChange={async (event) => {
          const file = event.currentTarget.files?.[0];
          event.currentTarget.value = "";
          if (!file) return;
          setState({ kind: "pending" });
          finish(await uploadAsBlock(address, sectionId, file, await fileBlock(fileKind.current, file), afterIndex()));
        }}
      />
      {form === "quire" ? (
        <DocumentLinkPicker address={address} sectionId={sectionId} onClose={() => setForm(null)} />
      ) : form ? (
        <BlockFields kind={form} onClose={() => setForm(null)} address={address} sectionId={sectionId} afterIndex={afterIndex} />
      ) : null}
      {state.kind === "error" ? (
        <p className="inline-error" role="alert">
          The block was not added: {state.message}
        </p>
      ) : null}
    </div>
  );
}

/** The few fields a document link or a database embed needs, submitted as one block. */
function BlockFields({
  kind,
  address,
  sectionId,
  afterIndex,
  onClose,
}: {
  kind: Exclude<FormKind, "quire">;
  address: RoomAddress;
  sectionId: string;
  afterIndex: () => number | undefined;
  onClose: () => void;
}) {
  const router = useRouter();
  const insertBlock = useInsertBlock();
  const { pending, error, onSubmit } = useActionForm(
    (data) => {
      const field = (name: string) => String(data.get(name) ?? "").trim();
      const block: Block =
        kind === "database"
          ? { blockType: "database_embed", databaseId: field("databaseId") }
          : { blockType: "document", type: "url", mediaType: "text/html", url: field("url"), filename: field("filename") || field("url") };
      return insertBlock(address, sectionId, block, afterIndex());
    },
    () => {
      onClose();
      router.refresh();
    },
  );
  return (
    <form className="block-fields" onSubmit={onSubmit} aria-label={kind === "database" ? "Embed a database" : "Link a document"}>
      {kind === "database" ? (
        <label className="field">
          Database id
          {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, and the id is the next thing to type */}
          <input name="databaseId" type="text" required placeholder="00000000-0000-0000-0000-000000000000" autoFocus />
        </label>
      ) : (
        <>
          <label className="field">
            Document URL
            {/* biome-ignore lint/a11y/noAutofocus: as above */}
            <input name="url" type="url" required placeholder="https://…" autoFocus />
          </label>
          <label className="field">
            Name shown
            <input name="filename" type="text" maxLength={255} placeholder="Quarterly report" />
          </label>
        </>
      )}
      <div className="button-row">
        <button type="submit" className="button button-small button-primary" disabled={pending}>
          {pending ? "Adding…" : "Add block"}
        </button>
        <button type="button" className="button button-small button-quiet" onClick={onClose} disabled={pending}>
          Cancel
        </button>
      </div>
      <InlineError error={error} />
    </form>
  );
}
