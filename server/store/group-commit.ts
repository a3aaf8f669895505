/**
 * Group commit: writes on a branch, each its own commit, stored in batches
 * through commitToBranch (commit-to-branch.ts). The rules:
 *
 * 1. Batching in arrival order. Writes to one branch that arrive while a batch
 *    for it is being written wait; the next batch takes them (at most
 *    MAX_BATCH) in the order writeOnBranch was called. Alone, a write is a
 *    batch of one. The queue only groups the writes one process receives.
 * 2. Each write its own commit with its own checks. A batch applies its writes
 *    one after another in memory: each is admitted (access) and built on the
 *    tree the write before it left, exactly as if they had run one by one.
 * 3. A refused write fails alone. A DomainError from `admit` or `change`
 *    fails that write and the batch goes on; any other error fails the batch,
 *    whose writes are then each retried alone.
 * 4. One statement per batch, compare-and-swap head move. Every commit, tree,
 *    section version and comment of the batch is stored, and the head moved,
 *    by one commitToBranch statement that stores nothing unless the head is
 *    still the one the batch was built on (git's update-ref). No transaction
 *    stays open while the writes are built.
 * 5. Rebuild on a lost race. When the head moved under the batch (another
 *    process, a merge) the batch is built again on a fresh read of the branch.
 * 6. Row lock after two lost races. The third attempt runs in a transaction
 *    holding the branch row lock, so a branch another process keeps moving
 *    cannot starve it (it queues behind that writer, as merges do).
 * 7. Remembered tip. The branch row the last batch left is remembered while
 *    the branch's queue runs (see `tips`), so a busy branch needs no read per
 *    batch; the compare-and-swap catches a tip that went stale.
 * 8. Refusals and no-ops are re-judged against the stored head. A batch that
 *    commits nothing moves no head, so nothing checks its tip: when that tip
 *    was remembered, the branch is read again, and if it moved the batch is
 *    rebuilt on it before any refusal or "unchanged" is answered.
 *
 * DESIGN.md §3 has each write lock the branch row in its own transaction;
 * docs/architecture.md says why this differs (a dozen round trips and a
 * WAL flush per write, one writer at a time).
 */
import type { Database } from "@/db/client";
import type { AgentIdentity } from "@/db/schema";
import {
  changedSectionIds,
  type DocumentTree,
  hashSection,
  hashTree,
  normalizeTree,
  type SectionVersion,
} from "@/server/core/document-model";
import { isDomainError } from "@/server/core/errors";
import type { NewCommentRow } from "./comments";
import { type Cache, createCache } from "./caches";
import { commitToBranch, type NewBranchCommit } from "./commit-to-branch";
import { type CommitRecord, getCommit, newCommitRecord } from "./commits";
import type { Tx } from "./db";
import {
  type BranchRow,
  branchMoved,
  branchNotFound,
  type DocumentRow,
  type DocumentWithGrants,
  findBranch,
  findDocumentWithGrantsForWrite,
} from "./documents";
import { loadSections, loadTree } from "./objects";

/** What a write sees of the branch it changes. */
export interface BranchState {
  /** Current in its ids and permission columns; its mirror of the default branch (path, name, …) may lag: read those from `tree`. */
  document: DocumentRow;
  branch: BranchRow;
  head: CommitRecord;
  tree: DocumentTree;
  /** Loads section versions of this tree (or any stored ones) by hash. */
  loadSections(hashes: Iterable<string>): Promise<Map<string, SectionVersion>>;
}

/**
 * What a write produces: the next tree, and what to store with it. A change
 * only reads through the handle it is given; everything it stores goes here,
 * so a change that fails leaves nothing behind for the writes batched with it.
 */
export interface BranchChange<R> {
  tree: DocumentTree;
  newSections: SectionVersion[];
  /** Comments the new content introduces (their anchors are in the section text). */
  newComments: NewCommentRow[];
  message: string;
  /** Default "write" (a live draft's commit is one too). */
  kind?: "write" | "revert";
  /** Returned to the caller with the commit. */
  result: R;
}

export interface BranchWriteResult<R> {
  /** The new head; equals the old head when the change left the tree as it was. */
  commitId: string;
  changed: boolean;
  tree: DocumentTree;
  result: R;
}

