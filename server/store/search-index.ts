/**
 * Keeps the full-text index (db/schema-search.ts) at the branch heads.
 *
 * Every branch head is indexed: a document's name, path, description and tags
 * at the head (search_heads) and each section's name and words
 * (search_sections). A row records the version it was made from (the head's
 * commit, a section's blob hash), so bringing a branch up to date rewrites
 * only the sections whose version changed: one section for a write, the
 * merged ones for a merge, none for a new branch's copy of its source beyond
 * its own rows.
 *
 * When: soon after the move, never in the write. The head-move seam
 * (head-moves.ts, announced after COMMIT) schedules the branch on this
 * process's indexer, which runs it at once, off the writer's path; moves of
 * one branch that arrive while it runs fold into one more run. A search first
 * waits for this process's scheduled work (`settled`), then brings every head
 * whose indexed commit differs from the branch's (`catchUp`: moves made by
 * other processes, or lost to a crash) up to date before it reads. So a
 * search never answers from an index older than the heads it began with, and
 * a merge's content is found by the next search anywhere.
 *
 * One branch is indexed under a transaction-scoped advisory lock on it, and
 * the head is read inside that transaction, so two processes indexing one
 * branch end at the newer head.
 */
import { and, eq, notInArray, sql } from "drizzle-orm";
import type { Database } from "@/db/client";
import { searchHeads, searchSections, searchWords } from "@/db/schema";
import { anchoredCommentIds, pathWords, sectionWords } from "@/server/core/search-text";
import { getCommit } from "./commits";
import { queryRows, type Tx } from "./db";
import { findBranch } from "./documents";
import { onHeadMoved } from "./head-moves";
import { loadSections, loadTree } from "./objects";

/** The text search configuration every tsvector and tsquery of the index uses (stemming English words). */
export const SEARCH_CONFIG = "english";
const CONFIG = sql.raw(`'${SEARCH_CONFIG}'::regconfig`);

/** Words longer than this are not suggested for typos (hashes, ids, encoded data). */
const MAX_SUGGESTED_WORD = 40;

