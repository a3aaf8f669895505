/**
 * Per branch, one line of operations that must not interleave in this
 * process: opening a section room, following a head move, a commit, a
 * discard. Each runs after every earlier one on its branch, whether the
 * earlier one succeeded or failed.
 */
import type { DraftKey } from "@/server/store/drafts";
import { namedOncePerKey } from "./key-names";

/** A branch's name in maps, built once per key object (see key-names.ts). */
export const branchKey = namedOncePerKey((key: DraftKey): string => `${key.documentId}\u0000${key.branchName}`);

export class BranchQueue {
  private readonly chains = new Map<string, Promise<unknown>>();

  /** Runs `work` after every earlier operation on the branch in this process. */
  run<T>(key: DraftKey, work: () => Promise<T>): Promise<T> {
    const name = branchKey(key);
    const previous = this.chains.get(name) ?? Promise.resolve();
    const next = previous.then(work, work);
    const tail = next.catch(() => undefined);
    this.chains.set(name, tail);
    void tail.then(() => {
      if (this.chains.get(name) === tail) this.chains.delete(name);
    });
    return next;
  }

  /** Resolves once every operation queued so far has ended. */
  async drained(): Promise<void> {
    for (const name of [...this.chains.keys()]) await this.chains.get(name);
  }
}