export interface BranchWrite<R> {
  documentId: string;
  branchName: string;
  authorId: string;
  /** The agent acting for the author (recorded on the commit); null for the author themselves. */
  agent: AgentIdentity | null;
  now: Date;
  /**
   * Checks the author may write to this document (undefined: there is no such
   * document), before the branch is looked at, so a document the author may
   * not see is refused as missing whatever the branch. Throws to refuse.
   */
  /** `found` holds the grants of the batch's authors (cached, see access-cache.ts). */
  admit(found: DocumentWithGrants | undefined): void;
  /** Builds the change from the branch as the writes before this one left it; may throw to fail this write alone. */
  change(state: BranchState, tx: Tx): Promise<BranchChange<R>>;
}

/** Bounds one batch's size (and the wait of the last write in it). */
const MAX_BATCH = 64;

interface Queued {
  write: BranchWrite<unknown>;
  resolve(result: BranchWriteResult<unknown>): void;
  reject(error: unknown): void;
}

type Outcome = { ok: BranchWriteResult<unknown> } | { error: unknown };

interface BranchQueue {
  key: string;
  waiting: Queued[];
  /** Branches as this process's last batch on each left them: the next batch builds on its tip without reading (the head move checks it). */
  tips: Cache<string, BranchRow>;
}

interface DatabaseQueues {
  /** Writes waiting per branch; a branch has a queue only while batches for it run. */
  branches: Map<string, BranchQueue>;
  tips: Cache<string, BranchRow>;
}

/** Per database: a second handle on the same database stands for another process (and is one, to the tests). */
const queues = new WeakMap<Database, DatabaseQueues>();

function queuesOf(db: Database): DatabaseQueues {
  let found = queues.get(db);
  if (!found) {
    found = {
      branches: new Map(),
      tips: createCache<string, BranchRow>({
        name: "branch tips while a branch's write queue runs",
        keptTrueBy:
          "the head move's compare-and-swap: a batch built on a stale tip stores nothing and is rebuilt, one that moves nothing re-reads the head; forgotten when the queue ends",
        max: 10_000,
      }),
    };
    queues.set(db, found);
  }
  return found;
}

/**
 * Applies one write on a branch as its own commit and resolves with the new
 * head. Writes to one branch are applied in the order they were called.
 */
export function writeOnBranch<R>(db: Database, write: BranchWrite<R>): Promise<BranchWriteResult<R>> {
  const { branches, tips } = queuesOf(db);
  const key = `${write.documentId}\u0000${write.branchName}`;
  return new Promise((resolve, reject) => {
    const queued: Queued = { write: write as BranchWrite<unknown>, resolve: resolve as Queued["resolve"], reject };
    const running = branches.get(key);
    if (running) {
      running.waiting.push(queued);
      return;
    }
    const queue: BranchQueue = { key, waiting: [queued], tips };
    branches.set(key, queue);
    void drain(db, queue, () => {
      tips.invalidateNow([key]);
      branches.delete(key);
    });
  });
}

/** Runs batches until the queue is empty, then lets go of it in the same tick (so no write can slip in unseen). */
async function drain(db: Database, queue: BranchQueue, release: () => void): Promise<void> {
  while (queue.waiting.length > 0) await runBatch(db, queue, queue.waiting.splice(0, MAX_BATCH));
  release();
}

/** Runs a batch; if it fails as a whole, each write is retried alone so one bad write cannot sink the others. */
async function runBatch(db: Database, queue: BranchQueue, batch: Queued[]): Promise<void> {
  let outcomes: Outcome[];
  try {
    outcomes = await applyBatch(
      db,
      queue,
      batch.map((q) => q.write),
    );
  } catch (error) {
    queue.tips.invalidateNow([queue.key]);
    if (batch.length === 1) {
      batch[0]!.reject(error);
      return;
    }
    for (const queued of batch) await runBatch(db, queue, [queued]);
    return;
  }
  outcomes.forEach((outcome, i) => {
    if ("ok" in outcome) batch[i]!.resolve(outcome.ok);
    else batch[i]!.reject(outcome.error);
  });
}

/**
 * Optimistic attempts before a batch takes the branch row lock: when another
 * process keeps moving the branch, the locked attempt queues behind it (as
 * merges do) instead of losing the race again.
 */
const OPTIMISTIC_ATTEMPTS = 2;

async function applyBatch(db: Database, queue: BranchQueue, writes: BranchWrite<unknown>[]): Promise<Outcome[]> {
  for (let attempt = 1; attempt <= OPTIMISTIC_ATTEMPTS; attempt++) {
    try {
      return await attemptBatch(db, queue, writes, { lockBranch: false });
    } catch (error) {
      if (!(isDomainError(error) && error.code === "BRANCH_MOVED")) throw error;
      queue.tips.invalidateNow([queue.key]);
    }
  }
  return db.transaction((tx) => attemptBatch(tx, queue, writes, { lockBranch: true }));
}

