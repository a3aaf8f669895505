/**
 * The live document's sections in chunks: runs of sections, each in its own
 * box, so that the page's layout has a few dozen boxes to place rather than
 * every section. A keystroke in an editor changes its section's height at
 * most, and the browser re-lays out from the document down: along the way
 * it visits every child of each box on the path, 2,000 sections in a long
 * document, on every keystroke; with chunks, the chunks and the sections of
 * one chunk. Chunks are also what the browser skips rendering when they are
 * far off screen (`content-visibility: auto`).
 *
 * A chunk starts at each "anchor" section, one in CHUNK_SPREAD chosen by a
 * hash of its id, so chunks are the same on every screen and for the whole
 * life of a section: adding, moving or deleting a section leaves the others
 * in their chunks (React keeps them mounted, rooms and editors included);
 * only a section moved into another chunk, or those of a deleted anchor's
 * chunk, mount anew.
 */
import { fnv1a } from "@/app/_lib/fnv1a";

/** One section in this many starts a chunk, on average. */
export const CHUNK_SPREAD = 32;

export interface SectionChunk {
  /** The anchor section's id (or "start" for sections before the first anchor): React's key for the chunk. */
  key: string;
  /** The chunk's sections in order, with their place in the whole outline. */
  sections: Array<{ sectionId: string; index: number }>;
}

const isAnchor = (sectionId: string) => fnv1a(sectionId) % CHUNK_SPREAD === 0;

export function sectionChunks(order: readonly string[]): SectionChunk[] {
  const chunks: SectionChunk[] = [];
  order.forEach((sectionId, index) => {
    if (chunks.length === 0 || isAnchor(sectionId))
      chunks.push({ key: chunks.length === 0 && !isAnchor(sectionId) ? "start" : sectionId, sections: [] });
    chunks.at(-1)!.sections.push({ sectionId, index });
  });
  return chunks;
}
