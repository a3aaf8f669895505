/** What every room of a process shares: storage, the one authorize, the other processes, the per-branch line, and its counters. */
import type { Database } from "@/db/client";
import type { Authorizer } from "@/server/access/authorize";
import type { SectionKey } from "@/server/store/drafts";
import type { BranchQueue } from "./branch-queue";
import type { DraftAppends } from "./draft-appends";
import type { DraftChanges } from "./draft-changes";
import type { FanOut } from "./fan-out";
import type { SharedDecisions } from "./shared-values";

export interface RoomServices {
  readonly db: Database;
  readonly authorize: Authorizer;
  readonly fanOut: FanOut;
  readonly queue: BranchQueue;
  readonly changes: DraftChanges;
  /** The one line the section rooms store their updates through (group commit across sections). */
  readonly appends: DraftAppends;
  readonly stats: RoomStats;
  /** What connections are admitted and decided with, equal parts held once (shared-values.ts). */
  readonly decisions: SharedDecisions;
  /** How many access changes this process has heard of (onAccessChanged): a decision that saw it move may rest on access no longer true. */
  accessChanges(): number;
  /** Folds a section's log into its state, from storage (see SectionRoom); the rooms await it on close, and start none once closing. */
  compact(key: SectionKey): Promise<void>;
}

/** The rooms' counters, for the operator's and the tests' eyes. */
export class RoomStats {
  /** Updates read-only connections sent, dropped. */
  droppedUpdates = 0;
  /** How many times a connection was held back for sending too many messages in a second. */
  throttledConnections = 0;
  /** How long stored updates were applied and broadcast but not yet stored (ms): the window a kill -9 could lose them in, were every client holding them gone too. */
  readonly durabilityWindows = new RecentDurations(10_000);
}

/** The last `capacity` durations (ms) recorded, for percentiles, and the longest ever. */
export class RecentDurations {
  private readonly samples: number[] = [];
  private next = 0;
  max = 0;
  count = 0;

  constructor(private readonly capacity: number) {}

  record(ms: number): void {
    if (this.samples.length < this.capacity) this.samples.push(ms);
    else this.samples[this.next] = ms;
    this.next = (this.next + 1) % this.capacity;
    this.count += 1;
    this.max = Math.max(this.max, ms);
  }

  /** The recorded durations, shortest first. */
  sorted(): number[] {
    return [...this.samples].sort((a, b) => a - b);
  }
}
