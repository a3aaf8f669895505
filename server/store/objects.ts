/** Content-addressed objects: section blobs and document trees. Written once, never changed. */
import { inArray } from "drizzle-orm";
import { blobs, trees } from "@/db/schema";
import { type DocumentTree, hashSection, hashTree, normalizeTree, type SectionVersion } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import type { Tx } from "./db";

/** Stores section versions (deduplicated by hash) and returns their hashes in order. */
export async function putSections(tx: Tx, versions: readonly SectionVersion[]): Promise<string[]> {
  const hashes = versions.map(hashSection);
  const unique = new Map<string, SectionVersion>();
  versions.forEach((v, i) => unique.set(hashes[i]!, v));
  if (unique.size > 0) {
    await tx
      .insert(blobs)
      .values([...unique].map(([hash, body]) => ({ hash, body })))
      .onConflictDoNothing();
  }
  return hashes;
}

export async function loadSections(tx: Tx, hashes: Iterable<string>): Promise<Map<string, SectionVersion>> {
  const wanted = [...new Set(hashes)];
  if (wanted.length === 0) return new Map();
  const rows = await tx.select().from(blobs).where(inArray(blobs.hash, wanted));
  const found = new Map(rows.map((r) => [r.hash, r.body as SectionVersion]));
  if (found.size !== wanted.length) {
    throw new DomainError("INTERNAL", "A section version referenced by a commit is missing from storage.");
  }
  return found;
}

export async function putTree(tx: Tx, tree: DocumentTree): Promise<string> {
  const hash = hashTree(tree);
  await tx.insert(trees).values({ hash, body: normalizeTree(tree) }).onConflictDoNothing();
  return hash;
}

export async function loadTree(tx: Tx, hash: string): Promise<DocumentTree> {
  const [row] = await tx.select().from(trees).where(inArray(trees.hash, [hash]));
  if (!row) throw new DomainError("INTERNAL", "A tree referenced by a commit is missing from storage.");
  return row.body as DocumentTree;
}
