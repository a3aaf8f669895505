/**
 * Writes on a branch, with group commit. Every write is its own commit on top
 * of the one before it, exactly as if the writes had run one after another;
 * but writes to one branch that arrive while a transaction for it is in flight
 * wait, and the next transaction applies all of them in arrival order: one
 * branch lock, one multi-row insert per table, one head move, one COMMIT
 * (what databases do with their log flushes). Under load a branch then costs a
 * few statements per batch instead of a dozen per write; alone, a write is a
 * batch of one.
 *
 * Across processes the branch row lock and the compare-and-swap on the head
 * keep writers apart as before; the queue only groups the writes one process
 * receives.
 */
import type { Database } from "@/db/client";
import { changedSectionIds, type DocumentTree, hashSection, hashTree, normalizeTree, type SectionVersion } from "@/server/core/document-model";
import { isDomainError } from "@/server/core/errors";
import { type NewCommentRow, insertComments } from "./comments";
import { type CommitRecord, getCommit, insertCommits, newCommitRecord } from "./commits";
import type { Tx } from "./db";
import { type BranchRow, type DocumentRow, getBranch, moveBranchHead } from "./documents";
import { loadSections, loadTree, putSections, putTrees } from "./objects";

/** What a write sees of the branch it changes. */
export interface BranchState {
  document: DocumentRow;
  branch: BranchRow;
  head: CommitRecord;
  tree: DocumentTree;
  /** Loads section versions of this tree (or any stored ones) by hash. */
  loadSections(hashes: Iterable<string>): Promise<Map<string, SectionVersion>>;
}

/**
 * What a write produces: the next tree, and what to store with it. A change
 * only reads through the transaction it is given; everything it stores goes
 * here, so a change that fails leaves nothing behind for the writes batched
 * with it.
 */
export interface BranchChange<R> {
  tree: DocumentTree;
  newSections: SectionVersion[];
  /** Comments the new content introduces (their anchors are in the section text). */
  newComments: NewCommentRow[];
  message: string;
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
  document: DocumentRow;
  branchName: string;
  authorId: string;
  now: Date;
  /** Builds the change from the branch as the writes before this one left it; may throw to fail this write alone. */
  change(state: BranchState, tx: Tx): Promise<BranchChange<R>>;
}

/** Bounds one transaction's size (and the wait of the last write in it). */
const MAX_BATCH = 64;

interface Queued {
  write: BranchWrite<unknown>;
  resolve(result: BranchWriteResult<unknown>): void;
  reject(error: unknown): void;
}

type Outcome = { ok: BranchWriteResult<unknown> } | { error: unknown };

/** Writes waiting per branch, per database; a branch has an entry only while a transaction for it runs. */
const queues = new WeakMap<Database, Map<string, Queued[]>>();

/**
 * Applies one write on a branch as its own commit and resolves with the new
 * head. Writes to one branch are applied in the order they were called.
 */
export function writeOnBranch<R>(db: Database, write: BranchWrite<R>): Promise<BranchWriteResult<R>> {
  let branches = queues.get(db);
  if (!branches) queues.set(db, (branches = new Map()));
  const key = `${write.document.id}\u0000${write.branchName}`;
  return new Promise((resolve, reject) => {
    const queued: Queued = { write: write as BranchWrite<unknown>, resolve: resolve as Queued["resolve"], reject };
    const waiting = branches.get(key);
    if (waiting) {
      waiting.push(queued);
      return;
    }
    const queue = [queued];
    branches.set(key, queue);
    void drain(db, queue, () => branches.delete(key));
  });
}

/** Runs batches until the queue is empty, then lets go of it in the same tick (so no write can slip in unseen). */
async function drain(db: Database, queue: Queued[], release: () => void): Promise<void> {
  while (queue.length > 0) await runBatch(db, queue.splice(0, MAX_BATCH));
  release();
}

/** Runs a batch in one transaction; if the transaction itself fails, each write is retried alone so one bad write cannot sink the others. */
async function runBatch(db: Database, batch: Queued[]): Promise<void> {
  let outcomes: Outcome[];
  try {
    outcomes = await db.transaction((tx) => applyBatch(tx, batch.map((q) => q.write)));
  } catch (error) {
    if (batch.length === 1) {
      batch[0]!.reject(error);
      return;
    }
    for (const queued of batch) await runBatch(db, [queued]);
    return;
  }
  outcomes.forEach((outcome, i) => ("ok" in outcome ? batch[i]!.resolve(outcome.ok) : batch[i]!.reject(outcome.error)));
}

async function applyBatch(tx: Tx, writes: BranchWrite<unknown>[]): Promise<Outcome[]> {
  const { document, branchName } = writes[0]!;
  const branch = await getBranch(tx, document.id, branchName, { forUpdate: true });
  const start = await getCommit(tx, document.id, branch.headCommitId);
  const startTree = await loadTree(tx, start.treeHash);
  let head = start;
  let tree = startTree;
  const commits: CommitRecord[] = [];
  const trees: DocumentTree[] = [];
  const sections: SectionVersion[] = [];
  const comments: NewCommentRow[] = [];
  const outcomes: Outcome[] = [];
  // Section versions earlier writes of this batch introduced are not stored yet, but later writes see them.
  const pending = new Map<string, SectionVersion>();
  const loadVersions = async (hashes: Iterable<string>) => {
    const wanted = [...hashes];
    const found = await loadSections(tx, wanted.filter((hash) => !pending.has(hash)));
    for (const hash of wanted) if (pending.has(hash)) found.set(hash, pending.get(hash)!);
    return found;
  };
  for (const write of writes) {
    let change: BranchChange<unknown>;
    try {
      change = await write.change({ document, branch: { ...branch, headCommitId: head.id }, head, tree, loadSections: loadVersions }, tx);
    } catch (error) {
      // A refusal fails this write alone; anything else may have broken the transaction, so it fails the batch.
      if (!isDomainError(error)) throw error;
      outcomes.push({ error });
      continue;
    }
    const nextTree = normalizeTree(change.tree);
    const treeHash = hashTree(nextTree);
    if (treeHash === head.treeHash) {
      outcomes.push({ ok: { commitId: head.id, changed: false, tree, result: change.result } });
      continue;
    }
    const commit = newCommitRecord(
      {
        documentId: document.id,
        parentIds: [head.id],
        treeHash,
        message: change.message,
        authorId: write.authorId,
        kind: change.kind ?? "write",
        sectionIds: changedSectionIds(tree, nextTree),
        createdAt: write.now,
      },
      [head],
    );
    commits.push(commit);
    trees.push(nextTree);
    sections.push(...change.newSections);
    for (const version of change.newSections) pending.set(hashSection(version), version);
    comments.push(...change.newComments);
    head = commit;
    tree = nextTree;
    outcomes.push({ ok: { commitId: commit.id, changed: true, tree, result: change.result } });
  }
  if (commits.length > 0) {
    // Trees before the commits that name them (a foreign key); blobs and trees are independent.
    await Promise.all([putSections(tx, sections), putTrees(tx, trees)]);
    await Promise.all([insertCommits(tx, commits), insertComments(tx, comments)]);
    await moveBranchHead(tx, {
      document,
      branchName,
      expectedHead: start.id,
      newHead: head.id,
      tree,
      now: writes[writes.length - 1]!.now,
    });
  }
  return outcomes;
}
