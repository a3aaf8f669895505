/**
 * The section-level questions asked of a branch head as it is now: which
 * sections a principal sees, whether it may edit one, which storage keys it
 * sees. The live rooms ask them on every admission and re-decision; the
 * actions ask `storageKeysVisibleIn` before a new storage key goes into a
 * block. Each is the caller's `SectionRules` (documents.ts) applied to a tree.
 */
import { storageKeysOf } from "@/server/core/blocks";
import type { DocumentTree, SectionVersion } from "@/server/core/document-model";
import { atLeast } from "@/server/policies/access";
import type { Tx } from "@/server/store/db";
import { loadSections } from "@/server/store/objects";
import { type DocumentAccess, type SectionRules, sectionRules, visibleEntries } from "./documents";

/** The sections the principal may see on the head of `branchName` (`tree`), in order (the default branch's hiding applies to every branch). */
export async function visibleSectionIds(tx: Tx, access: DocumentAccess, branchName: string, tree: DocumentTree): Promise<string[]> {
  const rules = await sectionRules(tx, access, branchName);
  const entries = await visibleEntries(rules, tree, (hashes) => loadSections(tx, hashes));
  return entries.map((e) => e.sectionId);
}

/** Whether the principal may edit section `sectionId` on the head of `branchName` (`tree`): never in a deleted document or a section it lacks. */
export async function canEditSection(
  tx: Tx,
  access: DocumentAccess,
  branchName: string,
  tree: DocumentTree,
  sectionId: string,
): Promise<boolean> {
  const blobHash = tree.sections.find((e) => e.sectionId === sectionId)?.blobHash;
  if (!blobHash || tree.deleted) return false;
  const version = (await loadSections(tx, [blobHash])).get(blobHash)!;
  const rules = await sectionRules(tx, access, branchName);
  return atLeast(rules.permission(sectionId, version), "edit");
}

/** The storage keys held by the sections of `tree` that the caller can see. */
export async function storageKeysVisibleIn(
  rules: SectionRules,
  tree: DocumentTree,
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>,
): Promise<ReadonlySet<string>> {
  const entries = await visibleEntries(rules, tree, loadSections);
  const versions = await loadSections(entries.map((e) => e.blobHash));
  return new Set([...versions.values()].flatMap((v) => storageKeysOf(v.content)));
}
