/**
 * Commits and the history graph. Walks are ordered by generation number (as
 * git's commit-graph does), so log pages and merge bases cost what lies between
 * the heads and the answer, not the length of the history.
 */
import { randomUUID } from "node:crypto";
import { and, eq, sql } from "drizzle-orm";
import { Heap } from "heap-js";
import { type AgentIdentity, commits, type CommitKind } from "@/db/schema";
import { DomainError, notFound } from "@/server/core/errors";
import type { Frozen } from "@/server/core/frozen";
import { afterCommit } from "@/db/commit-hooks";
import { createCache } from "./caches";
import { anyOf, queryRows, type Tx } from "./db";

/** Commits never change once made, so their records are read-only (and frozen once cached). */
export type CommitRecord = Frozen<{
  id: string;
  documentId: string;
  parentIds: string[];
  generation: number;
  treeHash: string;
  message: string;
  authorId: string;
  kind: CommitKind;
  /** Sections this commit changed relative to its first parent. */
  sectionIds: string[];
  /** The agent that made the commit for its author; null for the author themselves. */
  agent: AgentIdentity | null;
  createdAt: Date;
}>;

export interface NewCommit {
  documentId: string;
  parentIds: string[];
  treeHash: string;
  message: string;
  authorId: string;
  kind: CommitKind;
  /** Sections the commit changed relative to its first parent; default none. */
  sectionIds?: string[];
  /** The agent acting for the author; default none (the author themselves). */
  agent?: AgentIdentity | null;
  createdAt: Date;
}

/** Recently written or read commits by id: the next write on a branch starts from the one the last wrote. */
const recentCommits = createCache<string, CommitRecord>({
  name: "commits by id",
  keptTrueBy: "commits are immutable, and a commit is cached only once read from storage or after the statement that stored it committed",
  max: 10_000,
});

/** A new commit record on top of `parents` (the records of its parentIds), not yet stored. */
export function newCommitRecord(commit: NewCommit, parents: ReadonlyArray<Pick<CommitRecord, "id" | "generation">>): CommitRecord {
  if (!commit.parentIds.every((id) => parents.some((p) => p.id === id))) throw new DomainError("INTERNAL", "A parent commit is missing.");
  const generation = 1 + Math.max(0, ...parents.map((p) => p.generation));
  return { id: randomUUID(), generation, ...commit, sectionIds: commit.sectionIds ?? [], agent: commit.agent ?? null };
}

/** Remembers commits just stored, once their statement or transaction has committed (commitToBranch, insertCommit). */
export function rememberCommits(records: readonly CommitRecord[]): void {
  for (const record of records) recentCommits.set(record.id, record);
}

/**
 * Stores a commit without moving any branch (history fixtures of the tests
 * and benchmarks; a commit the server makes goes through commitToBranch).
 * `parents` are the parent records when the caller already holds them;
 * otherwise they are read.
 */
export async function insertCommit(
  tx: Tx,
  commit: NewCommit,
  parents?: ReadonlyArray<Pick<CommitRecord, "id" | "generation">>,
): Promise<CommitRecord> {
  const known = parents && commit.parentIds.every((id) => parents.some((p) => p.id === id)) ? parents : undefined;
  const parentRows =
    known ??
    (commit.parentIds.length === 0
      ? []
      : await tx.select({ id: commits.id, generation: commits.generation }).from(commits).where(anyOf(commits.id, commit.parentIds)));
  const record = newCommitRecord(commit, parentRows);
  await tx.insert(commits).values({ ...record, parentIds: [...record.parentIds], sectionIds: [...record.sectionIds] });
  afterCommit(tx, () => rememberCommits([record]));
  return record;
}

export async function getCommit(tx: Tx, documentId: string, commitId: string): Promise<CommitRecord> {
  const recent = recentCommits.get(commitId);
  if (recent?.documentId === documentId) return recent;
  const [row] = await tx
    .select()
    .from(commits)
    .where(and(eq(commits.id, commitId), eq(commits.documentId, documentId)));
  if (!row) throw notFound("Commit", commitId, "Use `documents` action `log` to list this document's commits.");
  recentCommits.set(row.id, row);
  return row;
}

