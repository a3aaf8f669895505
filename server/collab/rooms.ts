/**
 * Live rooms: per (document, branch) an outline room and one room per section
 * (see README, "Live collaboration", and docs/architecture.md). Connections
 * are admitted by the access policies and held to the live face's limits
 * (message size, rate, the section rules in live-rules.ts); updates are
 * broadcast on arrival and stored behind; committed head moves are applied
 * into open drafts; access changes and head moves hold a room's sockets until
 * every connection is decided again; storage is what a room falls back on
 * when another process's update never reached it.
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import * as Y from "yjs";
import { type WebSocket, WebSocketServer } from "ws";
import type { Database, DatabaseHandle } from "@/db/client";
import type { Actor } from "@/server/actions/context";
import { accessWithGrant, type DocumentAccess, sectionRules, subjectOf, visibleEntries } from "@/server/access/documents";
import { hashSecretToken } from "@/server/auth/secret-tokens";
import { DomainError, ERROR_FACES, isDomainError } from "@/server/core/errors";
import { atLeast } from "@/server/policies/access";
import { findLiveShareLink } from "@/server/store/access";
import { onAccessChanged } from "@/server/store/access-cache";
import { findBranch, findDocumentWithGrants, getDocument } from "@/server/store/documents";
import {
  appendDraftUpdates,
  compactSectionDraft,
  type DraftKey,
  ensureDraft,
  findSectionDraft,
  type SectionKey,
  setDraftBase,
} from "@/server/store/drafts";
import { onHeadMoved } from "@/server/store/head-moves";
import { loadSections } from "@/server/store/objects";
import { userIdentities } from "@/server/store/users";
import { storageKeysVisibleIn } from "@/server/access/sections";
import { MAX_LIVE_MESSAGE_BYTES, MAX_LIVE_MESSAGES_PER_SECOND, MAX_ROOM_PENDING_BYTES } from "@/server/core/limits";
import { applyOutline } from "./codec";
import { BranchQueue, branchKey } from "./branch-queue";
import { DraftChanges } from "./draft-changes";
import { type BranchHead, blobHashIn, branchHead, docFromStored, loadOrCreateSectionDraft, rebaseSection } from "./drafts-engine";
import type { DraftRooms } from "./live-drafts";
import { LiveDoc, type LiveConnection, type PendingUpdate } from "./live-doc";
import type { PresenceIdentity } from "./presence";
import { type CollabBus, PRESENCE_TTL_MS } from "./bus";

/** Who is asking to connect, as their credential says; re-resolved whenever access changes. */
export type Credential = { kind: "person"; userId: string } | { kind: "token"; token: string } | { kind: "share"; token: string };

export interface RoomAddress extends DraftKey {
  /** null: the branch's outline room. */
  sectionId: string | null;
}

/** Compaction folds a section's log into its state once this many updates piled up (and when its room empties). */
const COMPACT_AFTER_UPDATES = 500;
/** WebSocket close codes (4000-4999 are the application's). */
const CLOSE_CONTENT_REFUSED = 4400;
const CLOSE_ACCESS_LOST = 4403;
const CLOSE_SECTION_GONE = 4404;
const CLOSE_INTERNAL = 4500;
/** A WebSocket close reason is at most 123 bytes of UTF-8. */
const MAX_CLOSE_REASON_BYTES = 123;

interface RoomConnection extends LiveConnection {
  socket: WebSocket;
  credential: Credential;
  actor: Actor | null;
  access: DocumentAccess;
  address: RoomAddress;
  /** Storage keys this principal sees in the document: the ones its live edits may put into a block. */
  usableKeys: ReadonlySet<string>;
  /**
   * Decisions on this connection's access under way (an access change, a
   * head move): while any is, nothing is sent to it (what would be is kept)
   * and nothing read from it, so no byte of a change crosses before the
   * decision it depends on.
   */
  holds: number;
  heldMessages: Uint8Array[];
  /** Reasons its messages are not being read (holds, the doc's backpressure, its rate): read again when none is left. */
  readPauses: number;
  /** The current second of its messages (performance.now()) and how many it sent in it. */
  secondStartedAt: number;
  messagesThisSecond: number;
}

interface SectionRoom {
  live: LiveDoc;
  /** The committed version the draft is based on, as this process last stored or saw it. */
  baseBlobHash: string | null;
  connections: Set<RoomConnection>;
  updatesSinceCompaction: number;
  /** A catch-up from storage is under way (one at a time is enough). */
  catchingUp: boolean;
}

