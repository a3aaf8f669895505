/**
 * The seam where later code reacts to a moved branch head (the live layer
 * applies every head move to the rooms open on that branch). commitToBranch
 * (commit-to-branch.ts) is the only caller of announceHeadMoves, and calls it
 * only once the move is committed: never for a refused or no-op write, nor
 * for a transaction that rolled back.
 *
 * One move per commit: a group-commit batch of N writes stores N commits with
 * one statement, and announces N moves, each from the commit before it (the
 * first from the head before the batch), with its own author and kind, the
 * same sequence the writes would have made one by one. A move without new
 * commits (fast-forward, a new branch) is one move to the existing commit.
 */

export type HeadMoveKind = "write" | "revert" | "merge" | "fast-forward" | "create-document" | "create-branch";

export interface HeadMove {
  documentId: string;
  branchName: string;
  /** The head before the move; null when the branch (or document) was just created. */
  previousCommitId: string | null;
  /** The new head. */
  commitId: string;
  /** Who made the newest commit; null for a system move. */
  authorId: string | null;
  kind: HeadMoveKind;
}

type Listener = (move: HeadMove) => void;

/** Entries, not the functions themselves, so one function subscribed twice is called twice and unsubscribes once per subscription. */
const listeners = new Set<{ listener: Listener }>();

/** Calls `listener` after every committed head move in this process, in commit order per branch; returns the unsubscribe function. A throwing listener is logged and never affects the write. */
export function onHeadMoved(listener: (move: HeadMove) => void): () => void {
  const entry = { listener };
  listeners.add(entry);
  return () => {
    listeners.delete(entry);
  };
}

/** Tells every listener about committed moves, in order. For commitToBranch only. */
export function announceHeadMoves(moves: readonly HeadMove[]): void {
  for (const move of moves) {
    Object.freeze(move);
    for (const { listener } of listeners) {
      try {
        listener(move);
      } catch (error) {
        console.error("[quire] head-move listener failed", error);
      }
    }
  }
}
