/**
 * The update that brings a section doc from one committed version to the
 * next (`applySectionChange` on a copy), computed where it cannot stall the
 * server. The diffs are bounded and linear, but on a section of a million
 * characters the diff and Yjs's edits of one long text still take tens of
 * milliseconds — every other request and keystroke in the process would wait
 * that long. So a large change is computed in a worker thread: the main
 * thread only encodes the doc's state (a copy of bytes) and later applies the
 * resulting update by item ids, both cheap. A small one (the common case: a
 * section of a few pages) is computed here, where a thread's round trip would
 * cost more than the work.
 *
 * The doc may change while the worker computes (people keep typing): the
 * update was computed against the state it was sent, and Yjs merges it with
 * what arrived meanwhile like any concurrent edit.
 */
import { Worker } from "node:worker_threads";
import * as Y from "yjs";
import { applySectionChange, type LiveSection, newServerDoc } from "./codec";

/** Characters (both versions' text, and the doc's) past which the change is computed off the event loop. */
export const OFF_THREAD_CHARS = 50_000;

/** What the worker is asked: the doc's state, and the change to apply to it. */
export interface SectionChangeRequest {
  id: number;
  state: Uint8Array;
  from: LiveSection;
  next: LiveSection;
}

export type SectionChangeAnswer = { id: number; update: Uint8Array | null } | { id: number; error: string };

/** The update applying `from` → `next` to a doc holding `state` makes (null: none): the one computation both threads run. */
export function sectionChangeOnState(state: Uint8Array, from: LiveSection, next: LiveSection): Uint8Array | null {
  const doc = newServerDoc();
  Y.applyUpdate(doc, state);
  const updates: Uint8Array[] = [];
  doc.on("update", (update: Uint8Array) => updates.push(update));
  applySectionChange(doc, from, next);
  doc.destroy();
  return updates.length === 0 ? null : Y.mergeUpdates(updates);
}

const textLength = (section: LiveSection) =>
  section.name.length + section.content.reduce((sum, block) => sum + (block.blockType === "text" ? block.text.length : 0), 0);

/** The update that applies the change from `from` to `next` to `doc` (null when it changes nothing); `doc` itself is not changed. */
export function sectionChangeUpdate(doc: Y.Doc, from: LiveSection, next: LiveSection): Promise<Uint8Array | null> {
  const state = Y.encodeStateAsUpdate(doc);
  if (textLength(from) + textLength(next) + state.length < OFF_THREAD_CHARS)
    return Promise.resolve(sectionChangeOnState(state, from, next));
  return offThread.compute(state, from, next);
}

/** One worker thread for the process, started on first use; it does not keep the process alive. */
class SectionChangeThread {
  private worker: Worker | null = null;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve(update: Uint8Array | null): void; reject(error: Error): void }>();

  compute(state: Uint8Array, from: LiveSection, next: LiveSection): Promise<Uint8Array | null> {
    const worker = this.started();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      const request: SectionChangeRequest = { id, state, from, next };
      worker.postMessage(request, [state.buffer as ArrayBuffer]);
      // Only while it has work does the worker keep the process alive.
      worker.ref();
    });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(new URL("./section-change-thread.mjs", import.meta.url));
    worker.unref();
    worker.on("message", (answer: SectionChangeAnswer) => {
      const waiting = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) worker.unref();
      if (!waiting) return;
      if ("error" in answer) waiting.reject(new Error(`computing a section change failed: ${answer.error}`));
      else waiting.resolve(answer.update);
    });
    // A thread that died takes its work with it: its callers fail (the head move is retried by the next one), and the next call starts a new thread.
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const waiting of this.waiting.values()) waiting.reject(error);
      this.waiting.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => fail(new Error(`the section-change thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }
}

const offThread = new SectionChangeThread();
