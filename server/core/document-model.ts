/**
 * The versioned shape of a document: a tree of document-level state plus the
 * ordered sections, each section a content-addressed blob. Two trees compare by
 * hashes alone; content is loaded only where hashes differ.
 */
import type { Block } from "./blocks";
import type { Frozen } from "./frozen";
import { canonicalHash, canonicalJsonAndHash, sha256Hex } from "./hashing";

export const PERMISSIONS = ["edit", "read", "none"] as const;
export type Permission = (typeof PERMISSIONS)[number];

/**
 * Trees and section versions are immutable and shared (the object cache hands
 * the same ones to every request), so their types are read-only throughout:
 * change one by building a new one.
 */
export type SectionReference = Frozen<{
  referenceId: string;
  targetDocumentId: string;
  /** null links to the whole document. */
  targetSectionId: string | null;
  /** null shows the target's own title. */
  displayTitle: string | null;
}>;

/** Everything versioned about one section; its hash is the section's contentHash. */
export interface SectionVersion {
  readonly name: string;
  readonly content: readonly Block[];
  readonly defaultPermission: Permission | null;
  readonly aiAccess: Permission | null;
  readonly references: readonly SectionReference[];
}

export type TreeEntry = Frozen<{
  sectionId: string;
  blobHash: string;
}>;

export type PropertyValue = string | number | boolean;

export interface DocumentTree {
  readonly path: string;
  readonly name: string;
  readonly description: string | null;
  readonly deleted: boolean;
  /** Sorted, unique. */
  readonly tagIds: readonly string[];
  /** Column UUID -> scalar value; an absent key is an unset property. */
  readonly properties: Readonly<Record<string, PropertyValue>>;
  readonly sections: readonly TreeEntry[];
}

/** Section versions are never changed once built (callers copy to change), so each is hashed once. */
const sectionHashes = new WeakMap<SectionVersion, { hash: string; jsonLength: number }>();

function hashedSection(version: SectionVersion): { hash: string; jsonLength: number } {
  let hashed = sectionHashes.get(version);
  if (!hashed) {
    const { json, hash } = canonicalJsonAndHash(version);
    hashed = { hash, jsonLength: json.length };
    sectionHashes.set(version, hashed);
  }
  return hashed;
}

export function hashSection(version: SectionVersion): string {
  return hashedSection(version).hash;
}

/** The length of a section version's JSON (for cache sizing): known once it was hashed, measured otherwise. */
export function sectionJsonLength(version: SectionVersion): number {
  return sectionHashes.get(version)?.jsonLength ?? JSON.stringify(version).length;
}

export function normalizeTree(tree: DocumentTree): DocumentTree {
  return { ...tree, tagIds: [...new Set(tree.tagIds)].sort() };
}

export function hashTree(tree: DocumentTree): string {
  const normalized = normalizeTree(tree);
  const json = treeCanonicalJson(normalized);
  return json === undefined ? canonicalHash(normalized) : sha256Hex(json);
}

const TREE_KEYS = 7;
const ENTRY_KEYS = 2;
const string = (value: unknown): string | undefined =>
  typeof value === "string" && value.isWellFormed() ? JSON.stringify(value) : undefined;

/**
 * A tree's RFC 8785 canonical JSON, written for the tree's own shape: keys in
 * their sorted order, strings and numbers as JSON.stringify writes them (which
 * is what RFC 8785 prescribes). `canonicalize`'s generic walk of the tree was
 * the largest CPU cost of a section write (one tree per commit). Anything
 * outside that shape (another key, a lone surrogate, a number that is not
 * finite) answers undefined and is hashed by `canonicalize` itself;
 * tests/unit/tree-hash.test.ts holds the two equal over generated trees.
 */
export function treeCanonicalJson(tree: DocumentTree): string | undefined {
  if (Object.keys(tree).length !== TREE_KEYS || typeof tree.deleted !== "boolean") return undefined;
  const description = tree.description === null ? "null" : string(tree.description);
  const name = string(tree.name);
  const path = string(tree.path);
  if (description === undefined || name === undefined || path === undefined) return undefined;
  if (!Array.isArray(tree.tagIds) || !Array.isArray(tree.sections) || typeof tree.properties !== "object" || tree.properties === null)
    return undefined;

  const properties: string[] = [];
  for (const key of Object.keys(tree.properties).sort()) {
    const value: unknown = tree.properties[key];
    const json =
      typeof value === "string"
        ? string(value)
        : typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))
          ? JSON.stringify(value)
          : undefined;
    const keyJson = string(key);
    if (json === undefined || keyJson === undefined) return undefined;
    properties.push(`${keyJson}:${json}`);
  }
  const sections: string[] = [];
  for (const entry of tree.sections) {
    if (typeof entry !== "object" || entry === null || Object.keys(entry).length !== ENTRY_KEYS) return undefined;
    const blobHash = string(entry.blobHash);
    const sectionId = string(entry.sectionId);
    if (blobHash === undefined || sectionId === undefined) return undefined;
    sections.push(`{"blobHash":${blobHash},"sectionId":${sectionId}}`);
  }
  const tagIds: string[] = [];
  for (const tagId of tree.tagIds) {
    const json = string(tagId);
    if (json === undefined) return undefined;
    tagIds.push(json);
  }
  return `{"deleted":${tree.deleted},"description":${description},"name":${name},"path":${path},"properties":{${properties.join(",")}},"sections":[${sections.join(",")}],"tagIds":[${tagIds.join(",")}]}`;
}

export function newSectionVersion(name: string, content: readonly Block[]): SectionVersion {
  return { name, content, defaultPermission: null, aiAccess: null, references: [] };
}

/** Sections added, removed or changed between two trees (by hash alone). */
export function changedSectionIds(before: DocumentTree | null, after: DocumentTree): string[] {
  const old = new Map((before?.sections ?? []).map((e) => [e.sectionId, e.blobHash]));
  const changed = new Set<string>();
  for (const e of after.sections) {
    if (old.get(e.sectionId) !== e.blobHash) changed.add(e.sectionId);
    old.delete(e.sectionId);
  }
  for (const removed of old.keys()) changed.add(removed);
  return [...changed];
}
