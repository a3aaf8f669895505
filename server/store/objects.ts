/**
 * Content-addressed objects: section blobs and document trees. Written once,
 * never changed — so once loaded they are kept in a process-wide cache keyed
 * by hash (a hash names the same content in every database). Loaded objects
 * are shared: callers copy before changing anything.
 */
import { LRUCache } from "lru-cache";
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
import { anyOf, type Tx } from "./db";

/** About 128 MB of parsed objects, sized by their JSON length. */
const CACHE_BYTES = 128 * 1024 * 1024;
const cache = new LRUCache<string, SectionVersion | DocumentTree>({
  maxSize: CACHE_BYTES,
  // A tree's size follows its section count (about 120 bytes of JSON an entry); a blob's is its JSON's length.
  sizeCalculation: (value) => ("sections" in value ? 500 + 120 * value.sections.length : Math.max(1, sectionJsonLength(value))),
});
const blobKey = (hash: string) => `b:${hash}`;
const treeKey = (hash: string) => `t:${hash}`;

/**
 * Inserts content-addressed rows (present ones are left alone) and caches
 * them. Caching what a transaction writes is safe even if it rolls back: a
 * hash names its content everywhere, and only a stored commit can lead a
 * reader to it.
 */
async function putObjects<T extends SectionVersion | DocumentTree>(
  tx: Tx,
  table: typeof blobs | typeof trees,
  objects: ReadonlyMap<string, T>,
  key: (hash: string) => string,
) {
  if (objects.size === 0) return;
  await tx
    .insert(table)
    .values([...objects].map(([hash, body]) => ({ hash, body })))
    .onConflictDoNothing();
  for (const [hash, body] of objects) cache.set(key(hash), body);
}

/** Stores section versions (deduplicated by hash) and returns their hashes in order. */
export async function putSections(tx: Tx, versions: readonly SectionVersion[]): Promise<string[]> {
  const hashes = versions.map(hashSection);
  await putObjects(tx, blobs, new Map(versions.map((v, i) => [hashes[i]!, v])), blobKey);
  return hashes;
}

/**
 * Remembers objects a statement outside this module is storing (the
 * `storing` of moveBranchHead), as putSections and putTree do for theirs.
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
    const version = row.body as SectionVersion;
    cache.set(blobKey(row.hash), version);
    found.set(row.hash, version);
  }
  return found;
}

export async function putTree(tx: Tx, tree: DocumentTree): Promise<string> {
  const body = normalizeTree(tree);
  const hash = hashTree(body);
  await putObjects(tx, trees, new Map([[hash, body]]), treeKey);
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
  const tree = row.body as DocumentTree;
  cache.set(treeKey(hash), tree);
  return tree;
}
