/**
 * The section rooms of a process store their updates through one line: group
 * commit across sections. A room hands over its batch (the updates that
 * arrived while its previous batch was being stored) and the line writes
 * what every room handed over meanwhile as one statement, one round trip and
 * one commit, while the next batch gathers behind it. With a keystroke a
 * second in each of hundreds of rooms, storing each room on its own was a
 * statement and a commit per keystroke, a quarter of the CPU a keystroke cost
 * with PostgreSQL counted (bench/README.md, "Scale-out"). Statements start at
 * most every STATEMENT_SPACING_MS: a line that has been idle that long writes
 * at once (a lone keystroke waits for nothing), and under load what arrives
 * within the spacing is one statement, so a busy process's statements, each
 * a commit PostgreSQL pays for whatever its size, are bounded per second
 * while an update's durability window grows by at most the spacing.
 *
 * A batch that fails is written again room by room, so one section whose
 * rows are refused fails only its own room (which closes, and its clients
 * hand their edits over again), never its neighbours in the batch.
 */
import type { Database } from "@/db/client";
import { appendDraftUpdates, type NewDraftUpdate } from "@/server/store/drafts";

interface Handed {
  rows: readonly NewDraftUpdate[];
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * At most one statement per this many milliseconds and process: 20 commits a
 * second whatever the load. 50 rather than 10 took PostgreSQL from 0.08 to
 * 0.02-0.03 cores at 1,000 clients and a delivered edit's CPU down 15%
 * (bench/README.md, "Scale-out"); an edit lives only in the processes and
 * the clients that hold it for 50 ms more at most (Hocuspocus waits 2 s).
 */
export const STATEMENT_SPACING_MS = 50;

export class DraftAppends {
  private waiting: Handed[] = [];
  private writing = false;
  /** performance.now() when the last statement started. */
  private lastStartedAt = Number.NEGATIVE_INFINITY;
  /** Someone waits for what was handed over: the next statement does not wait for the spacing. */
  private hurried = false;
  /** Ends the wait for the spacing now (set while the line waits for it). */
  private endSpacing: (() => void) | null = null;

  /** `spacingMs`: tests widen it to see what gathers within it. */
  constructor(
    private readonly db: Database,
    private readonly spacingMs = STATEMENT_SPACING_MS,
  ) {}

  /** Resolves once these rows are stored (in order, and after every row handed over before them). */
  append(rows: readonly NewDraftUpdate[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ rows, resolve, reject });
      if (!this.writing) void this.write();
    });
  }

  /**
   * Someone waits for what was handed over to be stored (a commit, a head
   * move, an API edit of an open room settles it first): the next statement
   * starts now rather than when the spacing ends. Those are rare beside
   * keystrokes, so statements stay bounded, and whoever waits for storage is
   * not kept waiting for the spacing too.
   */
  hurry(): void {
    // Also when asked before the rows reach the line (a room hands its batch over a microtask after it is queued).
    this.hurried = true;
    this.endSpacing?.();
  }

  private async write(): Promise<void> {
    this.writing = true;
    while (this.waiting.length > 0) {
      const wait = this.lastStartedAt + this.spacingMs - performance.now();
      if (wait > 0 && !this.hurried)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.endSpacing = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      this.endSpacing = null;
      this.hurried = false;
      this.lastStartedAt = performance.now();
      const batch = this.waiting;
      this.waiting = [];
      try {
        await appendDraftUpdates(
          this.db,
          batch.flatMap((handed) => handed.rows),
        );
        for (const handed of batch) handed.resolve();
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        else
          for (const handed of batch)
            await appendDraftUpdates(this.db, handed.rows).then(
              () => handed.resolve(),
              (alone: unknown) => handed.reject(alone),
            );
      }
    }
    // In the same synchronous step as the empty check: a hand-over after it starts a new run.
    this.writing = false;
  }
}
