/**
 * Content-addressed objects: section blobs and document trees. Written once,
 * never changed — so once loaded they are kept in a process-wide cache keyed
 * by hash (a hash names the same content in every database). Loaded objects
 * are shared and frozen: callers build new ones to change anything.
 */
import { blobs, trees } from "@/db/schema";
import {
  type DocumentTree,
  hashSection,
  hashTree,
  normalizeTree,
  type SectionVersion,
  sectionJsonLength,
} from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { afterCommit } from "@/db/commit-hooks";
import { createCache } from "./caches";
import { anyOf, type Tx } from "./db";

/** About 128 MB of parsed objects, sized by their JSON length. */
const CACHE_BYTES = 128 * 1024 * 1024;
const cache = createCache<string, SectionVersion | DocumentTree>({
  name: "trees and section versions by hash",
  keptTrueBy: "content addressing: a hash names the same content in every database, and stored objects are never updated",
  maxSize: CACHE_BYTES,
  // A tree's size follows its section count (about 120 bytes of JSON an entry); a blob's is its JSON's length.
  sizeOf: (value) => ("sections" in value ? 500 + 120 * value.sections.length : sectionJsonLength(value as SectionVersion)),
});
const blobKey = (hash: string) => `b:${hash}`;
const treeKey = (hash: string) => `t:${hash}`;

/**
 * Remembers objects another module stored (commitToBranch's, after the
 * statement that stored them committed), as putTree does for its own.
 */
export function rememberObjects(sections: ReadonlyMap<string, SectionVersion>, treesByHash: ReadonlyMap<string, DocumentTree>): void {
  for (const [hash, body] of sections) cache.set(blobKey(hash), body);
  for (const [hash, body] of treesByHash) cache.set(treeKey(hash), body);
}

export async function loadSections(tx: Tx, hashes: Iterable<string>): Promise<Map<string, SectionVersion>> {
  const found = new Map<string, SectionVersion>();
  const missing: string[] = [];
  for (const hash of new Set(hashes)) {
    const cached = cache.get(blobKey(hash)) as SectionVersion | undefined;
    if (cached) found.set(hash, cached);
    else missing.push(hash);
  }
  if (missing.length === 0) return found;
  const rows = await tx.select().from(blobs).where(anyOf(blobs.hash, missing));
  if (rows.length !== missing.length) {
    throw new DomainError("INTERNAL", "A section version referenced by a commit is missing from storage.");
  }
  for (const row of rows) {
    found.set(row.hash, cache.set(blobKey(row.hash), row.body as SectionVersion) as SectionVersion);
  }
  return found;
}

/**
 * Stores section versions (present ones are left alone; deduplicated by hash)
 * in the caller's transaction, ahead of the commit that will refer to them
 * (a merge's reviewer-written sections, which its checks load back), and
 * caches them once committed; returns their hashes in order.
 */
export async function putSections(tx: Tx, versions: readonly SectionVersion[]): Promise<string[]> {
  const hashes = versions.map(hashSection);
  const byHash = new Map(versions.map((version, i) => [hashes[i]!, version]));
  if (byHash.size === 0) return hashes;
  await tx
    .insert(blobs)
    .values([...byHash].map(([hash, body]) => ({ hash, body })))
    .onConflictDoNothing();
  afterCommit(tx, () => rememberObjects(byHash, new Map()));
  return hashes;
}

/** Stores a tree (left alone when present) and caches it once committed; returns its hash. */
export async function putTree(tx: Tx, tree: DocumentTree): Promise<string> {
  const body = normalizeTree(tree);
  const hash = hashTree(body);
  await tx.insert(trees).values({ hash, body }).onConflictDoNothing();
  afterCommit(tx, () => cache.set(treeKey(hash), body));
  return hash;
}

export async function loadTree(tx: Tx, hash: string): Promise<DocumentTree> {
  const cached = cache.get(treeKey(hash)) as DocumentTree | undefined;
  if (cached) return cached;
  const [row] = await tx
    .select()
    .from(trees)
    .where(anyOf(trees.hash, [hash]));
  if (!row) throw new DomainError("INTERNAL", "A tree referenced by a commit is missing from storage.");
  return cache.set(treeKey(hash), row.body as DocumentTree) as DocumentTree;
}
