/**
 * The sync core: one Y.Doc with its awareness, spoken to by any number of
 * connections in the y-websocket protocol (sync + awareness). It knows nothing
 * of auth or storage; both arrive as hooks. A connection's update is applied
 * and broadcast on arrival and handed to `store` in the background, in
 * arrival order; updates that arrive while a store runs are stored together
 * in the next one (group commit). Between arrival and store (the durability
 * window, measured by the rooms) an update lives in this process (and the
 * others it was published to) and in every client that has it: y-websocket clients keep their edits and hand the
 * server whatever it lacks when they reconnect, so a server killed inside the
 * window loses an edit only if every client holding it went away too.
 */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import { outdatedTimeout } from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import * as Y from "yjs";
import type { AgentIdentity } from "@/db/schema-agents";
import { newServerDoc } from "./codec";
import { encode } from "./encode";
import { LiveContentRefused, SectionRules, type Typist, writesOutsideSection } from "./live-rules";
import { type PresenceIdentity, stampAwarenessUpdate } from "./presence";
import { type PresenceChange, PresenceRelay } from "./presence-relay";

const MESSAGE_SYNC = 0;
const MESSAGE_AWARENESS = 1;
const MESSAGE_QUERY_AWARENESS = 3;

/** One client's end of a room: how to send it bytes, and what it may do. */
export interface LiveConnection {
  send(message: Uint8Array): void;
  /** Read-only connections' document updates are dropped (and counted); their presence still shows. */
  readOnly: boolean;
  /** Credited as the update's author in the draft log. */
  authorId: string | null;
  /** The agent the author connected through (an API token, an OAuth client): credited on the live commit; null for the person. */
  agent: AgentIdentity | null;
  /** Document updates this connection sent that were dropped because it is read-only. */
  droppedUpdates: number;
  /** Who this connection's presence is shown as, whatever its client claims. */
  presence: PresenceIdentity;
  /** What the section's content rules need to know of whoever types here. */
  typist: Typist;
  /** The connection's update broke a content rule and was undone (its client received the undo): tell it why. */
  refused(reason: string): void;
  /** Stop reading the connection's messages, and start again (backpressure while the doc's unstored updates are over their limit). */
  pause(): void;
  resume(): void;
}

/** An update applied to the doc: from a connection, or computed by the server (and stored by it). */
export interface PendingUpdate {
  update: Uint8Array;
  authorId: string | null;
  origin: LiveConnection | "server";
  /** performance.now() when it arrived: its durability window starts here. */
  receivedAt: number;
}

export interface LiveDocHooks {
  /** Makes connections' updates durable, in the background: they were applied and broadcast when they arrived. */
  store(updates: readonly PendingUpdate[]): Promise<void>;
  /** Called with an update as it is queued to be stored (applied and broadcast here): to publish it to other processes at once. */
  queued?(pending: PendingUpdate): void;
  /** Someone waits for this doc's updates to be stored (`settled`): the store should not hold them back to gather more. */
  hurry?(): void;
  /** Called with updates once they are durable (queued ones after `store`, a server-computed one at once). Updates from other processes are never handed back. */
  stored?(updates: readonly PendingUpdate[]): void;
  /** Storing failed: this doc holds updates that are not stored and takes no more; its owner closes the room, so clients reconnect and hand them over again. */
  failed?(error: unknown): void;
  /** Called after every change of the doc's content: a connection's (refused ones too), another process's, the server's. */
  changed?(): void;
  /** Called with this doc's awareness changes made here (to publish to other processes). */
  awarenessChanged?(update: Uint8Array): void;
}

/** A y-websocket sync update that carries nothing: empty struct and delete sets. */
const EMPTY_UPDATE_BYTES = 2;

export interface LiveDocOptions {
  /** Judge connections' updates by the section content rules (live-rules.ts): a section's doc. */
  sectionRules?: boolean;
  /** While more than this many bytes of updates wait to be stored, connections are paused. */
  maxPendingBytes?: number;
}

