/**
 * One section's room: its live doc (live-doc.ts) loaded from the stored
 * draft, the connections editing it, and its draft in storage. Updates are
 * applied and broadcast on arrival and stored behind (the durability window
 * from arrival to stored is measured), and published to other processes on
 * arrival too (fan-out.ts);
 * the log is compacted every COMPACT_AFTER_UPDATES updates and when the room
 * empties. A committed change reaches the doc as the change between two
 * versions (`rebase`), stored with the new base by compare-and-swap, so of
 * several processes one computes it and the others take it from storage
 * (`catchUp`), which is also where a room turns when an update from another
 * process hangs on edits it never received.
 */
import * as Y from "yjs";
import { MAX_ROOM_PENDING_BYTES } from "@/server/core/limits";
import type { DocumentTree } from "@/server/core/document-model";
import { compactSectionDraft, findSectionDraft, type SectionKey } from "@/server/store/drafts";
import type { LiveSection } from "./codec";
import { CLOSE_INTERNAL, CLOSE_SECTION_GONE, type RoomConnection } from "./connection";
import { blobHashIn, docFromStored, loadOrCreateSectionDraft, rebaseSection } from "./drafts-engine";
import { LiveDoc, type LiveDocHooks, type PendingUpdate } from "./live-doc";
import type { UnconfirmedUpdate } from "./fan-out";
import type { RoomServices } from "./room-services";

/** Compaction folds a section's log into its state once this many updates piled up (and when its room empties). */
const COMPACT_AFTER_UPDATES = 500;
/** A catch-up that finds storage without the edits an update hangs on looks again this often, this many times. */
const CATCH_UP_RETRY_MS = 500;
const CATCH_UP_RETRIES = 10;

export class SectionRoom implements LiveDocHooks {
  readonly live: LiveDoc<RoomConnection>;
  /** The committed version the draft is based on, as this process last stored or saw it. */
  baseBlobHash: string | null;
  private updatesSinceCompaction: number;
  /** A catch-up from storage is under way (one at a time is enough). */
  private catchingUp = false;
  /** Catch-ups in a row that left the doc hanging on edits storage did not have yet. */
  private catchUpRetries = 0;

  private constructor(
    private readonly services: RoomServices,
    readonly key: SectionKey,
    stored: { baseBlobHash: string | null; state: Uint8Array; updates: Array<{ update: Uint8Array }> },
    private readonly owner: SectionOwner,
  ) {
    this.baseBlobHash = stored.baseBlobHash;
    this.updatesSinceCompaction = stored.updates.length;
    // The room is its doc's hooks (methods, not a literal of closures: a few hundred bytes less per room, see RoomConnection).
    this.live = new LiveDoc<RoomConnection>([stored.state, ...stored.updates.map((u) => u.update)], this, {
      sectionRules: true,
      maxPendingBytes: MAX_ROOM_PENDING_BYTES,
    });
  }

  /**
   * Loads a section's stored draft (created from its version in `tree` if it
   * has none) into a live doc, with what other processes published while it
   * loaded. Its owner hears when its storing failed and it closed (and forgets it).
   */
  static async open(services: RoomServices, key: SectionKey, tree: DocumentTree, owner: SectionOwner): Promise<SectionRoom> {
    const { loaded, arrived } = await services.fanOut.whileLoading(key, () => loadOrCreateSectionDraft(services.db, key, tree));
    const room = new SectionRoom(services, key, loaded, owner);
    for (const update of arrived) room.live.applyRemote(update);
    // Answers come in a later turn of the event loop, when the owner has recorded the room.
    services.fanOut.opened(key, room.live.doc);
    return room;
  }

  /** Drops the room's connections and doc; the other processes holding the section stop sending its traffic here. */
  close(): void {
    this.live.destroy();
    this.services.fanOut.closed(this.key);
  }

  /** The connections editing here (those of its doc: one collection per room, not two). */
  get connections(): RoomConnection[] {
    return this.live.connectionList();
  }

  // LiveDocHooks.

  /** To other processes on arrival, beside the store (fan-out.ts says how none is lost); confirmed once stored. */
  queued(pending: PendingUpdate): void {
    this.services.fanOut.publishArrived(this.key, pending);
  }

  stored(updates: readonly PendingUpdate[]): void {
    this.services.fanOut.stored(this.key, updates);
  }

  /** Whatever changes the section's content (a connection, another process, the server) changes the draft. */
  changed(): void {
    this.services.changes.changed(this.key);
  }

  awarenessChanged(update: Uint8Array): void {
    this.services.fanOut.publishAwareness(this.key, update);
  }

  /** Storing failed: clients reconnect to the stored draft and hand over whatever it lacks, the unstored edits included. */
  failed(error: unknown): void {
    console.error("[quire] storing a draft update failed; closing the section's room", error);
    for (const connection of this.connections) connection.socket.close(CLOSE_INTERNAL, "storage failed");
    this.close();
    this.owner.sectionFailed(this);
  }

