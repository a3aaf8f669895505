/**
 * The starting point offered for a `merged` resolution of a conflicting
 * section: a line-level three-way merge (node-diff3) of the section's text on
 * the merge base, the source and the target. Clean hunks are applied; each
 * conflicting hunk is kept between git-style markers for the reviewer to edit.
 */
import { diff3Merge } from "node-diff3";
import type { Block } from "./blocks";
import type { SectionVersion } from "./document-model";

export interface ProposedSectionMerge {
  /** The merged text, conflicting hunks between `<<<<<<< source`, `=======` and `>>>>>>> target` lines. */
  text: string;
  /** How many hunks still carry markers (0: the three-way merge applied cleanly). */
  conflictingHunks: number;
}

/** Blocks of text joined by blank lines, as the section's markdown shows them; null when a block is not text (an image, a file). */
export function sectionText(version: SectionVersion | null): string | null {
  if (version === null) return "";
  const texts: string[] = [];
  for (const block of version.content) {
    if (block.blockType !== "text") return null;
    texts.push(block.text);
  }
  return texts.join("\n\n");
}

/** The text of a merged section as content blocks (one text block; none for an empty text). */
export function textContent(text: string): Block[] {
  return text === "" ? [] : [{ blockType: "text", text }];
}

/**
 * The proposed merge of three versions (null = absent on that side), or null
 * when one of them holds a block that is not text: only text merges by line.
 */
export function proposeSectionMerge(
  base: SectionVersion | null,
  source: SectionVersion | null,
  target: SectionVersion | null,
): ProposedSectionMerge | null {
  const [o, a, b] = [sectionText(base), sectionText(source), sectionText(target)];
  if (o === null || a === null || b === null) return null;
  const lines = (text: string) => (text === "" ? [] : text.split("\n"));
  // One three-way pass gives both the text and the count (node-diff3's `merge` would make its own pass).
  const merged: string[] = [];
  let conflictingHunks = 0;
  for (const region of diff3Merge(lines(a), lines(o), lines(b), { excludeFalseConflicts: true })) {
    if (region.ok) merged.push(...region.ok);
    else if (region.conflict) {
      conflictingHunks++;
      merged.push("<<<<<<< source", ...region.conflict.a, "=======", ...region.conflict.b, ">>>>>>> target");
    }
  }
  return { text: merged.join("\n"), conflictingHunks };
}
