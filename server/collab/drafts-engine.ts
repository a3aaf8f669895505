/**
 * The draft's building blocks shared by the rooms and the live drafts
 * service: a branch's head with its tree, a section's stored draft as a doc
 * (created from the head's version on first use), and the rebase of a
 * section's draft from one committed version to another (computed on the
 * doc given, stored with compare-and-swap on the base: store/drafts.ts).
 */
import * as Y from "yjs";
import type { Database } from "@/db/client";
import type { DocumentTree, SectionVersion } from "@/server/core/document-model";
import { getCommit } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { getBranch } from "@/server/store/documents";
import {
  createSectionDraft,
  type DraftKey,
  findSectionDraft,
  rebaseSectionDraft,
  type SectionKey,
  type StoredSectionDraft,
} from "@/server/store/drafts";
import { loadSections, loadTree } from "@/server/store/objects";
import { type LiveSection, newServerDoc, sectionIntoYDoc } from "./codec";
import { sectionChangeUpdate } from "./section-change";

export interface BranchHead {
  commitId: string;
  tree: DocumentTree;
}

export async function branchHead(tx: Tx, key: DraftKey): Promise<BranchHead> {
  const branch = await getBranch(tx, key.documentId, key.branchName);
  const commit = await getCommit(tx, key.documentId, branch.headCommitId);
  return { commitId: commit.id, tree: await loadTree(tx, commit.treeHash) };
}

const EMPTY_SECTION: LiveSection = { name: "", content: [] };

export const liveOf = (version: SectionVersion): LiveSection => ({ name: version.name, content: [...version.content] });

export const blobHashIn = (tree: DocumentTree, sectionId: string): string | null =>
  tree.sections.find((e) => e.sectionId === sectionId)?.blobHash ?? null;

/** The doc a stored draft describes: its compacted state and the log after it. */
export function docFromStored(stored: StoredSectionDraft): Y.Doc {
  const doc = newServerDoc();
  Y.applyUpdate(doc, stored.state);
  for (const { update } of stored.updates) Y.applyUpdate(doc, update);
  return doc;
}

/**
 * A section's stored draft, created from its version in `tree` if it has
 * none. Creation never writes over a stored draft (whoever stores first
 * wins), so initial content is never applied to a doc that already has some.
 */
export async function loadOrCreateSectionDraft(db: Database, key: SectionKey, tree: DocumentTree): Promise<StoredSectionDraft> {
  const stored = await findSectionDraft(db, key);
  if (stored) return stored;
  const blobHash = blobHashIn(tree, key.sectionId);
  const doc = newServerDoc();
  if (blobHash) sectionIntoYDoc(doc, liveOf((await loadSections(db, [blobHash])).get(blobHash)!));
  const state = Y.encodeStateAsUpdate(doc);
  doc.destroy();
  return createSectionDraft(db, key, { baseBlobHash: blobHash, state });
}

/**
 * Moves one section's draft from the committed version it is based on to
 * `nextBlobHash`: the change between the two versions, applied as minimal
 * edits to the draft as it is (live typing survives), is stored with the new
 * base — only if nobody (another process) moved the base first. Returns the
 * stored update for the caller to apply and broadcast, or null.
 */
export async function rebaseSection(
  db: Database,
  key: SectionKey,
  doc: Y.Doc,
  fromBlobHash: string | null,
  nextBlobHash: string,
  /** What the change is computed from, when not the base version itself (a commit: the draft as committed; a discard: the draft as it is). */
  fromContent?: LiveSection,
): Promise<Uint8Array | null> {
  if (fromBlobHash === nextBlobHash && !fromContent) return null;
  const versions = await loadSections(
    db,
    [fromBlobHash, nextBlobHash].filter((h): h is string => h !== null),
  );
  const from = fromContent ?? (fromBlobHash ? liveOf(versions.get(fromBlobHash)!) : EMPTY_SECTION);
  const update = await sectionChangeUpdate(doc, from, liveOf(versions.get(nextBlobHash)!));
  return (await rebaseSectionDraft(db, key, fromBlobHash, nextBlobHash, update)) ? update : null;
}
