/**
 * The sync core: one Y.Doc with its awareness, spoken to by any number of
 * connections in the y-websocket protocol (sync + awareness). It knows nothing
 * of auth or storage; both arrive as hooks. A connection's update is applied
 * and broadcast on arrival and handed to `store` in the background, in
 * arrival order; updates that arrive while a store runs are stored together
 * in the next one (group commit). Between arrival and store (the durability
 * window, measured by the rooms) an update lives in this process and in every
 * client that has it: y-websocket clients keep their edits and hand the
 * server whatever it lacks when they reconnect, so a server killed inside the
 * window loses an edit only if every client holding it went away too.
 */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as awarenessProtocol from "y-protocols/awareness";
import * as syncProtocol from "y-protocols/sync";
import * as Y from "yjs";

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
  /** Document updates this connection sent that were dropped because it is read-only. */
  droppedUpdates: number;
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
  /** Called with updates once they are durable (a connection's after `store`, a server-computed one at once): to publish them to other processes. Updates from other processes are never handed back. */
  stored?(updates: readonly PendingUpdate[]): void;
  /** Storing failed: this doc holds updates that are not stored and takes no more; its owner closes the room, so clients reconnect and hand them over again. */
  failed?(error: unknown): void;
  /** Called with this doc's awareness changes made here (to publish to other processes). */
  awarenessChanged?(update: Uint8Array): void;
}

/** A y-websocket sync update that carries nothing: empty struct and delete sets. */
const EMPTY_UPDATE_BYTES = 2;

export class LiveDoc {
  readonly doc: Y.Doc;
  readonly awareness: awarenessProtocol.Awareness;
  /** Each connection with the awareness client ids it controls (removed when it leaves). */
  private readonly connections = new Map<LiveConnection, Set<number>>();
  private queue: PendingUpdate[] = [];
  private flushing: Promise<void> | null = null;
  private failed: unknown = null;

  constructor(
    initialState: readonly Uint8Array[],
    private readonly hooks: LiveDocHooks,
  ) {
    this.doc = new Y.Doc({ gc: true });
    for (const update of initialState) Y.applyUpdate(this.doc, update, "server");
    this.awareness = new awarenessProtocol.Awareness(this.doc);
    // The server itself has no presence.
    this.awareness.setLocalState(null);
    this.doc.on("update", (update: Uint8Array, origin: unknown) => {
      const message = encodeMessage(MESSAGE_SYNC, (e) => syncProtocol.writeUpdate(e, update));
      for (const connection of this.connections.keys()) if (connection !== origin) connection.send(message);
    });
    this.awareness.on(
      "update",
      ({ added, updated, removed }: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
        const changed = [...added, ...updated, ...removed];
        const controlled = origin instanceof Object ? this.connections.get(origin as LiveConnection) : undefined;
        if (controlled) {
          for (const id of added) controlled.add(id);
          for (const id of removed) controlled.delete(id);
        }
        const update = awarenessProtocol.encodeAwarenessUpdate(this.awareness, changed);
        const message = encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, update));
        for (const connection of this.connections.keys()) connection.send(message);
        if (origin !== "remote") this.hooks.awarenessChanged?.(update);
      },
    );
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  connectionList(): LiveConnection[] {
    return [...this.connections.keys()];
  }

  /** Greets a new connection: sync step 1 (what the server has) and everyone's presence. */
  connect(connection: LiveConnection): void {
    this.connections.set(connection, new Set());
    connection.send(encodeMessage(MESSAGE_SYNC, (e) => syncProtocol.writeSyncStep1(e, this.doc)));
    const states = [...this.awareness.getStates().keys()];
    if (states.length > 0) {
      const update = awarenessProtocol.encodeAwarenessUpdate(this.awareness, states);
      connection.send(encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, update)));
    }
  }

  disconnect(connection: LiveConnection): void {
    const controlled = this.connections.get(connection);
    if (!controlled) return;
    this.connections.delete(connection);
    awarenessProtocol.removeAwarenessStates(this.awareness, [...controlled], null);
  }

  /** Handles one message from a connection; throws on a malformed message (the caller closes the connection). */
  receive(connection: LiveConnection, message: Uint8Array): void {
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
        if (update.length > EMPTY_UPDATE_BYTES)
          this.accept({ update, authorId: connection.authorId, origin: connection, receivedAt: performance.now() });
      } else throw new Error(`unknown sync message type ${syncType}`);
    } else if (type === MESSAGE_AWARENESS) {
      awarenessProtocol.applyAwarenessUpdate(this.awareness, decoding.readVarUint8Array(decoder), connection);
    } else if (type === MESSAGE_QUERY_AWARENESS) {
      const update = awarenessProtocol.encodeAwarenessUpdate(this.awareness, [...this.awareness.getStates().keys()]);
      connection.send(encodeMessage(MESSAGE_AWARENESS, (e) => encoding.writeVarUint8Array(e, update)));
    } else throw new Error(`unknown message type ${type}`);
  }

  /** An update another process stored and published: applied and broadcast here without storing again. */
  applyRemote(update: Uint8Array): void {
    if (!this.failed) Y.applyUpdate(this.doc, update, "remote");
  }

  applyRemoteAwareness(update: Uint8Array): void {
    awarenessProtocol.applyAwarenessUpdate(this.awareness, update, "remote");
  }

  /** An update the server computed and already stored (a committed change applied into the draft): applied, broadcast and published. */
  applyStored(update: Uint8Array): void {
    if (this.failed) return;
    Y.applyUpdate(this.doc, update, "server");
    this.hooks.stored?.([{ update, authorId: null, origin: "server", receivedAt: performance.now() }]);
  }

  /** Resolves when every update received so far is stored (rejects if storing failed). */
  async settled(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.failed) throw this.failed;
  }

  /** Drops every connection's presence and the doc. */
  destroy(): void {
    for (const connection of [...this.connections.keys()]) this.disconnect(connection);
    this.awareness.destroy();
    this.doc.destroy();
  }

  /** A connection's update: applied (which broadcasts it to the other connections) and queued to be stored. */
  private accept(pending: PendingUpdate): void {
    if (this.failed) return;
    Y.applyUpdate(this.doc, pending.update, pending.origin);
    this.queue.push(pending);
    if (!this.flushing) this.flushing = this.flush();
  }

  private async flush(): Promise<void> {
    // Nothing runs before `accept` has recorded this run, so updates accepted meanwhile join its queue.
    await null;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        await this.hooks.store(batch);
        this.hooks.stored?.(batch);
      }
    } catch (error) {
      // The owner closes the room; clients reconnect to a doc loaded from storage and hand over what it lacks.
      this.failed = error;
      this.queue = [];
      this.hooks.failed?.(error);
    }
    // In the same synchronous step as the empty-queue check: an update enqueued after it starts a new run.
    this.flushing = null;
  }
}

/** The update a mutation makes to a doc, computed on a copy so the doc changes only once it is stored. */
export function computeUpdate(doc: Y.Doc, mutate: (doc: Y.Doc) => void): Uint8Array | null {
  const copy = new Y.Doc({ gc: true });
  Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));
  const updates: Uint8Array[] = [];
  copy.on("update", (update: Uint8Array) => updates.push(update));
  mutate(copy);
  copy.destroy();
  return updates.length === 0 ? null : Y.mergeUpdates(updates);
}

function encodeMessage(type: number, write: (encoder: encoding.Encoder) => void): Uint8Array {
  const encoder = encoding.createEncoder();
  encoding.writeVarUint(encoder, type);
  write(encoder);
  return encoding.toUint8Array(encoder);
}