/** How many generations below the wanted commits the first fetch takes; each further fetch takes four times more. */
const FIRST_PREFETCH_GENERATIONS = 64;
const MAX_PREFETCH_GENERATIONS = 16_384;

interface CommitRow {
  id: string;
  document_id: string;
  parent_ids: string[] | string;
  generation: number;
  tree_hash: string;
  message: string;
  author_id: string;
  kind: CommitKind;
  section_ids: string[] | string;
  agent: AgentIdentity | null;
  created_at: Date | string;
}

/** postgres.js returns uuid[] as an array; PGlite may hand back the text form "{a,b}". */
function parseUuidArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, "");
  return inner === "" ? [] : inner.split(",");
}

const FULL_COMMIT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How many of an ambiguous short id's commits the error lists. */
const AMBIGUOUS_LISTED = 10;

/**
 * The id of the commit of `documentId` that `ref` names. `ref` is what the actions' schema admits: a full id, taken
 * as given (a missing one is NOT_FOUND when loaded), or a short id (`SHORT_COMMIT_ID` in core/names), naming the one
 * commit whose id starts with its digits; a short id that names none is NOT_FOUND, one that names several
 * AMBIGUOUS_COMMIT_ID, listing them. The prefix becomes a range of the uuid primary key (padded with 0s to padded
 * with fs), so resolving reads an index range, never the document's history.
 */
export async function resolveCommitRef(tx: Tx, documentId: string, ref: string): Promise<string> {
  if (FULL_COMMIT_ID.test(ref)) return ref.toLowerCase();
  const digits = ref.replaceAll("-", "").toLowerCase();
  const bound = (pad: string) => asUuid(digits.padEnd(32, pad));
  const rows = await queryRows<{ id: string }>(
    tx,
    sql`
      SELECT id FROM commits
      WHERE document_id = ${documentId}::uuid AND id BETWEEN ${bound("0")}::uuid AND ${bound("f")}::uuid
      ORDER BY id LIMIT ${AMBIGUOUS_LISTED}
    `,
  );
  if (rows.length === 1) return rows[0]!.id;
  if (rows.length === 0) throw notFound("Commit", ref, "Use `documents` action `log` to list this document's commits.");
  throw new DomainError(
    "AMBIGUOUS_COMMIT_ID",
    `The short commit id ${ref} matches ${rows.length === AMBIGUOUS_LISTED ? "many" : rows.length} commits of this document: give more of its digits, or the full id from \`log\`.`,
    { commitId: ref, matches: rows.map((row) => row.id) },
  );
}

/** 32 hex digits in the 8-4-4-4-12 form of a uuid. */
function asUuid(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * A lazily loaded view of one document's commit graph. Loading a commit also
 * fetches every commit of the document in the generations just below it (an
 * index range scan on (document_id, generation)), growing the range each
 * time, so a walk of N commits takes O(log N) round trips.
 */
export class CommitGraph {
  private readonly loaded = new Map<string, CommitRecord>();
  private prefetchGenerations = FIRST_PREFETCH_GENERATIONS;

  constructor(
    private readonly tx: Tx,
    readonly documentId: string,
  ) {}

  async get(id: string): Promise<CommitRecord> {
    const [commit] = await this.getMany([id]);
    return commit!;
  }

  /** The commit a full id or a short one names (see `resolveCommitRef`). */
  async getByRef(ref: string): Promise<CommitRecord> {
    return this.get(await resolveCommitRef(this.tx, this.documentId, ref));
  }

  async getMany(ids: readonly string[]): Promise<CommitRecord[]> {
    const missing = [...new Set(ids.filter((id) => !this.loaded.has(id)))];
    if (missing.length > 0) await this.prefetch(missing);
    return ids.map((id) => {
      const commit = this.loaded.get(id);
      if (!commit) throw notFound("Commit", id, "Use `documents` action `log` to list this document's commits.");
      return commit;
    });
  }

  private async prefetch(ids: string[]): Promise<void> {
    const wanted = sql.param(ids);
    const rows = await queryRows<CommitRow>(
      this.tx,
      sql`
        WITH wanted AS (
          SELECT generation FROM commits WHERE document_id = ${this.documentId}::uuid AND id = ANY(${wanted}::uuid[])
        )
        SELECT c.id, c.document_id, c.parent_ids, c.generation, c.tree_hash, c.message, c.author_id, c.kind, c.section_ids, c.agent, c.created_at
        FROM commits c
        WHERE c.document_id = ${this.documentId}::uuid
          AND c.generation BETWEEN (SELECT min(generation) FROM wanted) - ${this.prefetchGenerations}::int
                               AND (SELECT max(generation) FROM wanted)
      `,
    );
    this.prefetchGenerations = Math.min(this.prefetchGenerations * 4, MAX_PREFETCH_GENERATIONS);
    for (const r of rows) {
      this.loaded.set(r.id, {
        id: r.id,
        documentId: r.document_id,
        parentIds: parseUuidArray(r.parent_ids),
        generation: Number(r.generation),
        treeHash: r.tree_hash,
        message: r.message,
        authorId: r.author_id,
        kind: r.kind,
        sectionIds: parseUuidArray(r.section_ids),
        agent: r.agent,
        createdAt: new Date(r.created_at),
      });
    }
  }
}

/** Newest first: higher generation, then later time, then id for a total order. */
const newestFirst = (a: CommitRecord, b: CommitRecord): number =>
  b.generation - a.generation || b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);