interface BranchRoom {
  key: DraftKey;
  head: BranchHead;
  outlines: Map<RoomConnection, LiveDoc>;
  sections: Map<string, SectionRoom>;
}

export interface CollabOptions {
  database: DatabaseHandle;
  clock: () => Date;
  /** Cross-process rooms (QUIRE_REDIS_URL); absent: this process's rooms work alone. */
  bus?: CollabBus;
  /** Resolves an API token to its agent (rate-limited by the caller). */
  actorForToken(token: string): Promise<Actor | null>;
  actorForUser(userId: string): Promise<Actor | null>;
  /** A share link that does not work was tried at the upgrade (counts against the client address, like the share page). */
  shareLinkFailed?(request: IncomingMessage): Promise<void>;
}

/** One process's live rooms. */
export class CollabRooms implements DraftRooms {
  private readonly db: Database;
  private readonly rooms = new Map<string, BranchRoom>();
  private readonly opening = new Map<string, Promise<BranchRoom>>();
  /** Per branch, operations that must not interleave (opening sections, head moves, commits, discards). */
  readonly queue = new BranchQueue();
  /** Drafts whose content or connected people changed here (LiveDrafts.onDraftChanged). */
  readonly changes = new DraftChanges();
  // A larger message closes its socket with 1009 (Message Too Big), before it is buffered whole.
  private readonly sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_LIVE_MESSAGE_BYTES });
  private readonly stops: Array<() => unknown> = [];
  /** Compactions under way (awaited on close, so none is cut off by the database closing). */
  private readonly compactions = new Set<Promise<void>>();
  private closing = false;
  /** Updates from other processes for sections this process is loading, by section. */
  private readonly arrivedWhileLoading = new Map<string, Uint8Array[]>();
  /** Updates read-only connections sent, dropped (for the operator's and the tests' eyes). */
  droppedUpdates = 0;
  /** How many times a connection was held back for sending too many messages in a second. */
  throttledConnections = 0;
  /** How long stored updates were applied and broadcast but not yet stored (ms): the window a kill -9 could lose them in, were every client holding them gone too. */
  readonly durabilityWindows = new RecentDurations(10_000);

  constructor(private readonly options: CollabOptions) {
    this.db = options.database.db;
  }

  async start(): Promise<void> {
    this.stops.push(
      onHeadMoved((move) => {
        // A draft commit brings its own rooms up to date (its content is already in them) and announces itself once settled.
        if (move.kind === "draft-commit") return;
        void this.followHead({ documentId: move.documentId, branchName: move.branchName });
        this.announceHeadMove({ documentId: move.documentId, branchName: move.branchName });
      }),
    );
    this.stops.push(
      onAccessChanged(() => {
        // Held at once (in the changing request, right after its commit), so nothing reaches a connection before it is decided
        // again; each room is released as soon as it is decided, the rooms side by side.
        if (this.closing) return;
        for (const room of [...this.rooms.values()]) void this.redecideHeld(room);
      }),
    );
    if (this.options.bus) {
      const refresh = setInterval(() => {
        for (const room of this.rooms.values()) this.sharePresence(room);
      }, PRESENCE_TTL_MS / 3);
      refresh.unref();
      this.stops.push(() => clearInterval(refresh));
      const subscribed = await this.options.bus.subscribe((message) => {
        // Another process moved a head: the open room of that branch, if any, follows it.
        if (message.kind === "head-moved") return void this.followHead(message);
        if (message.kind === "catch-up") return void this.catchUpAll();
        const room = this.rooms.get(roomKey(message));
        const section = room?.sections.get(message.sectionId);
        if (!section) {
          // A section being loaded keeps what arrives meanwhile: it may be newer than what the load read.
          if (message.kind === "update") this.arrivedWhileLoading.get(sectionName(message))?.push(message.payload);
          return;
        }
        if (message.kind === "awareness") return section.live.applyRemoteAwareness(message.payload);
        section.live.applyRemote(message.payload);
        if (section.live.lacksEdits) void this.catchUpFromStorage(message, section);
      });
      this.stops.push(subscribed);
      // This process's previous run may have stored updates it never published: the other processes' rooms take them from storage.
      void this.options.bus
        .publish({ documentId: "", branchName: "", sectionId: "", kind: "catch-up", payload: new Uint8Array() })
        .catch((error: unknown) => console.error("[quire] catch-up announcement failed", error));
    }
  }

  /**
   * Tells the other processes (through Redis) that a branch head moved here,
   * so their open rooms of that branch follow it. Without Redis each process
   * works alone and there is no one to tell.
   */
  announceHeadMove(key: DraftKey): void {
    void this.options.bus
      ?.publish({ ...key, sectionId: "", kind: "head-moved", payload: new Uint8Array() })
      .catch((error: unknown) => console.error("[quire] head-move announcement failed", error));
  }

  /** Users connected to a document's rooms, per branch: in every process with Redis, else in this one. */
  async connectedUsers(documentId: string): Promise<Map<string, string[]>> {
    if (this.options.bus) return this.options.bus.presence(documentId);
    const byBranch = new Map<string, string[]>();
    for (const room of this.rooms.values()) if (room.key.documentId === documentId) byBranch.set(room.key.branchName, this.usersIn(room));
    return byBranch;
  }

  private usersIn(room: BranchRoom): string[] {
    return [...new Set(this.connectionsOf(room).flatMap((c) => (c.actor ? [c.actor.userId] : [])))].sort();
  }

  /** Tells the other processes (through Redis) who this process has connected to a branch. */
  private sharePresence(room: BranchRoom): void {
    void this.options.bus
      ?.setPresence(room.key.documentId, room.key.branchName, this.usersIn(room))
      .catch((error: unknown) => console.error("[quire] presence update failed", error));
  }

  /**
   * Decides an upgrade: resolves the credential, opens the document under the
   * access policies, and either refuses with an HTTP status (before any Yjs
   * byte) or hands the socket to the room.
   */
  async upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    credential: Credential | null,
    address: RoomAddress,
    refusal?: DomainError,
  ): Promise<void> {
    let admitted: { actor: Actor | null; access: DocumentAccess };
    let presence: PresenceIdentity;
    try {
      if (refusal) throw refusal;
      if (!credential) throw new DomainError("UNAUTHENTICATED", "Sign in, or pass an API token as `token` or a share link as `share`.");
      admitted = await this.admit(credential, address);
      presence = await this.presenceOf(admitted.actor);
    } catch (error) {
      if (credential?.kind === "share" && isDomainError(error) && error.code === "UNAUTHENTICATED") {
        await this.options.shareLinkFailed?.(request).catch(() => undefined);
      }
      refuseUpgrade(socket, isDomainError(error) ? error : new DomainError("INTERNAL", "Internal error."));
      if (!isDomainError(error)) console.error("[quire] collab upgrade failed", error);
      return;
    }
    this.sockets.handleUpgrade(request, socket, head, (ws) => {
      // Messages wait in the socket until the room is open (attach reads them).
      ws.pause();
      // ws closes the socket itself on a protocol error (1009 for a message past maxPayload, 1002 for a bad frame) and then
      // emits the error: without a listener, that emit would throw out of the server.
      ws.on("error", () => {});
      const connection: RoomConnection = {
        socket: ws,
        credential: credential!,
        actor: admitted.actor,
        access: admitted.access,
        address,
        authorId: admitted.actor?.userId ?? null,
        readOnly: true,
        droppedUpdates: 0,
        presence,
        usableKeys: new Set(),
        typist: { userId: admitted.actor?.userId ?? null, mayUseKey: (key) => connection.usableKeys.has(key) },
        holds: 0,
        heldMessages: [],
        readPauses: 1,
        secondStartedAt: 0,
        messagesThisSecond: 0,
        send: (message) => {
          if (connection.holds > 0) connection.heldMessages.push(message);
          else if (ws.readyState === ws.OPEN) ws.send(message);
        },
        // The repair was sent before this: the client converges, then hears why (and what it sent meanwhile is not taken in).
        refused: (reason) => closeNow(connection, CLOSE_CONTENT_REFUSED, closeReason(`content refused: ${reason}`)),
        pause: () => pauseReading(connection),
        resume: () => resumeReading(connection),
      };
      void this.attach(connection).catch((error: unknown) => {
        console.error("[quire] collab room failed to open", error);
        ws.close(CLOSE_INTERNAL, "room failed to open");
      });
    });
  }

  /** Who a connection's presence shows: the account's name (an agent's marked as such), or a guest for a share link. */
  private async presenceOf(actor: Actor | null): Promise<PresenceIdentity> {
    if (!actor) return { userId: null, name: "Guest (share link)" };
    const name = (await userIdentities(this.db, [actor.userId])).get(actor.userId)?.name ?? "";
    return { userId: actor.userId, name: actor.principal === "agent" ? `${name} (agent)` : name };
  }

  /**
   * A connection sending more than MAX_LIVE_MESSAGES_PER_SECOND messages is
   * not read again until its second is over: what it sends waits in TCP and
   * is taken in later, in order (nothing is dropped), and one flooding client
   * cannot take the process's time from the others.
   */
  private throttle(connection: RoomConnection): void {
    const now = performance.now();
    if (now - connection.secondStartedAt >= 1_000) {
      connection.secondStartedAt = now;
      connection.messagesThisSecond = 0;
    }
    connection.messagesThisSecond += 1;
    if (connection.messagesThisSecond !== MAX_LIVE_MESSAGES_PER_SECOND) return;
    this.throttledConnections += 1;
    pauseReading(connection);
    setTimeout(() => resumeReading(connection), 1_000 - (now - connection.secondStartedAt)).unref();
  }

  /** Holds every connection of a room (see RoomConnection.holds); returns them, for `release`. */
  private hold(room: BranchRoom): RoomConnection[] {
    const connections = this.connectionsOf(room);
    for (const connection of connections) {
      if (connection.holds === 0) pauseReading(connection);
      connection.holds += 1;
    }
    return connections;
  }

  /** Ends holds: a connection no decision holds any more gets what was kept for it (if it is still open) and is read again. */
  private release(connections: readonly RoomConnection[]): void {
    for (const connection of connections) {
      connection.holds -= 1;
      if (connection.holds > 0) continue;
      const kept = connection.heldMessages;
      connection.heldMessages = [];
      for (const message of kept) connection.send(message);
      resumeReading(connection);
    }
  }

  /** The principal's access, checked to at least read the document, branch and (for a section room) the section. */
  private async admit(credential: Credential, address: RoomAddress): Promise<{ actor: Actor | null; access: DocumentAccess }> {
    const { actor, access } = await this.resolveAccess(credential, address.documentId);
    const branch = await findBranch(this.db, address.documentId, address.branchName);
    if (!branch) throw new DomainError("NOT_FOUND", `No branch ${JSON.stringify(address.branchName)} in this document.`);
    if (address.sectionId) {
      const head = await branchHead(this.db, address);
      if (!(await this.visibleSectionIds(access, address.branchName, head)).includes(address.sectionId)) {
        throw new DomainError("NOT_FOUND", `No section ${address.sectionId} in this document on this branch.`);
      }
    }
    return { actor, access };
  }

  private async resolveAccess(credential: Credential, documentId: string): Promise<{ actor: Actor | null; access: DocumentAccess }> {
    const missing = () => new DomainError("NOT_FOUND", `No document ${documentId}.`);
    if (credential.kind === "share") {
      const link = await findLiveShareLink(this.db, hashSecretToken(credential.token), this.options.clock());
      if (!link || link.documentId !== documentId)
        throw new DomainError("UNAUTHENTICATED", "This share link does not work for this document.");
      const document = await getDocument(this.db, link.workspaceId, link.documentId);
      // A share visitor has no account: read only, whatever the link grants (editing needs signing in).
      return { actor: null, access: accessWithGrant(document, { kind: "share", permission: "read" }, null) };
    }
    const actor =
      credential.kind === "token" ? await this.options.actorForToken(credential.token) : await this.options.actorForUser(credential.userId);
    if (!actor) throw new DomainError("UNAUTHENTICATED", "The credential is not valid (any more).");
    const found = await findDocumentWithGrants(this.db, documentId, [actor.userId]);
    if (!found || found.document.workspaceId !== actor.workspaceId) throw missing();
    const access = accessWithGrant(found.document, subjectOf(actor), found.grants.get(actor.userId) ?? null);
    if (access.permission === "none") throw missing();
    return { actor, access };
  }

  /** The sections a principal may see on a branch head, in order (the default branch's hiding applies to every branch). */
  private async visibleSectionIds(access: DocumentAccess, branchName: string, head: BranchHead): Promise<string[]> {
    const rules = await sectionRules(this.db, access, branchName);
    const entries = await visibleEntries(rules, head.tree, (hashes) => loadSections(this.db, hashes));
    return entries.map((e) => e.sectionId);
  }

  private async canEditSection(access: DocumentAccess, branchName: string, head: BranchHead, sectionId: string): Promise<boolean> {
    const blobHash = blobHashIn(head.tree, sectionId);
    if (!blobHash) return false;
    const version = (await loadSections(this.db, [blobHash])).get(blobHash)!;
    const rules = await sectionRules(this.db, access, branchName);
    return atLeast(rules.permission(sectionId, version), "edit") && !head.tree.deleted;
  }

  private async attach(connection: RoomConnection): Promise<void> {
    const { address } = connection;
    const ws = connection.socket;
    let live: LiveDoc;
    const room = await this.openRoom(address);
    if (address.sectionId) {
      const sectionId = address.sectionId;
      const section = await this.serial(room.key, () => this.openSection(room, sectionId));
      await this.decideSectionConnection(connection, room.head, sectionId);
      section.connections.add(connection);
      live = section.live;
    } else {
      // The outline is the server's: each connection has its own, listing only what it may see.
      live = new LiveDoc([], { store: async () => {} });
      applyOutline(live.doc, await this.visibleSectionIds(connection.access, address.branchName, room.head));
      room.outlines.set(connection, live);
    }
    live.connect(connection);
    this.sharePresence(room);
    this.changes.changed(room.key);
    ws.on("message", (data: Buffer) => {
      this.throttle(connection);
      try {
        live.receive(connection, new Uint8Array(data));
      } catch {
        ws.close(1003, "malformed message");
      }
    });
    if (ws.readyState !== ws.OPEN) this.detach(room, connection, live);
    else ws.on("close", () => this.detach(room, connection, live));
    // Read what waited in the socket while the room opened.
    resumeReading(connection);
  }

  /** What a section connection may do now: edit (or only read), and which storage keys its edits may use. */
  private async decideSectionConnection(
    connection: RoomConnection,
    head: BranchHead,
    sectionId: string,
    keysVisible: (access: DocumentAccess) => Promise<ReadonlySet<string>> = (access) =>
      this.keysVisibleTo(access, connection.address.branchName, head),
  ): Promise<void> {
    connection.readOnly = !(await this.canEditSection(connection.access, connection.address.branchName, head, sectionId));
    if (!connection.readOnly) connection.usableKeys = await keysVisible(connection.access);
  }

  /** The storage keys a principal sees in the document on a branch head (those its live edits may put into a block). */
  private async keysVisibleTo(access: DocumentAccess, branchName: string, head: BranchHead): Promise<ReadonlySet<string>> {
    return storageKeysVisibleIn(await sectionRules(this.db, access, branchName), head.tree, (hashes) => loadSections(this.db, hashes));
  }

  private detach(room: BranchRoom, connection: RoomConnection, live: LiveDoc): void {
    live.disconnect(connection);
    // Counted once the connection is out of the room's sets (below), so the list no longer holds it.
    queueMicrotask(() => this.sharePresence(room));
    this.changes.changed(room.key);
    this.droppedUpdates += connection.droppedUpdates;
    connection.droppedUpdates = 0;
    const sectionId = connection.address.sectionId;
    if (sectionId) {
      const section = room.sections.get(sectionId);
      section?.connections.delete(connection);
      if (section && section.connections.size === 0) void this.unloadSection(room, sectionId, section);
    } else {
      room.outlines.delete(connection);
      live.destroy();
    }
    this.forgetIfEmpty(room);
  }

  /** Drops an empty room from the open ones (unless a newer room for the branch took its place). */
  private forgetIfEmpty(room: BranchRoom): void {
    const name = roomKey(room.key);
    if (room.outlines.size === 0 && room.sections.size === 0 && this.rooms.get(name) === room) this.rooms.delete(name);
  }

  /** Unloads a section whose last connection left, once every update it received is stored (nothing pending is lost). */
  private async unloadSection(room: BranchRoom, sectionId: string, section: SectionRoom): Promise<void> {
    await this.serial(room.key, async () => {
      await section.live.settled().catch(() => undefined);
      if (section.connections.size > 0 || room.sections.get(sectionId) !== section) return;
      room.sections.delete(sectionId);
      section.live.destroy();
      this.forgetIfEmpty(room);
      if (section.updatesSinceCompaction > 0) await this.compact({ ...room.key, sectionId });
    });
  }

  private async openRoom(key: DraftKey): Promise<BranchRoom> {
    const name = roomKey(key);
    const open = this.rooms.get(name);
    if (open) return open;
    let opening = this.opening.get(name);
    if (!opening) {
      opening = (async () => {
        const head = await branchHead(this.db, key);
        const draft = await ensureDraft(this.db, key, head.commitId);
        if (draft.baseCommitId !== head.commitId) await setDraftBase(this.db, key, head.commitId);
        const room: BranchRoom = { key, head, outlines: new Map(), sections: new Map() };
        this.rooms.set(name, room);
        return room;
      })().finally(() => this.opening.delete(name));
      this.opening.set(name, opening);
    }
    return opening;
  }

  /** Loads a section's draft into a live doc, bringing it up to the branch head first if it was based on an older one. */
  private async openSection(room: BranchRoom, sectionId: string): Promise<SectionRoom> {
    const open = room.sections.get(sectionId);
    if (open) return open;
    const key: SectionKey = { ...room.key, sectionId };
    const arrived: Uint8Array[] = [];
    this.arrivedWhileLoading.set(sectionName(key), arrived);
    const stored = await loadOrCreateSectionDraft(this.db, key, room.head.tree).finally(() =>
      this.arrivedWhileLoading.delete(sectionName(key)),
    );
    const section: SectionRoom = {
      live: new LiveDoc(
        [stored.state, ...stored.updates.map((u) => u.update)],
        {
          store: (updates) => this.store(key, section, updates),
          stored: (updates) => this.publish(key, updates),
          awarenessChanged: (update) => void this.options.bus?.publish({ ...key, kind: "awareness", payload: update }),
          failed: (error) => {
            // Clients reconnect to the stored draft and hand over whatever it lacks, the unstored edits included.
            console.error("[quire] storing a draft update failed; closing the section's room", error);
            if (room.sections.get(sectionId) === section) room.sections.delete(sectionId);
            for (const connection of section.connections) connection.socket.close(CLOSE_INTERNAL, "storage failed");
            section.live.destroy();
            this.forgetIfEmpty(room);
          },
        },
        { sectionRules: true, maxPendingBytes: MAX_ROOM_PENDING_BYTES },
      ),
      baseBlobHash: stored.baseBlobHash,
      connections: new Set(),
      updatesSinceCompaction: stored.updates.length,
      catchingUp: false,
    };
    room.sections.set(sectionId, section);
    // Whatever changes the section's content (a connection, another process, the server) changes the draft.
    section.live.doc.on("update", () => this.changes.changed(room.key));
    for (const update of arrived) section.live.applyRemote(update);
    await this.bringSectionToHead(room, sectionId, section);
    return section;
  }

  private async store(key: SectionKey, section: SectionRoom, updates: readonly PendingUpdate[]): Promise<void> {
    await appendDraftUpdates(
      this.db,
      updates.map((u) => ({ ...key, update: u.update, authorId: u.authorId })),
    );
    const storedAt = performance.now();
    for (const u of updates) this.durabilityWindows.record(storedAt - u.receivedAt);
    section.updatesSinceCompaction += updates.length;
    if (section.updatesSinceCompaction >= COMPACT_AFTER_UPDATES) {
      section.updatesSinceCompaction = 0;
      void this.compact(key);
    }
  }

  private publish(key: SectionKey, updates: readonly PendingUpdate[]): void {
    for (const u of updates) this.shareStored(key, u.update);
  }

  /**
   * Tells the other processes (through Redis) of an update stored in a
   * section's draft, so their open rooms of it apply it: one this process
   * stored without a room of its own (a commit or discard rewriting a draft
   * another process has open).
   */
  shareStored(key: SectionKey, update: Uint8Array): void {
    void this.options.bus
      ?.publish({ ...key, kind: "update", payload: update })
      .catch((error: unknown) => console.error("[quire] draft update announcement failed", error));
  }

  /**
   * Folds a section's log into its compacted state, from storage (so updates
   * other processes stored are included). One process at a time: the bus
   * lock with Redis, and in any case the compare-and-swap on the log position.
   */
  compact(key: SectionKey): Promise<void> {
    // The log is durable as it is; a compaction started while closing would outlive the database.
    if (this.closing) return Promise.resolve();
    const running = this.compactSection(key);
    this.compactions.add(running);
    void running.finally(() => this.compactions.delete(running));
    return running;
  }

  private async compactSection(key: SectionKey): Promise<void> {
    const release = this.options.bus ? await this.options.bus.lock(`compact:${roomKey(key)}:${key.sectionId}`) : () => {};
    if (!release) return;
    try {
      const stored = await findSectionDraft(this.db, key);
      const last = stored?.updates.at(-1);
      if (!stored || !last) return;
      const doc = docFromStored(stored);
      await compactSectionDraft(this.db, key, Y.encodeStateAsUpdate(doc), last.id);
      doc.destroy();
    } catch (error) {
      console.error("[quire] draft compaction failed", error);
    } finally {
      await release();
    }
  }

  /** Applies the change from the section's base to its version at the room's head into the live draft. */
  private async bringSectionToHead(room: BranchRoom, sectionId: string, section: SectionRoom): Promise<void> {
    const next = blobHashIn(room.head.tree, sectionId);
    if (next === section.baseBlobHash) return;
    if (next === null) {
      // The section left the branch: its editors are told, its draft stays until commit or discard settles it.
      for (const connection of section.connections) connection.socket.close(CLOSE_SECTION_GONE, "section removed");
      return;
    }
    await section.live.settled();
    const key: SectionKey = { ...room.key, sectionId };
    const update = await rebaseSection(this.db, key, section.live.doc, section.baseBlobHash, next);
    section.baseBlobHash = next;
    if (update) section.live.applyStored(update);
    else await this.catchUpFromStorage(key, section);
  }

  /**
   * Another process brought the stored draft to the head first (its change
   * is stored, not computed here): what it stored is taken in from storage.
   * Its Redis message brings the same, but a process killed between storing
   * and publishing never sends it, and this room would lack a committed
   * change for good. Yjs takes in only what the doc lacks.
   */
  private async catchUpFromStorage(key: SectionKey, section: SectionRoom): Promise<void> {
    if (section.catchingUp) return;
    section.catchingUp = true;
    try {
      const stored = await findSectionDraft(this.db, key);
      if (!stored) return;
      section.live.applyRemote(stored.state);
      for (const { update } of stored.updates) section.live.applyRemote(update);
    } catch (error) {
      console.error("[quire] catching a room up from storage failed", error);
    } finally {
      section.catchingUp = false;
    }
  }

  /** Every open section room of this process takes in what storage has (see the bus's "catch-up"). */
  private async catchUpAll(): Promise<void> {
    for (const room of [...this.rooms.values()]) {
      for (const [sectionId, section] of room.sections) await this.catchUpFromStorage({ ...room.key, sectionId }, section);
    }
  }

  /** A branch head moved: the open room of that branch takes the new head into every open section and outline. */
  async followHead(key: DraftKey): Promise<void> {
    // The default branch's head decides what is hidden on every branch: the document's other rooms are decided again too.
    for (const other of this.rooms.values()) {
      if (
        other.key.documentId === key.documentId &&
        other.key.branchName !== key.branchName &&
        this.defaultBranchOf(other) === key.branchName
      )
        void this.redecideHeld(other);
    }
    const room = this.rooms.get(roomKey(key));
    if (!room) return;
    // Held from the moment the move is known: a commit that hides a section and changes it sends nothing before the hiding is decided.
    const held = this.hold(room);
    try {
      await this.serial(key, async () => {
        const head = await branchHead(this.db, key).catch(() => null);
        if (!head || head.commitId === room.head.commitId) return;
        room.head = head;
        await setDraftBase(this.db, key, head.commitId);
        await this.redecideRoom(room);
        for (const [sectionId, section] of room.sections) await this.bringSectionToHead(room, sectionId, section);
      });
    } finally {
      this.release(held);
    }
  }

  /** A room's document's default branch, as its connections' access knows it (null for a room with no connection). */
  private defaultBranchOf(room: BranchRoom): string | null {
    return this.connectionsOf(room)[0]?.access.document.defaultBranch ?? null;
  }

  /** Holds a room's connections (at once) until each is decided again. */
  private async redecideHeld(room: BranchRoom): Promise<void> {
    const held = this.hold(room);
    try {
      await this.redecideRoom(room);
    } catch (error) {
      console.error("[quire] collab access check failed", error);
    } finally {
      this.release(held);
    }
  }

  /** After a draft commit or discard in this process: the room's head and bases are what the caller stored. */
  async settled(key: DraftKey, head: BranchHead): Promise<void> {
    const room = this.rooms.get(roomKey(key));
    if (!room) return;
    room.head = head;
    for (const [sectionId, section] of room.sections) section.baseBlobHash = blobHashIn(head.tree, sectionId);
    await this.redecideRoom(room);
  }

  /**
   * Resolves once every update the branch's open sections in this process
   * have applied is stored: a commit or discard then finds in the log every
   * edit it takes in (its authors, its position). A section whose storing
   * failed is closed by then and read from storage instead.
   */
  async storedSoFar(key: DraftKey): Promise<void> {
    const room = this.rooms.get(roomKey(key));
    if (!room) return;
    await Promise.all([...room.sections.values()].map((section) => section.live.settled().catch(() => undefined)));
  }

  /** The open live doc of a section in this process, if any. */
  liveSection(key: SectionKey): LiveDoc | undefined {
    return this.rooms.get(roomKey(key))?.sections.get(key.sectionId)?.live;
  }

  /** Runs `work` after every earlier operation on the branch in this process. */
  private serial<T>(key: DraftKey, work: () => Promise<T>): Promise<T> {
    return this.queue.run(key, work);
  }

  private connectionsOf(room: BranchRoom): RoomConnection[] {
    return [...room.outlines.keys(), ...[...room.sections.values()].flatMap((s) => [...s.connections])];
  }

  /**
   * Decides every connection of a room again (access changed, or the head
   * moved): gone access closes it, lowered access makes it read-only at once,
   * and outlines show exactly what each may now see.
   */
  private async redecideRoom(room: BranchRoom): Promise<void> {
    // What a principal sees is worked out once per pass, however many of its connections the room has.
    const seen = new Map<string, Promise<string[]>>();
    const keys = new Map<string, Promise<ReadonlySet<string>>>();
    const once = <T>(memo: Map<string, Promise<T>>, key: string, work: () => Promise<T>): Promise<T> => {
      const known = memo.get(key);
      if (known) return known;
      const answer = work();
      memo.set(key, answer);
      return answer;
    };
    for (const connection of this.connectionsOf(room)) {
      let access: DocumentAccess;
      try {
        ({ access } = await this.resolveAccess(connection.credential, room.key.documentId));
      } catch {
        closeNow(connection, CLOSE_ACCESS_LOST, "access revoked");
        continue;
      }
      connection.access = access;
      const principal = `${connection.actor?.userId ?? "share"}|${connection.actor?.principal ?? ""}|${access.permission}`;
      const visible = await once(seen, principal, () => this.visibleSectionIds(access, room.key.branchName, room.head));
      const sectionId = connection.address.sectionId;
      if (sectionId === null) {
        const outline = room.outlines.get(connection);
        if (outline) applyOutline(outline.doc, visible);
      } else if (!visible.includes(sectionId)) closeNow(connection, CLOSE_ACCESS_LOST, "section hidden");
      else
        await this.decideSectionConnection(connection, room.head, sectionId, () =>
          once(keys, principal, () => this.keysVisibleTo(access, room.key.branchName, room.head)),
        );
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.changes.close();
    for (const stop of this.stops) await stop();
    for (const client of this.sockets.clients) client.terminate();
    if (this.options.bus) {
      const bus = this.options.bus;
      await Promise.all(
        [...this.rooms.values()].map((room) => bus.setPresence(room.key.documentId, room.key.branchName, []).catch(() => undefined)),
      );
    }
    for (const room of this.rooms.values()) {
      for (const section of room.sections.values()) {
        await section.live.settled().catch(() => undefined);
        section.live.destroy();
      }
    }
    this.rooms.clear();
    await this.queue.drained();
    await Promise.all([...this.compactions]);
    this.sockets.close();
  }
}

