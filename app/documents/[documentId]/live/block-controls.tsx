"use client";

/**
 * The handles of a section's non-text blocks (image, file, CSV, document
 * link, database embed) while it is edited: each block is a frame that takes
 * focus (it is selected: Delete or Backspace removes it, Alt+↑/↓ moves it),
 * with a drag grip, ↑ ↓ and a "⋯" menu (an image's alt text and caption,
 * Remove). A block is moved or removed in the section's shared list, as
 * typing changes its text: the change is part of the draft, everyone sees
 * it at once, Commit keeps it, and the room checks it with the `sections`
 * tool's block schema. Removal offers Undo, which puts the same block back.
 */
import { type DragEvent, type FormEvent, type KeyboardEvent, type ReactNode, useLayoutEffect, useRef, useState } from "react";
import * as Y from "yjs";
import { useToast } from "@/app/_components/toast";
import type { Block } from "@/server/core/blocks";
import { blockToY } from "@/server/collab/codec";
import { MenuButton } from "./menu-button";

/** The drag payload of a block being moved: "<sectionId> <index>" (not a file, so image drop ignores it). */
const BLOCK_DRAG_TYPE = "application/x-quire-block";

/** What each block kind is called in labels and announcements. */
const KIND_NAMES: Record<string, string> = {
  image: "Image",
  file: "File",
  csv: "CSV table",
  document: "Document link",
  database_embed: "Database embed",
};
const kindName = (blockType: unknown) => (typeof blockType === "string" && KIND_NAMES[blockType]) || "Block";

/** Which control of a moved block takes focus when its new frame mounts (the move replaces the frame); null: the frame. */
const focusOnMount = new WeakMap<Y.Map<unknown>, string | null>();

/** Moves the block at `from` so it lands at `to` (an index in the list after the move), as one change. */
function moveBlock(blocks: Y.Array<unknown>, from: number, to: number): Y.Map<unknown> | null {
  const block = blocks.get(from);
  if (!(block instanceof Y.Map) || to === from || to < 0 || to >= blocks.length) return null;
  const moved = blockToY(block.toJSON() as Block);
  blocks.doc!.transact(() => {
    blocks.delete(from, 1);
    blocks.insert(to, [moved]);
  });
  return moved;
}

/**
 * Handlers for the element holding a section's blocks: a block dragged by
 * its grip lands before the block under the pointer (its upper half) or
 * after it (its lower half), text blocks included; a line marks the place.
 * Capture phase, so a text editor under the pointer does not take the drop.
 */
export function useBlockDrop(sectionId: string, blocks: Y.Array<unknown> | null) {
  const placeOf = (event: DragEvent<HTMLElement>): { target: HTMLElement; edge: "before" | "after"; at: number } | null => {
    const target = (event.target as HTMLElement).closest<HTMLElement>("[data-block-index]");
    if (!target || !event.currentTarget.contains(target)) return null;
    const box = target.getBoundingClientRect();
    const edge = event.clientY < box.top + box.height / 2 ? "before" : "after";
    const index = Number(target.dataset.blockIndex);
    return { target, edge, at: edge === "before" ? index : index + 1 };
  };
  const unmark = (list: HTMLElement) => {
    for (const marked of list.querySelectorAll("[data-block-drop]")) marked.removeAttribute("data-block-drop");
  };
  const dragged = (event: DragEvent<HTMLElement>) => event.dataTransfer.types.includes(BLOCK_DRAG_TYPE);
  const mark = (event: DragEvent<HTMLElement>) => {
    if (!dragged(event)) return;
    event.preventDefault();
    event.stopPropagation();
    event.dataTransfer.dropEffect = "move";
    const place = placeOf(event);
    if (!place || place.target.getAttribute("data-block-drop") === place.edge) return;
    unmark(event.currentTarget);
    place.target.setAttribute("data-block-drop", place.edge);
  };
  return {
    onDragEnterCapture: mark,
    onDragOverCapture: mark,
    onDragLeave: (event: DragEvent<HTMLElement>) => {
      if (!event.currentTarget.contains(event.relatedTarget as Node | null)) unmark(event.currentTarget);
    },
    onDragEndCapture: (event: DragEvent<HTMLElement>) => unmark(event.currentTarget),
    onDropCapture: (event: DragEvent<HTMLElement>) => {
      if (!dragged(event)) return;
      event.preventDefault();
      event.stopPropagation();
      unmark(event.currentTarget);
      const [from, fromIndex] = event.dataTransfer.getData(BLOCK_DRAG_TYPE).split(" ");
      const place = placeOf(event);
      if (!blocks || !place || from !== sectionId) return;
      const index = Number(fromIndex);
      // `at` counts places in the list before the block leaves it.
      moveBlock(blocks, index, place.at > index ? place.at - 1 : place.at);
    },
  };
}

