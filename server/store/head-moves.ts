/**
 * The head-move seam: every committed head move in this process is announced
 * here, in commit order per branch, so live rooms can follow the branch.
 */
export interface HeadMove {
  documentId: string;
  branchName: string;
  previousCommitId: string | null; // null when the branch or document was just created
  commitId: string; // the new head
  authorId: string | null;
  kind: "write" | "revert" | "merge" | "fast-forward" | "create-document" | "create-branch" | "draft-commit";
}

type HeadMoveListener = (move: HeadMove) => void;

const listeners = new Set<HeadMoveListener>();

/** Called after every committed head move in this process, in commit order per branch; returns unsubscribe. */
export function onHeadMoved(listener: HeadMoveListener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** Tells every listener about a committed head move; a failing listener does not stop the others or the write. */
export function announceHeadMove(move: HeadMove): void {
  for (const listener of listeners) {
    try {
      listener(move);
    } catch (error) {
      console.error("[quire] head-move listener failed", error);
    }
  }
}