export interface LogPage {
  commits: CommitRecord[];
  /** The walk's frontier, to resume from; null when history is exhausted. */
  nextFrontier: string[] | null;
}

/**
 * Lists the ancestors of `frontier` (heads, or a cursor's frontier) newest first.
 * Popping in generation order means every child of a commit is popped before
 * it, so the frontier alone (no visited set) keeps the walk free of repeats and
 * is all a cursor needs to carry.
 */
export async function walkLog(graph: CommitGraph, frontier: readonly string[], limit: number): Promise<LogPage> {
  const queue = new Heap<CommitRecord>(newestFirst);
  const queued = new Set<string>();
  for (const c of await graph.getMany(frontier)) {
    if (!queued.has(c.id)) {
      queued.add(c.id);
      queue.push(c);
    }
  }
  const page: CommitRecord[] = [];
  while (page.length < limit && !queue.isEmpty()) {
    const commit = queue.pop()!;
    queued.delete(commit.id);
    page.push(commit);
    for (const parent of await graph.getMany(commit.parentIds)) {
      if (!queued.has(parent.id)) {
        queued.add(parent.id);
        queue.push(parent);
      }
    }
  }
  return { commits: page, nextFrontier: queue.isEmpty() ? null : [...queued] };
}

const FROM_A = 1;
const FROM_B = 2;
const STALE = 4;

/** Merge bases remembered by document and commit pair. */
const knownMergeBases = createCache<string, string[]>({
  name: "merge bases by commit pair",
  keptTrueBy: "the merge bases of two commits never change: commits and their parents are immutable",
  max: 10_000,
});

/**
 * All best common ancestors of two commits, like `git merge-base --all`,
 * sorted newest first.
 */
export async function mergeBases(graph: CommitGraph, a: string, b: string): Promise<readonly string[]> {
  if (a === b) return [a];
  const key = `${graph.documentId}:${a < b ? `${a}:${b}` : `${b}:${a}`}`;
  const known = knownMergeBases.get(key);
  if (known) return known;
  return knownMergeBases.set(key, await walkToMergeBases(graph, a, b));
}

/**
 * mergeBases without the memory: paints down from both heads in generation
 * order; a commit reached from both is a common ancestor and marks its own
 * ancestors stale; finally drops any candidate that is an ancestor of another.
 * (Exported for the benchmarks, which time the walk itself.)
 */