/**
 * Reads the branch (unless the last batch left its tip) and the document's
 * access facts (cached), applies the writes one after another in memory, then
 * stores everything and moves the head in one statement that does nothing
 * unless the head is still the one built on (optimistic, as git's
 * update-ref): no transaction stays open while the writes are built. With
 * `lockBranch` (inside a transaction) the branch row is read fresh and locked
 * instead, so the head cannot move.
 */
async function attemptBatch(
  db: Tx,
  queue: BranchQueue,
  writes: BranchWrite<unknown>[],
  options: { lockBranch: boolean },
): Promise<Outcome[]> {
  const { documentId, branchName } = writes[0]!;
  const fromTip = !options.lockBranch ? queue.tips.get(queue.key) : undefined;
  const [branch, found] = await Promise.all([
    fromTip ?? findBranch(db, documentId, branchName, { forUpdate: options.lockBranch }),
    findDocumentWithGrantsForWrite(
      db,
      documentId,
      writes.map((w) => w.authorId),
    ),
  ]);
  // Undefined until the write has run: refused writes get their outcome now.
  const outcomes: Array<Outcome | undefined> = writes.map((write) => {
    try {
      write.admit(found);
      if (!branch) throw branchNotFound(branchName);
      return undefined;
    } catch (error) {
      if (!isDomainError(error)) throw error;
      return { error };
    }
  });
  if (!branch || !found) return outcomes as Outcome[];
  const { document } = found;
  const start = await getCommit(db, document.id, branch.headCommitId);
  let head = start;
  const startTree = await loadTree(db, start.treeHash);
  let tree = startTree;
  const storing = {
    sections: new Map<string, SectionVersion>(),
    trees: new Map<string, DocumentTree>(),
    commits: [] as NewBranchCommit[],
    comments: [] as NewCommentRow[],
  };
  // Section versions earlier writes of this batch introduced are not stored yet, but later writes see them.
  const loadVersions = async (hashes: Iterable<string>) => {
    const wanted = [...hashes];
    const versions = await loadSections(
      db,
      wanted.filter((hash) => !storing.sections.has(hash)),
    );
    for (const hash of wanted) if (storing.sections.has(hash)) versions.set(hash, storing.sections.get(hash)!);
    return versions;
  };
  for (const [i, write] of writes.entries()) {
    if (outcomes[i]) continue;
    let change: BranchChange<unknown>;
    try {
      change = await write.change({ document, branch: { ...branch, headCommitId: head.id }, head, tree, loadSections: loadVersions }, db);
    } catch (error) {
      // A refusal fails this write alone; anything else fails the batch (and each write is then retried alone).
      if (!isDomainError(error)) throw error;
      outcomes[i] = { error };
      continue;
    }
    const nextTree = normalizeTree(change.tree);
    const treeHash = hashTree(nextTree);
    if (treeHash === head.treeHash) {
      outcomes[i] = { ok: { commitId: head.id, changed: false, tree, result: change.result } };
      continue;
    }
    const move = change.kind ?? "write";
    const commit = newCommitRecord(
      {
        documentId: document.id,
        parentIds: [head.id],
        treeHash,
        message: change.message,
        authorId: write.authorId,
        agent: write.agent,
        kind: move,
        sectionIds: changedSectionIds(tree, nextTree),
        createdAt: write.now,
      },
      [head],
    );
    storing.commits.push({ record: commit, move });
    storing.trees.set(treeHash, nextTree);
    for (const version of change.newSections) storing.sections.set(hashSection(version), version);
    storing.comments.push(...change.newComments);
    head = commit;
    tree = nextTree;
    outcomes[i] = { ok: { commitId: commit.id, changed: true, tree, result: change.result } };
  }
  if (storing.commits.length > 0) {
    const now = writes.at(-1)!.now;
    await commitToBranch(db, {
      document,
      branchName,
      from: { commitId: start.id, tree: startTree },
      to: { commits: storing.commits },
      tree,
      storing,
      actorId: writes.at(-1)!.authorId,
      now,
    });
    queue.tips.set(queue.key, { ...branch, headCommitId: head.id, updatedAt: now });
  } else {
    // Nothing to compare-and-swap: refusals and no-ops built on a remembered tip are checked against the stored head.
    if (fromTip && (await findBranch(db, documentId, branchName))?.headCommitId !== branch.headCommitId) throw branchMoved(branchName);
    queue.tips.set(queue.key, branch);
  }
  return outcomes as Outcome[];
}
