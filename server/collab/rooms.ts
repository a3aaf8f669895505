/**
 * One process's live rooms (docs/architecture.md, "Live collaboration"): per
 * (document, branch) a BranchRoom (branch-room.ts) with its outlines and
 * SectionRooms (section-room.ts), admitted through the upgrade (upgrade.ts,
 * the one authorize deciding), in step with other processes through the
 * fan-out (fan-out.ts). This file opens and forgets branch rooms and wires
 * them to what moves them:
 *
 * - every committed head move in this process (`onHeadMoved`) and every one
 *   another process announces: the branch's room follows it on the branch's
 *   line, after whatever draft operation is under way (a draft commit has
 *   already rebased its sections onto its own commit, so they stay as they
 *   are), then the move is announced to the other processes;
 * - every access change (`onAccessChanged`): each room is held and decided
 *   again.
 *
 * It is also what the live drafts service (live-drafts.ts) works through.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { DatabaseHandle } from "@/db/client";
import type { Authorizer, Credential } from "@/server/access/authorize";
import { type DomainError, isNotFound } from "@/server/core/errors";
import { onAccessChanged } from "@/server/store/access-cache";
import { type DraftKey, ensureDraft, type SectionKey, setDraftBase } from "@/server/store/drafts";
import { onHeadMoved } from "@/server/store/head-moves";
import { BranchQueue, branchKey } from "./branch-queue";
import { BranchRoom } from "./branch-room";
import type { CollabBus } from "./bus";
import { CLOSE_BRANCH_GONE, closeNow, type RoomAddress, type RoomConnection, resumeReading } from "./connection";
import { DraftAppends } from "./draft-appends";
import { DraftChanges } from "./draft-changes";
import { branchHead } from "./drafts-engine";
import { FanOut } from "./fan-out";
import type { DraftRooms, OpenSection } from "./live-drafts";
import { type RoomServices, RoomStats } from "./room-services";
import { compactFromStorage, storeUnconfirmedUpdates } from "./section-room";
import { SharedDecisions } from "./shared-values";
import { LiveUpgrade } from "./upgrade";

export type { RoomAddress };
export { parseRoomPath } from "./upgrade";

/** branchHead's answer for a branch that no longer exists. */
const GONE = Symbol("branch gone");

export interface CollabOptions {
  database: DatabaseHandle;
  /** Cross-process rooms (QUIRE_REDIS_URL); absent: this process's rooms work alone. */
  bus?: CollabBus;
  /** The one door (server/access/authorize.ts): admits upgrades and decides connections again. */
  authorize: Authorizer;
}

export class CollabRooms implements DraftRooms {
  /** Per branch, operations that must not interleave (opening sections, head moves, commits, discards). */
  readonly queue = new BranchQueue();
  /** Drafts whose content or connected people changed here (LiveDrafts.onDraftChanged). */
  readonly changes = new DraftChanges();
  readonly stats = new RoomStats();
  private readonly services: RoomServices;
  private readonly fanOut: FanOut;
  private readonly upgrades: LiveUpgrade;
  private readonly rooms = new Map<string, BranchRoom>();
  private readonly opening = new Map<string, Promise<BranchRoom>>();
  private readonly stops: Array<() => unknown> = [];
  /** Compactions under way (awaited on close, so none is cut off by the database closing). */
  private readonly compactions = new Set<Promise<void>>();
  private closing = false;
  private accessChangesHeard = 0;

  constructor(options: CollabOptions) {
    this.fanOut = new FanOut(options.bus);
    const { db } = options.database;
    this.services = {
      db,
      authorize: options.authorize,
      fanOut: this.fanOut,
      queue: this.queue,
      changes: this.changes,
      appends: new DraftAppends(db),
      stats: this.stats,
      decisions: new SharedDecisions(),
      compact: (key) => this.compact(key),
      accessChanges: () => this.accessChangesHeard,
    };
    this.upgrades = new LiveUpgrade(db, options.authorize, this.services.decisions, (connection, admittedHead) =>
      this.attach(connection, admittedHead),
    );
  }

  /** Updates read-only connections sent, dropped. */
  get droppedUpdates(): number {
    return this.stats.droppedUpdates;
  }

  get throttledConnections(): number {
    return this.stats.throttledConnections;
  }

  get durabilityWindows() {
    return this.stats.durabilityWindows;
  }

