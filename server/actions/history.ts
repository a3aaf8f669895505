/**
 * What history may tell whom. A commit message can name the sections its
 * commit touched (generated messages always do; people's may), so:
 *
 * - A reader who may not see one of the sections a commit touched reads
 *   HIDDEN_COMMIT_MESSAGE instead of its message (`log`, `show`, the document
 *   page's history). Visibility is judged on every version involved — the
 *   section as the commit left it, as each parent had it, and as the reader's
 *   branch head has it now — so a section deleted while hidden, or hidden
 *   after the fact, still hides the message.
 * - Generated messages that quote other commits (a merge's list of source
 *   commits, a revert's subject) are stored once and read by everyone, so
 *   they never quote a commit that touched a section hidden from anyone who
 *   can read the document (`isRestrictedSection`), in any of those versions.
 *
 * Every decision goes through server/policies/access.ts.
 */
import type { DocumentTree, SectionVersion } from "@/server/core/document-model";
import { isRestrictedSection } from "@/server/policies/access";
import type { CommitGraph, CommitRecord } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { loadSections, loadTree } from "@/server/store/objects";
import type { DocumentAccess } from "./access";

/** Shown instead of the message of a commit that touched sections the reader may not see. */
export const HIDDEN_COMMIT_MESSAGE = "Changes to sections you cannot see";

/**
 * For each commit, the versions of the sections it changed: in its own tree,
 * in each parent's tree, and in the `alsoIn` trees (a branch head, a merge
 * result). Commits that changed no section are left out.
 */
async function touchedSectionVersions(
  tx: Tx,
  graph: CommitGraph,
  commits: readonly CommitRecord[],
  alsoIn: readonly DocumentTree[],
): Promise<Map<string, SectionVersion[]>> {
  const relevant = commits.filter((c) => c.sectionIds.length > 0);
  if (relevant.length === 0) return new Map();
  const parentIds = [...new Set(relevant.flatMap((c) => c.parentIds))];
  const parentTree = new Map((await graph.getMany(parentIds)).map((p) => [p.id, p.treeHash]));
  const trees = new Map<string, DocumentTree>();
  for (const hash of new Set(relevant.flatMap((c) => [c.treeHash, ...c.parentIds.map((id) => parentTree.get(id)!)]))) {
    trees.set(hash, await loadTree(tx, hash));
  }
  const hashesByCommit = new Map<string, string[]>();
  for (const c of relevant) {
    const ids = new Set(c.sectionIds);
    const involved = [trees.get(c.treeHash)!, ...c.parentIds.map((id) => trees.get(parentTree.get(id)!)!), ...alsoIn];
    hashesByCommit.set(c.id, [...new Set(involved.flatMap((t) => t.sections.filter((e) => ids.has(e.sectionId)).map((e) => e.blobHash)))]);
  }
  const versions = await loadSections(tx, new Set([...hashesByCommit.values()].flat()));
  return new Map([...hashesByCommit].map(([id, hashes]) => [id, hashes.map((h) => versions.get(h)!)]));
}

/** The ids of the commits whose messages the reader may not see; `head` is the reader's branch head as it is now. */
export async function hiddenCommitIds(
  tx: Tx,
  access: DocumentAccess,
  graph: CommitGraph,
  commits: readonly CommitRecord[],
  head: DocumentTree,
): Promise<Set<string>> {
  if (access.canManage) return new Set();
  const touched = await touchedSectionVersions(tx, graph, commits, [head]);
  return new Set([...touched].filter(([, versions]) => versions.some((v) => access.section(v) === "none")).map(([id]) => id));
}

/**
 * Each commit's message, or null where a generated message must not quote it:
 * it touched a section hidden from some reader of the document, in its own
 * versions or in the `alsoIn` trees.
 */
export async function quotableMessages(
  tx: Tx,
  graph: CommitGraph,
  commits: readonly CommitRecord[],
  alsoIn: readonly DocumentTree[],
): Promise<Array<string | null>> {
  const touched = await touchedSectionVersions(tx, graph, commits, alsoIn);
  return commits.map((c) => ((touched.get(c.id) ?? []).some(isRestrictedSection) ? null : c.message));
}