/** Brings the index of one branch to its head (or removes it, when the branch is gone). */
export async function indexBranch(db: Database, documentId: string, branchName: string): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`search:${documentId}:${branchName}`}, 0))`);
    const branch = await findBranch(tx, documentId, branchName);
    if (!branch) {
      await tx.delete(searchHeads).where(and(eq(searchHeads.documentId, documentId), eq(searchHeads.branchName, branchName)));
      return;
    }
    const [indexed] = await tx
      .select({ commitId: searchHeads.commitId })
      .from(searchHeads)
      .where(and(eq(searchHeads.documentId, documentId), eq(searchHeads.branchName, branchName)));
    if (indexed?.commitId === branch.headCommitId) return;

    const commit = await getCommit(tx, documentId, branch.headCommitId);
    const tree = await loadTree(tx, commit.treeHash);
    const [{ workspaceId, defaultBranch } = { workspaceId: "", defaultBranch: "" }] = await queryRows<{
      workspaceId: string;
      defaultBranch: string;
    }>(tx, sql`select workspace_id as "workspaceId", default_branch as "defaultBranch" from documents where id = ${documentId}`);
    const isDefault = branchName === defaultBranch;
    const at = { documentId, branchName, workspaceId, isDefault };

    await tx
      .insert(searchHeads)
      .values({
        ...at,
        commitId: commit.id,
        path: tree.path,
        name: tree.name,
        description: tree.description,
        deleted: tree.deleted,
        tagIds: [...tree.tagIds],
        search: sql`setweight(to_tsvector(${CONFIG}, ${tree.name}), 'A') || setweight(to_tsvector(${CONFIG}, ${pathWords(tree.path)}), 'A') || setweight(to_tsvector(${CONFIG}, ${tree.description ?? ""}), 'C')`,
      })
      .onConflictDoUpdate({
        target: [searchHeads.documentId, searchHeads.branchName],
        set: {
          commitId: sql`excluded.commit_id`,
          path: sql`excluded.path`,
          name: sql`excluded.name`,
          description: sql`excluded.description`,
          deleted: sql`excluded.deleted`,
          tagIds: sql`excluded.tag_ids`,
          search: sql`excluded.search`,
        },
      });

    const here = and(eq(searchSections.documentId, documentId), eq(searchSections.branchName, branchName));
    const current = await tx
      .select({ sectionId: searchSections.sectionId, blobHash: searchSections.blobHash, position: searchSections.position })
      .from(searchSections)
      .where(here);
    const currentById = new Map(current.map((row) => [row.sectionId, row]));
    const sectionIds = tree.sections.map((e) => e.sectionId);
    if (current.some((row) => !sectionIds.includes(row.sectionId))) {
      await tx.delete(searchSections).where(sectionIds.length === 0 ? here : and(here, notInArray(searchSections.sectionId, sectionIds)));
    }

    const changed = tree.sections
      .map((entry, position) => ({ entry, position }))
      .filter(({ entry }) => currentById.get(entry.sectionId)?.blobHash !== entry.blobHash);
    const moved = tree.sections
      .map((entry, position) => ({ entry, position }))
      .filter(({ entry, position }) => {
        const row = currentById.get(entry.sectionId);
        return row && row.blobHash === entry.blobHash && row.position !== position;
      });

    if (changed.length > 0) {
      const versions = await loadSections(
        tx,
        changed.map(({ entry }) => entry.blobHash),
      );
      const rows = changed.map(({ entry, position }) => {
        const version = versions.get(entry.blobHash)!;
        return {
          section_id: entry.sectionId,
          blob_hash: entry.blobHash,
          position,
          name: version.name,
          body: sectionWords(version),
          default_permission: version.defaultPermission,
          ai_access: version.aiAccess,
          comment_ids: anchoredCommentIds(version),
        };
      });
      await tx.execute(sql`
        insert into ${searchSections} (document_id, branch_name, workspace_id, is_default, section_id, blob_hash, position, name, body,
          default_permission, ai_access, comment_ids, search)
        select ${documentId}::uuid, ${branchName}, ${workspaceId}::uuid, ${isDefault}, r.section_id, r.blob_hash, r.position, r.name, r.body,
          r.default_permission, r.ai_access, r.comment_ids,
          setweight(to_tsvector(${CONFIG}, r.name), 'A') || setweight(to_tsvector(${CONFIG}, r.body), 'B')
        from json_to_recordset(${JSON.stringify(rows)}::json) as r(section_id uuid, blob_hash text, position int, name text,
          body text, default_permission text, ai_access text, comment_ids uuid[])
        on conflict (document_id, branch_name, section_id) do update set
          blob_hash = excluded.blob_hash, position = excluded.position, name = excluded.name,
          body = excluded.body, default_permission = excluded.default_permission, ai_access = excluded.ai_access,
          comment_ids = excluded.comment_ids, search = excluded.search`);
      await rememberWords(
        tx,
        documentId,
        branchName,
        rows.map((r) => r.section_id),
      );
    }
    if (moved.length > 0) {
      await tx.execute(sql`
        update ${searchSections} s set position = m.position
        from json_to_recordset(${JSON.stringify(moved.map(({ entry, position }) => ({ section_id: entry.sectionId, position })))}::json)
          as m(section_id uuid, position int)
        where s.document_id = ${documentId} and s.branch_name = ${branchName} and s.section_id = m.section_id`);
    }
  });
}

/** Adds the words of freshly indexed sections to the vocabulary typos are corrected from. */
async function rememberWords(tx: Tx, documentId: string, branchName: string, sectionIds: readonly string[]): Promise<void> {
  await tx.execute(sql`
    insert into ${searchWords} (word)
    select distinct w.lexeme from ${searchSections} s, unnest(s.search) w
    where s.document_id = ${documentId} and s.branch_name = ${branchName} and s.section_id = any(${sql.param([...sectionIds])}::uuid[])
      and length(w.lexeme) between 3 and ${MAX_SUGGESTED_WORD}
    on conflict do nothing`);
}

/**
 * Branch heads whose index is not at the head, and indexed branches that no
 * longer exist; with `movedSince`, only among branches moved since then (a
 * scan of branches without a join of every branch against the index).
 */
export async function staleBranches(db: Tx, movedSince?: Date): Promise<Array<{ documentId: string; branchName: string }>> {
  if (movedSince) {
    return queryRows(
      db,
      sql`
        select b.document_id as "documentId", b.name as "branchName"
        from branches b left join search_heads h on h.document_id = b.document_id and h.branch_name = b.name
        where b.updated_at > ${movedSince.toISOString()} and h.commit_id is distinct from b.head_commit_id`,
    );
  }
  return queryRows(
    db,
    sql`
      select coalesce(b.document_id, h.document_id) as "documentId", coalesce(b.name, h.branch_name) as "branchName"
      from branches b full join search_heads h on h.document_id = b.document_id and h.branch_name = b.name
      where h.commit_id is distinct from b.head_commit_id`,
  );
}

/** Indexes every stale branch (see staleBranches), a few at a time. Returns how many were brought up to date. */
export async function catchUp(db: Database, movedSince?: Date): Promise<number> {
  const stale = await staleBranches(db, movedSince);
  await inParallel(stale, 4, (b) => indexBranch(db, b.documentId, b.branchName));
  return stale.length;
}

/** Rebuilds the whole index from the branch heads (`quire search reindex`). Returns the branches and sections indexed. */
export async function reindexAll(db: Database): Promise<{ branches: number; sections: number }> {
  await db.transaction(async (tx) => {
    await tx.delete(searchSections);
    await tx.delete(searchHeads);
    await tx.delete(searchWords);
  });
  const branches = await catchUp(db);
  const [counted] = await queryRows<{ sections: number }>(db, sql`select count(*)::int as sections from ${searchSections}`);
  return { branches, sections: counted?.sections ?? 0 };
}

async function inParallel<T>(items: readonly T[], width: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}

/**
 * How long the indexer lets a branch's moves gather before it indexes them:
 * under a stream of writes (group commit lands hundreds a second on one
 * branch) the branch is indexed a few times a second, not once per batch. A
 * search never waits for it: `settled` starts whatever is gathering at once.
 */
const GATHER_MS = 200;

/**
 * This process's index upkeep for one database: each branch scheduled by a
 * head move is indexed once its moves have gathered (GATHER_MS), or at once
 * when a search asks (`settled`); a branch moved again while it is being
 * indexed gathers for one more run afterwards.
 */
class SearchIndexer {
  private readonly running = new Map<string, Promise<void>>();
  private readonly gathering = new Map<string, { timer: NodeJS.Timeout; documentId: string; branchName: string }>();
  private readonly again = new Set<string>();

  constructor(private readonly db: Database) {}

  schedule(documentId: string, branchName: string): void {
    const key = `${documentId}\u0000${branchName}`;
    if (this.running.has(key)) this.again.add(key);
    else this.gather(key, documentId, branchName);
  }

  private gather(key: string, documentId: string, branchName: string): void {
    if (this.gathering.has(key)) return;
    const timer = setTimeout(() => this.start(key), GATHER_MS);
    timer.unref();
    this.gathering.set(key, { timer, documentId, branchName });
  }

  private start(key: string): void {
    const gathered = this.gathering.get(key);
    if (!gathered || this.running.has(key)) return;
    clearTimeout(gathered.timer);
    this.gathering.delete(key);
    const { documentId, branchName } = gathered;
    const run = (async () => {
      try {
        await indexBranch(this.db, documentId, branchName);
      } catch (error) {
        // A search catches this branch up (catchUp); the write it followed is committed either way.
        console.error("[quire] search indexing failed", error);
      } finally {
        this.running.delete(key);
        if (this.again.delete(key)) this.gather(key, documentId, branchName);
      }
    })();
    this.running.set(key, run);
  }

  /** Resolves once every branch scheduled so far (and any rescheduled meanwhile) is indexed, starting what is gathering now. */
  async settled(): Promise<void> {
    while (this.running.size > 0 || this.gathering.size > 0) {
      for (const key of [...this.gathering.keys()]) this.start(key);
      await Promise.all(this.running.values());
    }
  }
}

const indexers = new WeakMap<Database, { indexer: SearchIndexer; users: number; stop: () => void }>();

/**
 * Indexes every head move this process commits on `db` soon after it is
 * committed. Returns the stop function, which resolves once the work already
 * scheduled is done. Started by the server for its database; a second start on
 * the same database shares the first.
 */
export function startSearchIndexer(db: Database): () => Promise<void> {
  const existing = indexers.get(db);
  if (existing) {
    existing.users += 1;
  } else {
    const indexer = new SearchIndexer(db);
    // Moves of other databases in this process (tests run several) find no branch here and index nothing, but their
    // documents ids never collide with this database's, so nothing of theirs is written.
    const stop = onHeadMoved((move) => indexer.schedule(move.documentId, move.branchName));
    indexers.set(db, { indexer, users: 1, stop });
  }
  let stopped = false;
  return async () => {
    const entry = indexers.get(db);
    if (stopped || !entry) return;
    stopped = true;
    entry.users -= 1;
    if (entry.users === 0) {
      entry.stop();
      indexers.delete(db);
      await entry.indexer.settled();
    }
  };
}

/**
 * How far before the previous check a search looks again for heads other
 * processes moved: far longer than a commit takes after its time is taken
 * (a head move's `updated_at`), and than the clocks of Quire's processes differ.
 */
const OVERLAP_MS = 60_000;
/** How often a process compares every head with the index (for older moves: a process that died before indexing them). */
const FULL_CHECK_MS = 60_000;
const checks = new WeakMap<Database, { lastStart: number; lastFullStart: number }>();

/**
 * What a search does before it reads: waits for the index work this process
 * has scheduled on `db`, then indexes every branch moved since a minute
 * before its previous check whose index is not at its head (moves of other
 * processes not yet indexed by them), and once a minute every stale branch.
 */
export async function bringIndexUpToDate(db: Database): Promise<void> {
  await indexers.get(db)?.indexer.settled();
  const start = Date.now();
  const previous = checks.get(db);
  if (!previous || start - previous.lastFullStart >= FULL_CHECK_MS) {
    await catchUp(db);
    checks.set(db, { lastStart: start, lastFullStart: start });
  } else {
    await catchUp(db, new Date(previous.lastStart - OVERLAP_MS));
    checks.set(db, { lastStart: start, lastFullStart: previous.lastFullStart });
  }
}