/** A connection's update being applied, and why the rules refused it (null while they have not). */
interface Judgement {
  connection: LiveConnection;
  refusal: string | null;
  /** The doc's state before the update's transaction (Yjs records it anyway): a refusal's repair is everything since. */
  before: Map<number, number> | null;
  /** Made when the rules refuse the update, to undo it (and only it): an idle room holds no UndoManager. */
  undo: Y.UndoManager | null;
}

/** `C`: the connections its owner hands it (and gets back from `connectionList`). */
export class LiveDoc<C extends LiveConnection = LiveConnection> {
  readonly doc: Y.Doc;
  /** Who is here and where their cursors are: y-protocols awareness, relayed without being parsed (presence-relay.ts). */
  readonly presence = new PresenceRelay();
  /** Each connection with the awareness client ids it controls (removed when it leaves; an array: a client has one, and a room thousands of connections). */
  private readonly connections = new Map<C, number[]>();
  /** Who speaks for each awareness client id: a connection here, or "elsewhere" (the server itself, another process). */
  private readonly presenceOwners = new Map<number, LiveConnection | "elsewhere">();
  private queue: PendingUpdate[] = [];
  /** Bytes of updates applied but not yet stored (queued or being stored). */
  private pendingBytes = 0;
  private paused = false;
  private flushing: Promise<void> | null = null;
  /** Updates queued to be stored so far, and of them stored: what `settled` waits for is a count, not an empty queue. */
  private queuedCount = 0;
  private storedCount = 0;
  /** Who waits in `settled`, each for the count queued when it asked. */
  private settling: Array<{ queued: number; resolve(): void; reject(error: unknown): void }> = [];
  private failed: unknown = null;
  private readonly rules: SectionRules | null = null;
  private judging: Judgement | null = null;
  /** Removes presence not renewed in time (y-protocols' outdatedTimeout), as y-protocols' Awareness does every tenth of it. */
  private readonly presenceSweep: NodeJS.Timeout;