const sectionName = (key: SectionKey): string => `${roomKey(key)}\u0000${key.sectionId}`;

const roomKey = branchKey;

/** A connection that may no longer see what it is connected to: what was held for it is dropped, and nothing more is sent. */
function closeNow(connection: RoomConnection, code: number, reason: string): void {
  connection.heldMessages = [];
  connection.send = () => {};
  // What it sent meanwhile (waiting unread in its socket) is not taken in.
  connection.readOnly = true;
  connection.socket.removeAllListeners("message");
  connection.socket.close(code, reason);
}

function pauseReading(connection: RoomConnection): void {
  if (connection.readPauses === 0) connection.socket.pause();
  connection.readPauses += 1;
}

function resumeReading(connection: RoomConnection): void {
  connection.readPauses -= 1;
  if (connection.readPauses === 0) connection.socket.resume();
}

/** A close reason cut to what the protocol allows (123 bytes), at a character boundary. */
function closeReason(reason: string): string {
  let cut = reason;
  while (Buffer.byteLength(cut) > MAX_CLOSE_REASON_BYTES) cut = cut.slice(0, -1);
  return cut;
}

/** Answers a refused upgrade with a plain HTTP response, before any WebSocket or Yjs byte. */
function refuseUpgrade(socket: Duplex, error: DomainError): void {
  const status = ERROR_FACES[error.code].http;
  const body = JSON.stringify({ error: error.toPayload() });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Refused"}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** `/collab/<documentId>/<branchName>` (the outline) or `/collab/<documentId>/<branchName>/~<sectionId>`; null for any other path. */
export function parseRoomPath(pathname: string): RoomAddress | null {
  const match = /^\/collab\/([0-9a-f-]{36})\/(.+?)(?:\/~([0-9a-f-]{36}))?$/i.exec(pathname);
  if (!match) return null;
  let branchName: string;
  try {
    branchName = decodeURIComponent(match[2]!);
  } catch {
    return null;
  }
  return { documentId: match[1]!.toLowerCase(), branchName, sectionId: match[3]?.toLowerCase() ?? null };
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