export async function walkToMergeBases(graph: CommitGraph, a: string, b: string): Promise<string[]> {
  const flags = new Map<string, number>();
  const queue = new Heap<CommitRecord>(newestFirst);
  const queued = new Set<string>();
  const enqueue = (c: CommitRecord, flag: number) => {
    const before = flags.get(c.id) ?? 0;
    flags.set(c.id, before | flag);
    if (!queued.has(c.id)) {
      queued.add(c.id);
      queue.push(c);
    }
  };
  const [commitA, commitB] = await graph.getMany([a, b]);
  enqueue(commitA!, FROM_A);
  enqueue(commitB!, FROM_B);

  const candidates: CommitRecord[] = [];
  const hasLiveEntry = () => [...queued].some((id) => ((flags.get(id) ?? 0) & STALE) === 0);
  while (!queue.isEmpty() && hasLiveEntry()) {
    const commit = queue.pop()!;
    queued.delete(commit.id);
    let flag = flags.get(commit.id)!;
    if ((flag & (FROM_A | FROM_B)) === (FROM_A | FROM_B) && (flag & STALE) === 0) {
      candidates.push(commit);
      flag |= STALE;
      flags.set(commit.id, flag);
    }
    for (const parent of await graph.getMany(commit.parentIds)) {
      if (((flags.get(parent.id) ?? 0) & flag) !== flag) enqueue(parent, flag);
    }
  }
  return (await removeRedundant(graph, candidates)).sort(newestFirst).map((c) => c.id);
}

/** Drops every candidate that is an ancestor of another candidate. */
async function removeRedundant(graph: CommitGraph, candidates: CommitRecord[]): Promise<CommitRecord[]> {
  if (candidates.length < 2) return candidates;
  const redundant = new Set<string>();
  for (const from of candidates) {
    if (redundant.has(from.id)) continue;
    const others = candidates.filter((c) => c.id !== from.id && !redundant.has(c.id));
    for (const reached of await reachableAmong(graph, from, others)) redundant.add(reached);
  }
  return candidates.filter((c) => !redundant.has(c.id));
}

/** Which of `targets` are proper ancestors of `from`; the walk stops below the lowest target generation. */
async function reachableAmong(graph: CommitGraph, from: CommitRecord, targets: CommitRecord[]): Promise<Set<string>> {
  const found = new Set<string>();
  if (targets.length === 0) return found;
  const targetIds = new Set(targets.map((t) => t.id));
  const floor = Math.min(...targets.map((t) => t.generation));
  const seen = new Set<string>([from.id]);
  let layer = [from];
  while (layer.length > 0 && found.size < targetIds.size) {
    const next: CommitRecord[] = [];
    for (const parent of await graph.getMany(layer.flatMap((c) => c.parentIds))) {
      if (seen.has(parent.id) || parent.generation < floor) continue;
      seen.add(parent.id);
      if (targetIds.has(parent.id)) found.add(parent.id);
      next.push(parent);
    }
    layer = next;
  }
  return found;
}

/** True when `ancestor` is `descendant` or one of its ancestors. */
export async function isAncestor(graph: CommitGraph, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true;
  const [a, d] = await graph.getMany([ancestor, descendant]);
  return (await reachableAmong(graph, d!, [a!])).has(ancestor);
}

/**
 * Commits reachable from `head` but from none of `exclude` (git rev-list head ^exclude…),
 * oldest first. Walking in generation order means a commit's reachability from
 * an excluded head is settled before it is popped.
 */
export async function commitsOnlyIn(graph: CommitGraph, head: string, exclude: readonly string[]): Promise<CommitRecord[]> {
  const excluded = new Set<string>();
  const queued = new Set<string>();
  const queue = new Heap<CommitRecord>(newestFirst);
  let interestingQueued = 0;
  const enqueue = (c: CommitRecord, isExcluded: boolean) => {
    if (queued.has(c.id)) {
      if (isExcluded && !excluded.has(c.id)) {
        excluded.add(c.id);
        interestingQueued -= 1;
      }
      return;
    }
    queued.add(c.id);
    queue.push(c);
    if (isExcluded) excluded.add(c.id);
    else interestingQueued += 1;
  };
  for (const c of await graph.getMany(exclude)) enqueue(c, true);
  enqueue(await graph.get(head), false);
  const result: CommitRecord[] = [];
  while (interestingQueued > 0) {
    const commit = queue.pop()!;
    queued.delete(commit.id);
    const isExcluded = excluded.has(commit.id);
    if (!isExcluded) {
      interestingQueued -= 1;
      result.push(commit);
    }
    for (const parent of await graph.getMany(commit.parentIds)) enqueue(parent, isExcluded);
  }
  return result.reverse();
}
