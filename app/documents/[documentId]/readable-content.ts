/**
 * Section content read without trusting it. What a page renders comes from
 * the server's `read` and, live, from a section's room, where any editor's
 * socket may have put anything; a page renders what it can and marks what it
 * cannot, block by block, and never fails whole for one bad block. A block
 * is shown only when it passes the server's own `blockSchema`, so every
 * renderer gets exactly the shapes it is written for.
 */
import { type Block, blockSchema } from "@/server/core/blocks";

/** One block as read: shown, or unreadable (with its `blockType` when that is a string, to say what it was meant to be). */
export type ReadBlock = { readable: true; block: Block } | { readable: false; blockType: string | null };

/** Longest blockType named in a placeholder: the name is untrusted text and may be of any length. */
const SHOWN_BLOCK_TYPE_CHARS = 40;

export function readBlock(value: unknown): ReadBlock {
  const parsed = blockSchema.safeParse(value);
  if (parsed.success) return { readable: true, block: parsed.data };
  const blockType = typeof value === "object" && value !== null ? (value as { blockType?: unknown }).blockType : undefined;
  return { readable: false, blockType: typeof blockType === "string" ? blockType.slice(0, SHOWN_BLOCK_TYPE_CHARS) : null };
}

/** A section's blocks, each read; null when the content is not a list of blocks at all. */
export function readContent(content: unknown): ReadBlock[] | null {
  return Array.isArray(content) ? content.map(readBlock) : null;
}

/** A section's name, or null when it is not text. */
export function readName(name: unknown): string | null {
  return typeof name === "string" ? name : null;
}

/** How an unreadable section name reads where only text fits (the "On this page" list). */
export const UNREADABLE_NAME = "Name could not be shown";
