/**
 * The rooms' traffic with other Quire processes (QUIRE_REDIS_URL, bus.ts):
 * stored updates and presence of open sections go out and come in, head
 * moves made here are announced, who is connected is shared, a compaction
 * takes a lock, and a starting process asks the others to catch up from
 * storage. Without a bus each process works alone and every call here is a
 * no-op (presence answers null: ask the rooms of this process).
 */
import type { DraftKey, SectionKey } from "@/server/store/drafts";
import { branchKey } from "./branch-queue";
import { type CollabBus, PRESENCE_TTL_MS } from "./bus";

/** What arrives from other processes, for the rooms of this one to apply. */
export interface FanOutHandlers {
  /** Another process moved a branch head. */
  headMoved(key: DraftKey): void;
  /** A process started: every open section takes in what storage has. */
  catchUp(): void;
  /** Another process stored an update of a section (it is not this process's own). */
  update(key: SectionKey, update: Uint8Array): void;
  awareness(key: SectionKey, update: Uint8Array): void;
  /** Time to refresh this process's presence entries (they are ignored after PRESENCE_TTL_MS). */
  refreshPresence(): void;
}

const sectionName = (key: SectionKey): string => `${branchKey(key)}\u0000${key.sectionId}`;

const logFailure = (what: string) => (error: unknown) => console.error(`[quire] ${what} failed`, error);

export class FanOut {
  /** Updates from other processes for sections this process is loading, by section. */
  private readonly arrivedWhileLoading = new Map<string, Uint8Array[]>();

  constructor(private readonly bus: CollabBus | undefined) {}

  /** Subscribes to the other processes' messages and asks them to catch up; resolves to the stop function. */
  async start(handlers: FanOutHandlers): Promise<() => Promise<void>> {
    const bus = this.bus;
    if (!bus) return async () => {};
    const refresh = setInterval(() => handlers.refreshPresence(), PRESENCE_TTL_MS / 3);
    refresh.unref();
    const unsubscribe = await bus.subscribe((message) => {
      if (message.kind === "head-moved") return handlers.headMoved(message);
      if (message.kind === "catch-up") return handlers.catchUp();
      if (message.kind === "awareness") return handlers.awareness(message, message.payload);
      // A section being loaded keeps what arrives meanwhile: it may be newer than what the load read.
      this.arrivedWhileLoading.get(sectionName(message))?.push(message.payload);
      handlers.update(message, message.payload);
    });
    // This process's previous run may have stored updates it never published: the other processes' rooms take them from storage.
    void bus
      .publish({ documentId: "", branchName: "", sectionId: "", kind: "catch-up", payload: new Uint8Array() })
      .catch(logFailure("catch-up announcement"));
    return async () => {
      clearInterval(refresh);
      await unsubscribe();
    };
  }

  /** Collects the updates other processes publish for a section while `load` runs; resolves with what it loaded and them. */
  async whileLoading<T>(key: SectionKey, load: () => Promise<T>): Promise<{ loaded: T; arrived: Uint8Array[] }> {
    const arrived: Uint8Array[] = [];
    this.arrivedWhileLoading.set(sectionName(key), arrived);
    try {
      return { loaded: await load(), arrived };
    } finally {
      this.arrivedWhileLoading.delete(sectionName(key));
    }
  }

  /** Tells the other processes a branch head moved here, so their open rooms of that branch follow it. */
  announceHeadMove(key: DraftKey): void {
    void this.bus
      ?.publish({ documentId: key.documentId, branchName: key.branchName, sectionId: "", kind: "head-moved", payload: new Uint8Array() })
      .catch(logFailure("head-move announcement"));
  }

  /** Tells the other processes of an update stored in a section's draft, so their open rooms of it apply it. */
  publishStored(key: SectionKey, update: Uint8Array): void {
    void this.bus?.publish({ ...key, kind: "update", payload: update }).catch(logFailure("draft update announcement"));
  }

  publishAwareness(key: SectionKey, update: Uint8Array): void {
    void this.bus?.publish({ ...key, kind: "awareness", payload: update }).catch(logFailure("presence announcement"));
  }

  /** Records who this process has connected to a branch (an empty list clears it). */
  sharePresence(key: DraftKey, userIds: readonly string[]): Promise<void> {
    return this.bus
      ? this.bus.setPresence(key.documentId, key.branchName, userIds).catch(logFailure("presence update"))
      : Promise.resolve();
  }

  /** Users connected to a document's rooms in every process, per branch; null without a bus. */
  async presence(documentId: string): Promise<Map<string, string[]> | null> {
    return this.bus ? this.bus.presence(documentId) : null;
  }

  /** One process at a time (with a bus); resolves to its release, or null when another process holds it. */
  async lock(name: string): Promise<(() => Promise<void>) | null> {
    return this.bus ? this.bus.lock(name) : async () => {};
  }
}