  constructor(
    initialState: readonly Uint8Array[],
    private readonly hooks: LiveDocHooks,
    private readonly options: LiveDocOptions = {},
  ) {
    this.doc = newServerDoc();
    for (const update of initialState) Y.applyUpdate(this.doc, update, "server");
    if (options.sectionRules) {
      this.rules = new SectionRules(this.doc);
      this.doc.on("afterTransaction", (transaction: Y.Transaction) => this.judge(transaction));
    }
    // The server itself has no presence, and nobody may speak for it.
    this.presenceOwners.set(this.doc.clientID, "elsewhere");
    this.doc.on("update", (update: Uint8Array, origin: unknown) => {
      this.hooks.changed?.();
      // A refused update reaches nobody; its undo goes out as one repair (see accept).
      if (origin instanceof Y.UndoManager || (this.judging?.refusal != null && origin === this.judging.connection)) return;
      const message = encodeMessage(MESSAGE_SYNC, (e) => syncProtocol.writeUpdate(e, update));
      for (const connection of this.connections.keys()) if (connection !== origin) connection.send(message);
    });
    this.presenceSweep = setInterval(() => this.removePresence(this.presence.outdated()), outdatedTimeout / 10);
    this.presenceSweep.unref();
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  connectionList(): C[] {
    return [...this.connections.keys()];
  }

  /** Greets a new connection: sync step 1 (what the server has) and everyone's presence. */
  connect(connection: C): void {
    this.connections.set(connection, []);
    if (this.paused) connection.pause();
    connection.send(encodeMessage(MESSAGE_SYNC, (e) => syncProtocol.writeSyncStep1(e, this.doc)));
    const everyone = this.presence.encodeAll();
    if (everyone) connection.send(encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, everyone)));
  }

  disconnect(connection: C): void {
    const controlled = this.connections.get(connection);
    if (!controlled) return;
    this.connections.delete(connection);
    this.removePresence(controlled);
  }

  /** Handles one message from a connection; throws on a malformed message (the caller closes the connection). */
  receive(connection: C, message: Uint8Array): void {
    const decoder = decoding.createDecoder(message);
    const type = decoding.readVarUint(decoder);
    if (type === MESSAGE_SYNC) {
      const syncType = decoding.readVarUint(decoder);
      if (syncType === syncProtocol.messageYjsSyncStep1) {
        const stateVector = decoding.readVarUint8Array(decoder);
        connection.send(encodeMessage(MESSAGE_SYNC, (e) => syncProtocol.writeSyncStep2(e, this.doc, stateVector)));
      } else if (syncType === syncProtocol.messageYjsSyncStep2 || syncType === syncProtocol.messageYjsUpdate) {
        const update = decoding.readVarUint8Array(decoder);
        if (connection.readOnly) {
          if (update.length > EMPTY_UPDATE_BYTES) connection.droppedUpdates += 1;
          return;
        }
        // A copy: the message may be a view of the socket's read buffer, which a queued update would hold on to.
        if (update.length > EMPTY_UPDATE_BYTES)
          this.accept({ update: update.slice(), authorId: connection.authorId, origin: connection, receivedAt: performance.now() });
      } else throw new Error(`unknown sync message type ${syncType}`);
    } else if (type === MESSAGE_AWARENESS) {
      const stamped = stampAwarenessUpdate(decoding.readVarUint8Array(decoder), connection.presence, (clientId) => {
        const owner = this.presenceOwners.get(clientId);
        return owner === undefined || owner === connection;
      });
      if (stamped) this.applyAwareness(stamped, connection);
    } else if (type === MESSAGE_QUERY_AWARENESS) {
      const everyone = this.presence.encodeAll();
      if (everyone) connection.send(encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, everyone)));
    } else throw new Error(`unknown message type ${type}`);
  }

  /** An update another process stored and published: applied and broadcast here without storing again. */
  applyRemote(update: Uint8Array): void {
    if (!this.failed) Y.applyUpdate(this.doc, update, "remote");
  }

  /**
   * Whether the doc holds updates it cannot place yet: they build on edits it
   * never received (another process stored them and died before publishing,
   * or a message was lost). Storage has those edits.
   */
  get lacksEdits(): boolean {
    return this.doc.store.pendingStructs !== null || this.doc.store.pendingDs !== null;
  }

  /** Presence another process stamped and published: the client ids it brings in are spoken for there. */
  applyRemoteAwareness(update: Uint8Array): void {
    this.applyAwareness(update, "remote");
  }

  /**
   * A stamped update: what it changes is passed on as these bytes (an entry
   * the relay ignored, an older clock, rides along: clients ignore it as we
   * did). A connection's client back after its removal at the clock it had
   * (a reconnect) is told of the removal: y-protocols' own answer when a
   * client's local state is removed behind its back is to take a newer clock
   * and send its state again, which this room and every peer then take. (Left
   * alone, its presence would show again only at its next renewal, 15 s on.)
   */
  private applyAwareness(update: Uint8Array, origin: C | "remote"): void {
    const change = this.presence.apply(update);
    if (!change) return;
    if (change.behind.length > 0 && origin !== "remote") {
      const removal = this.presence.encodeHeld(change.behind);
      origin.send(encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, removal)));
    }
    if (change.added.length + change.updated.length + change.removed.length > 0) this.presenceChanged(change, update, origin);
  }

  /** Clients' presence is gone (their connection left, or they went quiet): every connection and the other processes are told. */
  private removePresence(clientIds: readonly number[]): void {
    const removal = this.presence.remove(clientIds);
    if (removal) this.presenceChanged({ added: [], updated: [], removed: removal.removed, behind: [] }, removal.update, null);
  }

  /**
   * Who speaks for each client id follows what changed (a connection owns
   * the ids it brings in, whether new or back after a removal), and the
   * update goes to every connection but the one it came from, and to the
   * other processes unless it came from them.
   */
  private presenceChanged(change: PresenceChange, update: Uint8Array, origin: C | "remote" | null): void {
    const controlled = origin !== null && origin !== "remote" ? this.connections.get(origin) : undefined;
    if (controlled) {
      for (const id of change.added) if (!controlled.includes(id)) controlled.push(id);
      for (const id of change.removed) {
        const at = controlled.indexOf(id);
        if (at >= 0) controlled.splice(at, 1);
      }
    }
    for (const id of change.added) this.presenceOwners.set(id, controlled ? (origin as C) : "elsewhere");
    for (const id of change.removed) this.presenceOwners.delete(id);
    const message = encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, update));
    // Not back to the connection it came from: its client ignores its own entries at the clock it sent (y-protocols),
    // so the echo would be a write per keystroke that changes nothing.
    for (const connection of this.connections.keys()) if (connection !== origin) connection.send(message);
    if (origin !== "remote") this.hooks.awarenessChanged?.(update);
  }

  /** An update the server computed and already stored (a committed change applied into the draft): applied, broadcast and published. */
  applyStored(update: Uint8Array): void {
    if (this.failed) return;
    Y.applyUpdate(this.doc, update, "server");
    this.hooks.stored?.([{ update, authorId: null, origin: "server", receivedAt: performance.now() }]);
  }

  /**
   * Resolves when every update received so far is stored (rejects if storing
   * failed): not later ones, so a room typed in without a pause settles too.
   * The store is asked to hurry while someone waits.
   */
  async settled(): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.storedCount === this.queuedCount) return;
    this.hooks.hurry?.();
    await new Promise<void>((resolve, reject) => this.settling.push({ queued: this.queuedCount, resolve, reject }));
  }

  /** Drops every connection's presence and the doc. */
  destroy(): void {
    for (const connection of [...this.connections.keys()]) this.disconnect(connection);
    clearInterval(this.presenceSweep);
    this.doc.destroy();
  }

  /**
   * A connection's update: applied (which broadcasts it to the other
   * connections) and queued to be stored — unless it breaks a content rule.
   * Then it is undone at once: the undo, with the refused update's own items
   * already collected, goes to every connection as one repair (the typist's
   * client converges to the section without its change; the others never see
   * the refused content), is stored in its place, and the typist is told.
   */
  private accept(pending: PendingUpdate): void {
    if (this.failed) return;
    const connection = pending.origin as LiveConnection;
    if (!this.rules) {
      Y.applyUpdate(this.doc, pending.update, connection);
      this.enqueue(pending);
      return;
    }
    const outside = writesOutsideSection(pending.update);
    if (outside) {
      connection.refused(outside);
      return;
    }
    const hadPending = this.doc.store.pendingStructs !== null || this.doc.store.pendingDs !== null;
    // Not Y.encodeStateVector before every update: that costs a pass over every client the doc ever had, per keystroke.
    const judgement: Judgement = { connection, refusal: null, before: null, undo: null };
    this.judging = judgement;
    try {
      Y.applyUpdate(this.doc, pending.update, connection);
    } finally {
      this.judging = null;
    }
    if (!hadPending && (this.doc.store.pendingStructs !== null || this.doc.store.pendingDs !== null)) {
      // Items that hang on edits this server never had: no client of ours can have made them, and they would sit in memory for ever.
      this.doc.store.pendingStructs = null;
      this.doc.store.pendingDs = null;
      judgement.refusal ??= "the update builds on edits this room does not have";
    }
    if (judgement.refusal === null) {
      this.enqueue(pending);
      return;
    }
    if (judgement.undo) {
      judgement.undo.undo();
      // Clearing lets Yjs collect the refused items it kept for the undo.
      judgement.undo.clear();
      judgement.undo.destroy();
    }
    const repair = Y.encodeStateAsUpdate(this.doc, judgement.before ? Y.encodeStateVector(judgement.before) : undefined);
    const message = encodeMessage(MESSAGE_SYNC, (e) => syncProtocol.writeUpdate(e, repair));
    for (const each of this.connections.keys()) each.send(message);
    this.enqueue({ update: repair, authorId: null, origin: "server", receivedAt: pending.receivedAt });
    connection.refused(judgement.refusal);
  }

  /** The rules judge a connection's transaction (throwing LiveContentRefused) and follow everyone else's. */
  private judge(transaction: Y.Transaction): void {
    if (!this.rules) return;
    const judgement = this.judging;
    if (!judgement || transaction.origin !== judgement.connection) {
      this.rules.follow(transaction);
      return;
    }
    judgement.before = transaction.beforeState;
    try {
      this.rules.judge(transaction, judgement.connection.typist);
    } catch (error) {
      if (!(error instanceof LiveContentRefused)) throw error;
      judgement.refusal = error.message;
      // Captured where an UndoManager made with the room would have captured it: in this transaction's afterTransaction,
      // before Yjs collects what it deleted (its own listener, added now, is not called for the transaction under way).
      // Its undo is not captured (that would keep the refused items from being collected before the repair is encoded).
      const { connection } = judgement;
      judgement.undo = new Y.UndoManager(this.doc.getMap("section"), {
        captureTimeout: 0,
        trackedOrigins: new Set([connection]),
        captureTransaction: (captured) => captured.origin === connection,
      });
      judgement.undo.afterTransactionHandler(transaction);
    }
  }

  /** Those waiting in `settled` for updates now all stored go on. */
  private resolveSettled(): void {
    const waiting = this.settling;
    this.settling = waiting.filter((waiter) => waiter.queued > this.storedCount);
    for (const waiter of waiting) if (waiter.queued <= this.storedCount) waiter.resolve();
  }

  /** Queues an applied update to be stored, pausing every connection while too much waits. */
  private enqueue(pending: PendingUpdate): void {
    this.queue.push(pending);
    this.queuedCount += 1;
    this.hooks.queued?.(pending);
    this.pendingBytes += pending.update.length;
    if (!this.paused && this.pendingBytes > (this.options.maxPendingBytes ?? Number.POSITIVE_INFINITY)) {
      this.paused = true;
      for (const connection of this.connections.keys()) connection.pause();
    }
    if (!this.flushing) this.flushing = this.flush();
  }

  /**
   * Connections are read again once what waits to be stored is under half
   * the limit (not at the limit, or a steady writer would pause and resume
   * them at every batch).
   */
  private resumeIfDrained(): void {
    if (!this.paused || this.pendingBytes > (this.options.maxPendingBytes ?? 0) / 2) return;
    this.paused = false;
    for (const connection of this.connections.keys()) connection.resume();
  }

  private async flush(): Promise<void> {
    // Nothing runs before `accept` has recorded this run, so updates accepted meanwhile join its queue.
    await null;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        if (this.settling.length > 0) this.hooks.hurry?.();
        await this.hooks.store(batch);
        for (const stored of batch) this.pendingBytes -= stored.update.length;
        this.resumeIfDrained();
        this.hooks.stored?.(batch);
        this.storedCount += batch.length;
        if (this.settling.length > 0) this.resolveSettled();
      }
    } catch (error) {
      // The owner closes the room; clients reconnect to a doc loaded from storage and hand over what it lacks.
      this.failed = error;
      this.queue = [];
      this.pendingBytes = 0;
      this.resumeIfDrained();
      for (const waiter of this.settling) waiter.reject(error);
      this.settling = [];
      this.hooks.failed?.(error);
    }
    // In the same synchronous step as the empty-queue check: an update enqueued after it starts a new run.
    this.flushing = null;
  }
}

function encodeMessage(type: number, write: (encoder: encoding.Encoder) => void): Uint8Array {
  return encode((encoder) => {
    encoding.writeVarUint(encoder, type);
    write(encoder);
  });
}
