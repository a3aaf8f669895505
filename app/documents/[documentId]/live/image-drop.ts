/**
 * Files added to a section. Images pasted or dropped onto it, and any file
 * from the block menu: each is uploaded through `upload_url` (its bytes PUT
 * to the app's own upload route) and then added to the section as a storage
 * block, one commit each: a pasted image after the block it is pasted in, a
 * dropped one after the block it is dropped on (else at the end). What
 * is accepted (types, size, the key) is the server's decision; its refusal is
 * shown as it is worded.
 */
import { useRouter } from "next/navigation";
import { type ClipboardEvent, type DragEvent, useState } from "react";
import type { Block } from "@/server/core/blocks";
import type { RoomAddress } from "./live-room";
import { useInsertBlock, useUploadUrlTool } from "./tools";

export type ImageDropState = { kind: "idle" } | { kind: "uploading"; count: number } | { kind: "error"; message: string };

const imagesIn = (files: FileList | null | undefined): File[] => [...(files ?? [])].filter((f) => f.type.startsWith("image/"));

/** A file's media type as the browser knows it, or the generic one (a file with no known type is still a file). */
export const mediaTypeOf = (file: File): string => file.type || "application/octet-stream";

/**
 * Uploads a file through `upload_url` and adds the block `toBlock` makes of
 * its storage key to the section, one commit. Shared by image paste/drop and
 * the block menu. Answers the refusal's message, or null when it was added.
 */
export function useUploadAsBlock() {
  const uploadUrl = useUploadUrlTool();
  const insertBlock = useInsertBlock();
  return async (
    address: RoomAddress,
    sectionId: string,
    file: File,
    toBlock: (key: string) => Block,
    afterIndex?: number,
  ): Promise<string | null> => {
    const upload = await uploadUrl({ filename: file.name || "pasted-file", mediaType: mediaTypeOf(file), size: file.size });
    if (!upload.ok) return upload.message;
    // The URL is the app's own route; asked for by path, so the bytes never go to another host whatever base the server names.
    const target = new URL(upload.value.uploadUrl, window.location.href);
    const put = await fetch(`${target.pathname}${target.search}`, { method: "PUT", headers: upload.value.headers, body: file });
    if (!put.ok) {
      const body = (await put.json().catch(() => null)) as { error?: { message?: string } } | null;
      return body?.error?.message ?? `The upload failed (${put.status}).`;
    }
    const added = await insertBlock(address, sectionId, toBlock(upload.value.key), afterIndex);
    return added.ok ? null : added.message;
  };
}

/** The place in its section of the block an event happened in (blocks carry `data-block-index`), if any. */
export function blockIndexAt(target: EventTarget | null): number | undefined {
  const block = target instanceof Element ? target.closest<HTMLElement>("[data-block-index]") : null;
  return block ? Number(block.dataset.blockIndex) : undefined;
}

export function useImageDrop(address: RoomAddress, sectionId: string) {
  const router = useRouter();
  const uploadAsBlock = useUploadAsBlock();
  const [state, setState] = useState<ImageDropState>({ kind: "idle" });
  const addImage = (file: File, afterIndex: number | undefined) =>
    uploadAsBlock(address, sectionId, file, (key) => ({ blockType: "image", type: "storage", mediaType: file.type, key }), afterIndex);

  /** Adds the images after the block `afterIndex` (at the end of the section when undefined), in their order. */
  const upload = async (files: File[], afterIndex: number | undefined) => {
    setState({ kind: "uploading", count: files.length });
    for (const [i, file] of files.entries()) {
      const error = await addImage(file, afterIndex === undefined ? undefined : afterIndex + i);
      if (error) {
        setState({ kind: "error", message: error });
        return;
      }
    }
    setState({ kind: "idle" });
    // The new image's signed download link comes with the page's next read.
    router.refresh();
  };

  return {
    state,
    handlers: {
      onPaste: (event: ClipboardEvent) => {
        const files = imagesIn(event.clipboardData?.files);
        if (files.length === 0) return;
        event.preventDefault();
        void upload(files, blockIndexAt(event.target));
      },
      onDragOver: (event: DragEvent) => {
        if ([...(event.dataTransfer?.items ?? [])].some((item) => item.kind === "file")) event.preventDefault();
      },
      onDrop: (event: DragEvent) => {
        const files = imagesIn(event.dataTransfer?.files);
        if (files.length === 0) return;
        event.preventDefault();
        void upload(files, blockIndexAt(event.target));
      },
    },
  };
}
