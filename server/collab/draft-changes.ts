/**
 * "A branch's draft changed here": its content (an edit in a room of this
 * process, one arriving from another process through Redis, a commit, a
 * discard), the people connected to it, or the head it is compared with (a
 * head move this process made or heard of). Listeners
 * hear of a branch at most once per DRAFT_CHANGE_DELAY_MS, that long after
 * the first change (a burst of keystrokes is one notice), so whoever asks
 * for the draft's status again does so a few times a second at most.
 */
import type { DraftKey } from "@/server/store/drafts";
import { branchKey } from "./branch-queue";

export const DRAFT_CHANGE_DELAY_MS = 200;

type DraftChangeListener = (key: { documentId: string; branchName: string }) => void;

export class DraftChanges {
  /** Entries, so one function subscribed twice is called twice and unsubscribes once per subscription. */
  private readonly listeners = new Set<{ listener: DraftChangeListener }>();
  private readonly waiting = new Map<string, ReturnType<typeof setTimeout>>();

  listen(listener: DraftChangeListener): () => void {
    const entry = { listener };
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** A branch's draft changed: its listeners hear of it DRAFT_CHANGE_DELAY_MS from the first change not yet told. */
  changed(key: DraftKey): void {
    // A keystroke costs a size check while nobody listens.
    if (this.listeners.size === 0) return;
    const name = branchKey(key);
    if (this.waiting.has(name)) return;
    const told = { documentId: key.documentId, branchName: key.branchName };
    const timer = setTimeout(() => {
      this.waiting.delete(name);
      for (const { listener } of [...this.listeners]) {
        try {
          listener(told);
        } catch (error) {
          console.error("[quire] draft-change listener failed", error);
        }
      }
    }, DRAFT_CHANGE_DELAY_MS);
    timer.unref();
    this.waiting.set(name, timer);
  }

  /** Drops the notices not yet given (the process is closing). */
  close(): void {
    for (const timer of this.waiting.values()) clearTimeout(timer);
    this.waiting.clear();
    this.listeners.clear();
  }
}