  async start(): Promise<void> {
    this.stops.push(onHeadMoved((move) => void this.followHead(move, { announce: true })));
    this.stops.push(
      onAccessChanged(() => {
        // Held at once (in the changing request, right after its commit), so nothing reaches a connection before it is decided
        // again; each room is released as soon as it is decided, the rooms side by side.
        this.accessChangesHeard += 1;
        if (this.closing) return;
        for (const room of [...this.rooms.values()]) void this.redecideHeld(room);
      }),
    );
    this.stops.push(
      await this.fanOut.start({
        headMoved: (key) => void this.followHead(key, { announce: false }),
        catchUp: () => void this.catchUpAll(),
        update: (key, update) => this.sectionOf(key)?.applyRemote(update),
        storeOrphaned: (updates) => storeUnconfirmedUpdates(this.services, updates),
        awareness: (key, update) => this.sectionOf(key)?.live.applyRemoteAwareness(update),
        openSection: (key) => this.sectionOf(key)?.live,
        settle: (documentId, branchName) => this.storedHere(documentId, branchName),
        refreshPresence: () => {
          for (const room of this.rooms.values()) void this.fanOut.sharePresence(room.key, room.users());
        },
      }),
    );
  }

  /** Hands an upgrade to the upgrade's decision (see upgrade.ts). */
  upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    credential: Credential | null,
    address: RoomAddress,
    refusal?: DomainError,
  ): Promise<void> {
    return this.upgrades.upgrade(request, socket, head, credential, address, refusal);
  }

  private sectionOf(key: SectionKey) {
    return this.rooms.get(branchKey(key))?.sections.get(key.sectionId);
  }

  /**
   * Takes a connection into its branch's room: one forgotten between being
   * found and taking it is opened anew, and a branch deleted meanwhile
   * closes the connection as its room's connections were closed.
   */
  private async attach(connection: RoomConnection, admittedHead: string): Promise<void> {
    try {
      for (;;) {
        const room = await this.openRoom(connection.address).catch((error: unknown): typeof GONE => {
          if (isNotFound(error)) return GONE;
          throw error;
        });
        if (room === GONE) return closeNow(connection, CLOSE_BRANCH_GONE, "branch deleted");
        if (await room.attach(connection, admittedHead)) return;
      }
    } finally {
      // Read from now on (it waited unread since its upgrade): what it sent meanwhile reaches its room, or, closed, it
      // completes the close handshake.
      resumeReading(connection);
    }
  }

  private async openRoom(key: DraftKey): Promise<BranchRoom> {
    const name = branchKey(key);
    const open = this.rooms.get(name);
    if (open) return open;
    let opening = this.opening.get(name);
    if (!opening) {
      opening = (async () => {
        const { db } = this.services;
        const head = await branchHead(db, key);
        const draft = await ensureDraft(db, key, head.commitId);
        if (draft.baseCommitId !== head.commitId) await setDraftBase(db, key, head.commitId);
        const room = new BranchRoom(this.services, { documentId: key.documentId, branchName: key.branchName }, head, (empty) => {
          if (this.rooms.get(name) === empty) this.rooms.delete(name);
        });
        this.rooms.set(name, room);
        return room;
      })().finally(() => this.opening.delete(name));
      this.opening.set(name, opening);
    }
    return opening;
  }

  /**
   * A branch head moved: the open room of that branch takes the new head in,
   * after every draft operation on the branch in this process. A move made
   * here is announced to the other processes when its turn on that line
   * comes: after a draft commit has rebased the stored drafts onto its
   * commit, so no other process applies the committed change to a draft that
   * already holds it (its rebase loses the compare-and-swap on the base, and
   * it takes the stored draft instead).
   */
  private async followHead(key: DraftKey, options: { announce: boolean }): Promise<void> {
    // The default branch's head decides what is hidden on every branch: the document's other rooms are decided again too.
    for (const other of this.rooms.values()) {
      if (other.key.documentId === key.documentId && other.key.branchName !== key.branchName && other.defaultBranch() === key.branchName)
        void this.redecideHeld(other);
    }
    const room = this.rooms.get(branchKey(key));
    const follow = async () => {
      // Announced before anything following it is published (Redis keeps one publisher's order): the other processes hold
      // their rooms before a change that depends on the move (a section hidden and changed in one commit) reaches them.
      if (options.announce) this.fanOut.announceHeadMove(key);
      // The draft's status is against the head: whoever watches it hears of the move (the sections' own changes follow).
      this.changes.changed(key);
      if (!room) return;
      const head = await branchHead(this.services.db, key).catch((error: unknown) => (isNotFound(error) ? GONE : null));
      // Another process deleted the branch (it announces the removal as a move).
      if (head === GONE) await this.closeRoom(room, key);
      else if (head) await room.follow(head);
    };
    try {
      // Held from the moment the move is known: a commit that hides a section and changes it sends nothing before the hiding is decided.
      await (room ? room.held(() => this.queue.run(key, follow)) : this.queue.run(key, follow));
    } catch (error) {
      console.error("[quire] following a head move failed", error);
    }
  }

  /** Holds a room's connections (at once) until each is decided again. */
  private async redecideHeld(room: BranchRoom): Promise<void> {
    try {
      await room.held(() => room.redecide());
    } catch (error) {
      console.error("[quire] collab access check failed", error);
    }
  }

  /** Every open section room of this process takes in what storage has (see the bus's "catch-up"). */
  private async catchUpAll(): Promise<void> {
    for (const room of [...this.rooms.values()]) for (const section of room.sections.values()) await section.catchUp();
  }

  private compact(key: SectionKey): Promise<void> {
    // The log is durable as it is; a compaction started while closing would outlive the database.
    if (this.closing) return Promise.resolve();
    const running = compactFromStorage(this.services, key);
    this.compactions.add(running);
    void running.finally(() => this.compactions.delete(running));
    return running;
  }

  // What the live drafts service asks (DraftRooms).

  async storedSoFar(documentId: string, branchName?: string): Promise<void> {
    await Promise.all([this.storedHere(documentId, branchName), this.fanOut.othersStored(documentId, branchName)]);
  }

  storedElsewhere(documentId: string, branchName?: string): Promise<void> {
    return this.fanOut.othersStored(documentId, branchName);
  }

  /** Resolves once what this process's open sections of the document (of one branch, or of every branch) applied is stored. */
  private async storedHere(documentId: string, branchName?: string): Promise<void> {
    const rooms = [...this.rooms.values()].filter(
      (room) => room.key.documentId === documentId && (branchName === undefined || room.key.branchName === branchName),
    );
    await Promise.all(rooms.flatMap((room) => [...room.sections.values()].map((section) => section.live.settled().catch(() => undefined))));
  }

  openSection(key: SectionKey): OpenSection | undefined {
    return this.sectionOf(key);
  }

  shareStored(key: SectionKey, update: Uint8Array): void {
    this.fanOut.publishStored(key, update);
  }

  async connectedUsers(documentId: string): Promise<Map<string, string[]>> {
    const everywhere = await this.fanOut.presence(documentId);
    if (everywhere) return everywhere;
    const byBranch = new Map<string, string[]>();
    for (const room of this.rooms.values()) if (room.key.documentId === documentId) byBranch.set(room.key.branchName, room.users());
    return byBranch;
  }

  async closeBranch(key: DraftKey): Promise<void> {
    const room = this.rooms.get(branchKey(key));
    if (room) await room.held(() => this.closeRoom(room, key));
    this.fanOut.announceHeadMove(key);
  }

  /** A deleted branch's room: every connection closed for good, its sections unloaded (what they stored is the caller's to drop). */
  private async closeRoom(room: BranchRoom, key: DraftKey): Promise<void> {
    const sections = [...room.sections.values()];
    room.sections.clear();
    for (const connection of room.connections()) closeNow(connection, CLOSE_BRANCH_GONE, "branch deleted");
    for (const section of sections) {
      for (const connection of section.connections) closeNow(connection, CLOSE_BRANCH_GONE, "branch deleted");
      await section.live.settled().catch(() => undefined);
      section.close();
    }
    room.forget();
    if (this.rooms.get(branchKey(key)) === room) this.rooms.delete(branchKey(key));
    void this.fanOut.sharePresence(key, []);
    this.changes.changed(key);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.changes.close();
    for (const stop of this.stops) await stop();
    this.upgrades.terminateAll();
    await Promise.all([...this.rooms.values()].map((room) => this.fanOut.sharePresence(room.key, [])));
    for (const room of this.rooms.values()) {
      for (const section of room.sections.values()) {
        await section.live.settled().catch(() => undefined);
        await section.storeUnconfirmed();
        section.close();
      }
    }
    this.rooms.clear();
    await this.queue.drained();
    await Promise.all([...this.compactions]);
    this.upgrades.close();
  }
}