  async store(updates: readonly PendingUpdate[]): Promise<void> {
    await this.services.appends.append(
      updates.map((u) => ({ ...this.key, update: u.update, authorId: u.authorId, agent: u.origin === "server" ? null : u.origin.agent })),
    );
    const storedAt = performance.now();
    for (const u of updates) this.services.stats.durabilityWindows.record(storedAt - u.receivedAt);
    this.updatesSinceCompaction += updates.length;
    if (this.updatesSinceCompaction >= COMPACT_AFTER_UPDATES) {
      this.updatesSinceCompaction = 0;
      void this.services.compact(this.key);
    }
  }

  hurry(): void {
    this.services.appends.hurry();
  }

  /** Whether updates were stored since the last compaction this room started (its unloading compacts them). */
  get hasUncompacted(): boolean {
    return this.updatesSinceCompaction > 0;
  }

  /**
   * Moves the draft from the committed version `from` to `next`: the change
   * between them (or from `fromContent`, see rebaseSection) is stored with the
   * new base unless another process moved the base first, and applied here
   * (broadcast and published). Returns the stored change, or null.
   */
  async rebase(from: string | null, next: string, fromContent?: LiveSection): Promise<Uint8Array | null> {
    await this.live.settled();
    const update = await rebaseSection(this.services.db, this.key, this.live.doc, from, next, fromContent);
    this.baseBlobHash = next;
    if (update) this.live.applyStored(update);
    return update;
  }

  /** Applies the change from the section's base to its version in `tree` (the branch head) into the live draft. */
  async bringToHead(tree: DocumentTree): Promise<void> {
    const next = blobHashIn(tree, this.key.sectionId);
    if (next === this.baseBlobHash) return;
    if (next === null) {
      // The section left the branch: its editors are told, its draft stays until commit or discard settles it.
      for (const connection of this.connections) connection.socket.close(CLOSE_SECTION_GONE, "section removed");
      return;
    }
    // Null: another process stored the change first; it is taken from storage.
    if (!(await this.rebase(this.baseBlobHash, next))) await this.catchUp();
  }

  /**
   * Takes in what storage has of the draft: another process brought it to a
   * head first (its change is stored, not computed here), or stored an update
   * whose Redis message never came (a process killed between storing and
   * publishing). Yjs takes in only what the doc lacks.
   */
  async catchUp(): Promise<void> {
    if (this.catchingUp) return;
    this.catchingUp = true;
    try {
      const stored = await findSectionDraft(this.services.db, this.key);
      if (!stored) return;
      this.live.applyRemote(stored.state);
      for (const { update } of stored.updates) this.live.applyRemote(update);
      // Updates are published before they are stored: what this one hangs on may be stored a moment later.
      if (!this.live.lacksEdits) this.catchUpRetries = 0;
      else if (this.catchUpRetries < CATCH_UP_RETRIES) {
        this.catchUpRetries += 1;
        setTimeout(() => void this.catchUp(), CATCH_UP_RETRY_MS).unref();
      }
    } catch (error) {
      console.error("[quire] catching a room up from storage failed", error);
    } finally {
      this.catchingUp = false;
    }
  }

  /**
   * Stores what other processes published for this section and have not said
   * they stored, as the room goes away (unloading, or its process stopping):
   * a sender that died inside its durability window leaves its update to the
   * rooms that applied it, and one going away before ORPHAN_AFTER_MS passed
   * took it with it (the live fuzzer's seed 464610: both processes stopped
   * within 15 s of a kill). A second copy in the log is harmless. They are
   * taken when this is called, so a caller that closes the room right after
   * leaves none behind; stored after.
   */
  storeUnconfirmed(): Promise<void> {
    return storeUnconfirmedUpdates(this.services, this.services.fanOut.takeUnconfirmed(this.key)).catch((error: unknown) =>
      console.error("[quire] storing updates another process never confirmed failed", error),
    );
  }

  /** An update another process stored: applied here; one that hangs on edits this room never received sends it to storage. */
  applyRemote(update: Uint8Array): void {
    this.live.applyRemote(update);
    if (this.live.lacksEdits) void this.catchUp();
  }
}

/** Who holds a section room: told when its storing failed and it closed (a method, not a closure per room). */
export interface SectionOwner {
  sectionFailed(room: SectionRoom): void;
}

/** Stores updates other processes published and never said they stored, with their authors, through the rooms' line. */
export async function storeUnconfirmedUpdates(
  services: Pick<RoomServices, "appends">,
  updates: readonly UnconfirmedUpdate[],
): Promise<void> {
  if (updates.length === 0) return;
  await services.appends.append(updates.map((u) => ({ ...u.key, update: u.update, authorId: u.authorId })));
}

/**
 * Folds a section's log into its compacted state, from storage (so updates
 * other processes stored are included). One process at a time: the bus lock
 * with Redis, and in any case the compare-and-swap on the log position.
 */
export async function compactFromStorage(services: Pick<RoomServices, "db" | "fanOut">, key: SectionKey): Promise<void> {
  const release = await services.fanOut.lock(`compact:${key.documentId}\u0000${key.branchName}:${key.sectionId}`);
  if (!release) return;
  try {
    const stored = await findSectionDraft(services.db, key);
    const last = stored?.updates.at(-1);
    if (!stored || !last) return;
    const doc = docFromStored(stored);
    await compactSectionDraft(services.db, key, Y.encodeStateAsUpdate(doc), last.id);
    doc.destroy();
  } catch (error) {
    console.error("[quire] draft compaction failed", error);
  } finally {
    await release();
  }
}
