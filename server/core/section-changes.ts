/**
 * What one document state changed against another, per section, as `git show`
 * tells a commit's change: added, deleted, modified (with a unified diff of
 * the section's markdown, as merge analysis shows it) or only moved. Pure.
 */
import type { SectionVersion } from "./document-model";
import { keptInPlace } from "./merge-analysis";
import { sectionToMarkdown } from "./section-markdown";
import { unifiedDiff } from "./text-diff";

export type IdentifiedSection = SectionVersion & { sectionId: string };

export interface SectionChange {
  sectionId: string;
  /** The section's name after the change (before it, for a deleted section). */
  name: string;
  status: "added" | "deleted" | "modified" | "moved";
  /** Unified diff of the section's markdown; empty for a section that only moved. */
  diff: string;
  /** True when the section also changed place among the sections both states have. */
  moved: boolean;
}

/** Changes from `before` to `after` (each in document order), in the order of `after`, deleted sections last. */
export function sectionChanges(before: readonly IdentifiedSection[], after: readonly IdentifiedSection[]): SectionChange[] {
  const beforeById = new Map(before.map((s) => [s.sectionId, s]));
  const afterIds = new Set(after.map((s) => s.sectionId));
  const kept = keptInPlace(
    before.map((s) => s.sectionId).filter((id) => afterIds.has(id)),
    after.map((s) => s.sectionId),
  );
  const changes: SectionChange[] = [];
  for (const section of after) {
    const old = beforeById.get(section.sectionId);
    const text = sectionToMarkdown(section);
    if (!old) {
      changes.push({ sectionId: section.sectionId, name: section.name, status: "added", diff: unifiedDiff("", text), moved: false });
      continue;
    }
    const moved = !kept.has(section.sectionId);
    const oldText = sectionToMarkdown(old);
    if (oldText !== text)
      changes.push({ sectionId: section.sectionId, name: section.name, status: "modified", diff: unifiedDiff(oldText, text), moved });
    else if (moved) changes.push({ sectionId: section.sectionId, name: section.name, status: "moved", diff: "", moved });
  }
  for (const old of before) {
    if (!afterIds.has(old.sectionId)) {
      changes.push({
        sectionId: old.sectionId,
        name: old.name,
        status: "deleted",
        diff: unifiedDiff(sectionToMarkdown(old), ""),
        moved: false,
      });
    }
  }
  return changes;
}