export function BlockFrame({
  sectionId,
  blocks,
  block,
  index,
  children,
}: {
  sectionId: string;
  blocks: Y.Array<unknown>;
  block: Y.Map<unknown>;
  index: number;
  children: ReactNode;
}) {
  const toast = useToast();
  const frame = useRef<HTMLDivElement>(null);
  const [describing, setDescribing] = useState(false);
  const blockType = block.get("blockType");
  const name = kindName(blockType);
  const describable = blockType === "image" && block.get("type") !== "file";
  const last = blocks.length - 1;

  useLayoutEffect(() => {
    if (!focusOnMount.has(block)) return;
    const control = focusOnMount.get(block);
    focusOnMount.delete(block);
    const target = (control && frame.current?.querySelector<HTMLElement>(`[aria-label="${control}"]:not(:disabled)`)) || frame.current;
    target?.focus();
  }, [block]);

  const move = (to: number, control: string | null) => {
    const moved = moveBlock(blocks, index, to);
    if (moved) focusOnMount.set(moved, control);
  };
  const remove = () => {
    const fields = block.toJSON() as Block;
    blocks.delete(index, 1);
    toast({
      message: `${name} removed`,
      action: {
        label: "Undo",
        run: async () => {
          if (!blocks.doc) return "The section was closed; reload the page to restore the block.";
          blocks.insert(Math.min(index, blocks.length), [blockToY(fields)]);
          return null;
        },
      },
    });
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    // Only the frame itself: keys typed in its fields or pressed on its buttons are theirs.
    if (event.target !== event.currentTarget) return;
    if (event.key === "Delete" || event.key === "Backspace") remove();
    else if (event.altKey && event.key === "ArrowUp" && index > 0) move(index - 1, null);
    else if (event.altKey && event.key === "ArrowDown" && index < last) move(index + 1, null);
    else return;
    event.preventDefault();
  };

  return (
    // biome-ignore lint/a11y/useSemanticElements: a block and its tools, not form fields (<fieldset>)
    <div
      ref={frame}
      className="block-frame"
      role="group"
      aria-label={`${name} block`}
      aria-keyshortcuts="Delete Alt+ArrowUp Alt+ArrowDown"
      // biome-ignore lint/a11y/noNoninteractiveTabindex: the frame is how a block is selected: focused, Delete removes it and Alt+↑/↓ move it
      tabIndex={0}
      data-block-index={index}
      data-testid="block-frame"
      onKeyDown={onKeyDown}
    >
      <div className="block-tools">
        <span
          className="drag-handle"
          draggable
          title="Drag to move (or use ↑ ↓)"
          aria-hidden="true"
          onDragStart={(event) => {
            event.stopPropagation();
            event.dataTransfer.setData(BLOCK_DRAG_TYPE, `${sectionId} ${index}`);
            event.dataTransfer.effectAllowed = "move";
            if (frame.current) event.dataTransfer.setDragImage(frame.current, 16, 16);
          }}
        >
          ⠿
        </span>
        <button
          type="button"
          className="button button-small button-quiet"
          aria-label="Move block up"
          title="Move block up (Alt+↑)"
          disabled={index === 0}
          onClick={() => move(index - 1, "Move block up")}
        >
          ↑
        </button>
        <button
          type="button"
          className="button button-small button-quiet"
          aria-label="Move block down"
          title="Move block down (Alt+↓)"
          disabled={index === last}
          onClick={() => move(index + 1, "Move block down")}
        >
          ↓
        </button>
        <MenuButton
          label="⋯"
          buttonLabel={`More actions for this ${name.toLowerCase()}`}
          menuLabel={`${name} actions`}
          items={[
            ...(describable ? [{ label: "Alt text and caption…", onSelect: () => setDescribing(true) }] : []),
            { label: "Remove block", onSelect: remove, danger: true },
          ]}
        />
      </div>
      {children}
      {describing ? <ImageDescription block={block} onClose={() => setDescribing(false)} /> : null}
    </div>
  );
}

/** An image's alt text and caption, written into its block (an empty field removes it). */
function ImageDescription({ block, onClose }: { block: Y.Map<unknown>; onClose: () => void }) {
  const text = (field: string) => {
    const value = block.get(field);
    return typeof value === "string" ? value : "";
  };
  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    block.doc!.transact(() => {
      for (const field of ["alt", "caption"]) {
        const value = String(data.get(field) ?? "").trim();
        if (value) block.set(field, value);
        else block.delete(field);
      }
    });
    onClose();
  };
  return (
    <form className="block-fields image-description" onSubmit={save} aria-label="Image description">
      <label className="field">
        Alt text
        {/* biome-ignore lint/a11y/noAutofocus: the form opens on request, and the alt text is the next thing to write */}
        <input name="alt" type="text" maxLength={2000} defaultValue={text("alt")} placeholder="What the image shows" autoFocus />
      </label>
      <label className="field">
        Caption
        <input name="caption" type="text" maxLength={2000} defaultValue={text("caption")} placeholder="Shown under the image" />
      </label>
      <div className="button-row">
        <button type="submit" className="button button-small button-primary">
          Save
        </button>
        <button type="button" className="button button-small button-quiet" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
