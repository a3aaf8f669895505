/**
 * The rooms' traffic with other Quire processes (QUIRE_REDIS_URL, bus.ts):
 * updates and presence of open sections go out and come in, head moves made
 * here are announced, who is connected is shared, a compaction takes a lock,
 * and a starting process asks the others to catch up from storage. Without a
 * bus each process works alone and every call here is a no-op (presence
 * answers null: ask the rooms of this process).
 *
 * A connection's update is published on arrival, beside its store rather
 * than after it, so PostgreSQL's commit is not on the path to peers in other
 * processes; "stored" follows once it is stored. A receiver keeps each such
 * update until it hears "stored": one it never hears of (its sender died
 * between publishing and storing) is stored by every receiver whose room of
 * that section is open, after ORPHAN_AFTER_MS, or when that room goes away
 * if that comes first (takeUnconfirmed). Without that, an edit applied
 * in a room here could be lost with its sender: its author's client,
 * reconnecting here, finds the room already has it and hands nothing over.
 * Storing an update twice is harmless (Yjs applies it once).
 *
 * A room's traffic goes out only while another process holds the same
 * section open: behind a load balancer that routes by document (the usual
 * deployment) most rooms live in one process, and publishing their every
 * keystroke for nobody (and reading it back) cost a sixth to a quarter of a
 * delivered edit's CPU (bench/README.md "Scale-out"). A process
 * that opens a section says so ("opened", with its doc's state vector); each
 * process holding it answers with what the opener lacks (its unstored
 * updates among it, and those again as unstored, so an opener stores them
 * should their sender die; so too the updates other processes published to
 * it and never said they stored, which it would store should their sender
 * have died: should it die as well before storing them, the opener does),
 * its presence and its own state vector ("held"),
 * for the opener to send back what it lacks in turn; from then on both
 * publish the section's traffic, to the processes holding it (each on its
 * own channel: nobody else reads it, and it never comes back to its
 * sender), until one says "closed". What a process
 * applied before it heard of the other is in what they send each other, so
 * nothing typed meanwhile is missed; after a lost connection to Redis a
 * process says "opened" again for every room it holds. Updates the server
 * computed and stored (a commit, a head move) are published whoever holds
 * the section: they are rare, and a process that started after the room
 * opened here must not miss them.
 *
 * A process that dies says no "closed": every process beats (an empty frame)
 * every HEARTBEAT_MS, and one not heard for GONE_AFTER_MS is no longer a
 * holder of anything, so its rooms' peers stop publishing for nobody. Should
 * it be heard again (its event loop was stuck, not dead), every room held
 * here says "opened" once more, and what each side typed meanwhile is
 * exchanged as when a room opens.
 */
import { randomInt } from "node:crypto";
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import * as Y from "yjs";
import type { DraftKey, SectionKey } from "@/server/store/drafts";
import { type BusMessage, type CollabBus, PRESENCE_TTL_MS } from "./bus";
import { encode } from "./encode";
import { namedOncePerKey } from "./key-names";
import type { PendingUpdate } from "./live-doc";
import { flushTurnWrites } from "./turn-writes";

/** An update another process published before storing it, not yet confirmed stored. */
export interface UnconfirmedUpdate {
  key: SectionKey;
  /** The key's section name (see nameOf). */
  name: string;
  update: Uint8Array;
  authorId: string | null;
  /** Date.now() when it arrived. */
  at: number;
  /**
   * The number this process relayed it under, as unstored, to processes that
   * opened its section meanwhile: said stored once its sender says so, or
   * once this process stored it as an orphan.
   */
  relayedAs?: number;
}

/** What arrives from other processes, for the rooms of this one to apply. */
export interface FanOutHandlers {
  /** Another process moved a branch head. */
  headMoved(key: DraftKey): void;
  /** A process started: every open section takes in what storage has. */
  catchUp(): void;
  /** Another process applied an update of a section (it is not this process's own). */
  update(key: SectionKey, update: Uint8Array): void;
  awareness(key: SectionKey, update: Uint8Array): void;
  /** Updates whose sender never said they were stored, for open rooms here: stored by this process. */
  storeOrphaned(updates: readonly UnconfirmedUpdate[]): Promise<void>;
  /** Time to refresh this process's presence entries (they are ignored after PRESENCE_TTL_MS). */
  refreshPresence(): void;
  /** Resolves once what the rooms here of a document (one branch, or every branch) applied is stored (never rejects). */
  settle(documentId: string, branchName: string | undefined): Promise<void>;
  /** The section's doc and who is present in it, if its room is open here (then unconfirmed updates of it are this process's to store too). */
  openSection(key: SectionKey): { doc: Y.Doc; presence: { encodeAll(): Uint8Array | null } } | undefined;
}

/** A sender stores an update well within this (its durability window is milliseconds); one unconfirmed longer is an orphan. */
export const ORPHAN_AFTER_MS = 15_000;
/** "stored" goes out with the next message, or after this long when none comes. */
const ACKNOWLEDGE_WITHIN_MS = 50;
/** How often a process says it is alive (bus.beat). */
export const HEARTBEAT_MS = 5_000;
/** A process not heard for this long (three beats missed) holds nothing any more. */
export const GONE_AFTER_MS = 15_000;
/** How long a process dropped as gone is remembered, to announce the rooms again should it be heard. */
const GONE_REMEMBERED_MS = 60 * 60_000;
/** How long a read waits for the other processes' "settled" (one that hangs or died never answers). */
export const OTHERS_STORED_WAIT_MS = 1_000;

/** A section's name in the maps here, built anew (a message's key: caching it per message would cost more than it saves). */
const nameOf = (key: SectionKey): string => `${key.documentId}\u0000${key.branchName}\u0000${key.sectionId}`;

/** A room's section name, built once per key object (see key-names.ts). */
const sectionName = namedOncePerKey(nameOf);

const logFailure = (what: string) => (error: unknown) => console.error(`[quire] ${what} failed`, error);

const NO_KEY = { documentId: "", branchName: "", sectionId: "" };

/** Sequence numbers as a "stored" payload: a count, then each (lib0 varints). */
function encodeSeqs(seqs: readonly number[]): Uint8Array {
  return encode((encoder) => {
    encoding.writeVarUint(encoder, seqs.length);
    for (const seq of seqs) encoding.writeVarUint(encoder, seq);
  });
}

/** Throws on bytes that are not sequence numbers (lib0's decoder on a truncated payload). */
function decodeSeqs(payload: Uint8Array): number[] {
  const decoder = decoding.createDecoder(payload);
  const count = decoding.readVarUint(decoder);
  // Each takes a byte at least: a larger count is not a payload (and would allocate for nothing).
  if (count > payload.length) throw new Error("not sequence numbers");
  return Array.from({ length: count }, () => decoding.readVarUint(decoder));
}

export class FanOut {
  /** Updates from other processes for sections this process is loading, by section. */
  private readonly arrivedWhileLoading = new Map<string, Uint8Array[]>();
  /** Per sender, its updates published before storing, by number, until it says they are stored. */
  private readonly unconfirmed = new Map<string, Map<number, UnconfirmedUpdate>>();
  /** This process's updates published before storing: their numbers, until stored. */
  private readonly published = new WeakMap<PendingUpdate, number>();
  private nextSeq = 1;
  /** This process's "settle" requests under way, by number: the answers still awaited (known once the PUBLISH says how many processes heard it). */
  private readonly settling = new Map<number, { answers: number; expected: number; done(): void }>();
  /** Numbers of this process's updates stored since the last "stored" went out. */
  private storedSeqs: number[] = [];
  private acknowledgeTimer: NodeJS.Timeout | null = null;
  /** The section of the message received last (see receive). */
  private lastSection = "";
  /** Sections whose rooms are open here, by name. */
  private readonly held = new Map<string, SectionKey>();
  /**
   * Per section open here, the other processes that hold it open too: its
   * traffic is published to them, and only while there is one. Each list is
   * replaced, never changed, so a turn's frame can name it as it stands.
   */
  private readonly sharedWith = new Map<string, readonly string[]>();
  /** Per section open here and nowhere else, this process's updates not yet stored, so not published (see shareWith). */
  private readonly unpublished = new Map<string, Set<PendingUpdate>>();
  /** When each other process was last heard (any frame, its beats among them). */
  private readonly lastHeard = new Map<string, number>();
  /** Processes dropped as gone, and when. */
  private readonly gone = new Map<string, number>();
  /** The promise of the frame published last, whose failure is logged already. */
  private lastSent: Promise<number> | null = null;
  /** The rooms' announcement to processes heard again, while it waits for the turn's other frames. */
  private announcing: NodeJS.Immediate | null = null;

  constructor(private readonly bus: CollabBus | undefined) {}

  /** Subscribes to the other processes' messages and asks them to catch up; resolves to the stop function. */
  async start(handlers: FanOutHandlers): Promise<() => Promise<void>> {
    const bus = this.bus;
    if (!bus) return async () => {};
    const refresh = setInterval(() => handlers.refreshPresence(), PRESENCE_TTL_MS / 3);
    refresh.unref();
    const orphans = setInterval(() => void this.storeOrphans(handlers), ORPHAN_AFTER_MS / 3);
    orphans.unref();
    const heartbeat = setInterval(() => {
      bus.beat();
      this.dropSilent();
    }, HEARTBEAT_MS);
    heartbeat.unref();
    const unsubscribe = await bus.subscribe({
      message: (message, sender) => this.receive(handlers, message, sender),
      heard: (sender) => this.heard(handlers, sender),
      // Messages published while the connection was down never arrive: the rooms held here are announced again.
      resubscribed: () => this.announceHeld(handlers),
    });
    // This process's previous run may have stored updates it never published: the other processes' rooms take them from storage.
    void bus.publish({ ...NO_KEY, kind: "catch-up", payload: new Uint8Array() }).catch(logFailure("catch-up announcement"));
    return async () => {
      clearInterval(refresh);
      clearInterval(orphans);
      clearInterval(heartbeat);
      if (this.announcing) clearImmediate(this.announcing);
      this.flushAcknowledgements();
      await unsubscribe();
    };
  }

  /**
   * A frame from another process: it is alive. One dropped as gone missed
   * what rooms here published since: they are announced again (once for all
   * the processes heard again together, as after this process was the one
   * stuck).
   */
  private heard(handlers: FanOutHandlers, sender: string): void {
    this.lastHeard.set(sender, Date.now());
    if (!this.gone.delete(sender) || this.announcing) return;
    this.announcing = setImmediate(() => {
      this.announcing = null;
      this.announceHeld(handlers);
    });
  }

  /** Processes not heard for GONE_AFTER_MS hold no section any more (a dead one never says "closed"). */
  private dropSilent(now = Date.now()): void {
    for (const [sender, at] of this.lastHeard) {
      if (now - at <= GONE_AFTER_MS) continue;
      this.lastHeard.delete(sender);
      this.gone.set(sender, now);
      for (const name of this.sharedWith.keys()) this.stopSharing(name, sender);
    }
    for (const [sender, at] of this.gone) if (now - at > GONE_REMEMBERED_MS) this.gone.delete(sender);
  }

  private receive(handlers: FanOutHandlers, message: BusMessage, sender: string): void {
    // Each section's run of messages in a frame (an update, its author's cursor) goes out to its peers before the next's.
    const name = nameOf(message);
    if (name !== this.lastSection) {
      flushTurnWrites();
      this.lastSection = name;
    }
    if (message.kind === "head-moved") handlers.headMoved(message);
    else if (message.kind === "catch-up") handlers.catchUp();
    else if (message.kind === "awareness") handlers.awareness(this.held.get(name) ?? message, message.payload);
    else if (message.kind === "stored") this.confirm(sender, message.payload);
    else if (message.kind === "opened" || message.kind === "held") this.shareWith(handlers, message, name, sender);
    else if (message.kind === "closed") this.stopSharing(name, sender);
    else if (message.kind === "settle") this.settleFor(handlers, message, sender);
    else if (message.kind === "settled") this.answered(message.payload);
    else this.applyUpdate(handlers, message, name, sender);
  }

  /**
   * Another process holds a section open here too ("opened": it just opened
   * it; "held": it answers this process's "opened"): from now on the
   * section's traffic is published, and it is sent what this room has and its
   * doc lacks (what was typed here before, unstored updates among them),
   * this room's presence, and on "opened" this doc's state vector.
   */
  private shareWith(handlers: FanOutHandlers, message: BusMessage, name: string, sender: string): void {
    const key = this.held.get(name);
    const open = key && handlers.openSection(key);
    if (!key || !open) return;
    let missing: Uint8Array;
    try {
      missing = Y.encodeStateAsUpdate(open.doc, message.payload);
    } catch {
      return;
    }
    const peers = this.sharedWith.get(name) ?? [];
    if (!peers.includes(sender)) this.sharedWith.set(name, [...peers, sender]);
    const opener = [sender];
    this.send({ ...key, kind: "update", payload: missing }, "what an opened room lacks", opener);
    // Published again as unstored: should this process die before storing them, the other process stores them.
    const waiting = this.unpublished.get(name);
    this.unpublished.delete(name);
    for (const pending of waiting ?? []) this.publishUnstored(key, pending);
    // Likewise what other processes published here unstored and have not confirmed: their sender may be dead, and this
    // process the only one left to store it (two kills within ORPHAN_AFTER_MS lost such an edit before).
    for (const entry of this.unconfirmedOf(name, sender)) {
      entry.relayedAs ??= this.nextSeq++;
      this.send(
        { ...key, kind: "update", payload: entry.update, unstored: { seq: entry.relayedAs, authorId: entry.authorId } },
        "an unconfirmed update relayed",
        opener,
      );
    }
    const presence = open.presence.encodeAll();
    if (presence) this.send({ ...key, kind: "awareness", payload: presence }, "presence announcement", opener);
    if (message.kind === "opened") this.send({ ...key, kind: "held", payload: Y.encodeStateVector(open.doc) }, "room announcement", opener);
  }

  /** Another process no longer holds a section (it closed it, or it is gone). */
  private stopSharing(name: string, sender: string): void {
    const peers = this.sharedWith.get(name);
    if (!peers?.includes(sender)) return;
    const remaining = peers.filter((peer) => peer !== sender);
    this.sharedWith.set(name, remaining);
  }

  private announceHeld(handlers: FanOutHandlers): void {
    for (const key of this.held.values()) {
      const open = handlers.openSection(key);
      if (open) this.opened(key, open.doc);
    }
  }

  /**
   * Resolves once every other process has stored what its rooms of a
   * document (one branch of it, or every branch) applied so far, or after
   * OTHERS_STORED_WAIT_MS: so a read, a status or a commit here takes in
   * what was typed a moment ago in another process, whose room may be the
   * only one of that section. Every process subscribed answers; how many
   * there are is what Redis says the PUBLISH reached.
   */
  async othersStored(documentId: string, branchName?: string): Promise<void> {
    const bus = this.bus;
    if (!bus) return;
    const request = randomInt(2 ** 47);
    await new Promise<void>((resolve) => {
      const entry = {
        answers: 0,
        expected: Number.POSITIVE_INFINITY,
        done: () => {
          clearTimeout(timer);
          this.settling.delete(request);
          resolve();
        },
      };
      const timer = setTimeout(entry.done, OTHERS_STORED_WAIT_MS);
      this.settling.set(request, entry);
      const ask = { ...NO_KEY, documentId, branchName: branchName ?? "", kind: "settle" as const, payload: encodeSeqs([request]) };
      bus.publish(ask).then((reached) => {
        // Every subscriber but this process answers.
        entry.expected = reached - 1;
        if (entry.answers >= entry.expected) entry.done();
      }, entry.done);
    });
  }

  /** Another process reads a document's draft: what the rooms here applied of it is stored first. */
  private settleFor(handlers: FanOutHandlers, message: BusMessage, sender: string): void {
    const answer = () => this.send({ ...NO_KEY, kind: "settled", payload: message.payload }, "settled answer", [sender]);
    handlers.settle(message.documentId, message.branchName || undefined).then(answer, answer);
  }

  private answered(payload: Uint8Array): void {
    let request: number | undefined;
    try {
      [request] = decodeSeqs(payload);
    } catch {
      return;
    }
    const entry = request === undefined ? undefined : this.settling.get(request);
    if (!entry) return;
    entry.answers += 1;
    if (entry.answers >= entry.expected) entry.done();
  }

  /** A section's room opened here: the processes holding it too send what it lacks, and from then on its traffic. */
  opened(key: SectionKey, doc: Y.Doc): void {
    if (!this.bus) return;
    this.held.set(sectionName(key), key);
    this.send({ ...key, kind: "opened", payload: Y.encodeStateVector(doc) }, "room announcement");
  }

  /** A section's room here closed (once what it received was stored, or for good after a failure). */
  closed(key: SectionKey): void {
    const name = sectionName(key);
    if (!this.bus || !this.held.delete(name)) return;
    this.sharedWith.delete(name);
    this.unpublished.delete(name);
    this.send({ ...key, kind: "closed", payload: new Uint8Array() }, "room announcement");
  }

  /**
   * A sender stored updates it published before: they are its to keep, no
   * longer this process's to watch (nor, those it relayed, the watch of the
   * processes it relayed them to).
   */
  private confirm(sender: string, payload: Uint8Array): void {
    const waiting = this.unconfirmed.get(sender);
    if (!waiting) return;
    let seqs: number[];
    try {
      seqs = decodeSeqs(payload);
    } catch {
      return;
    }
    for (const seq of seqs) {
      const relayedAs = waiting.get(seq)?.relayedAs;
      if (relayedAs !== undefined) this.acknowledge(relayedAs);
      waiting.delete(seq);
    }
    if (waiting.size === 0) this.unconfirmed.delete(sender);
  }

  /** Says (with the next message, or within ACKNOWLEDGE_WITHIN_MS) that an update published under this number is stored. */
  private acknowledge(seq: number): void {
    this.storedSeqs.push(seq);
    this.acknowledgeTimer ??= setTimeout(() => this.flushAcknowledgements(), ACKNOWLEDGE_WITHIN_MS);
  }

  /** A section's updates whose senders (but `except`: the opener's own are its to store) have not said they stored them. */
  private *unconfirmedOf(name: string, except?: string): Generator<UnconfirmedUpdate> {
    for (const [sender, waiting] of this.unconfirmed) {
      if (sender === except) continue;
      for (const entry of waiting.values()) if (entry.name === name) yield entry;
    }
  }

  private applyUpdate(handlers: FanOutHandlers, message: BusMessage, name: string, sender: string): void {
    if (message.unstored) {
      const waiting = this.unconfirmed.get(sender) ?? new Map<number, UnconfirmedUpdate>();
      this.unconfirmed.set(sender, waiting);
      const key = { documentId: message.documentId, branchName: message.branchName, sectionId: message.sectionId };
      waiting.set(message.unstored.seq, { key, name, update: message.payload, authorId: message.unstored.authorId, at: Date.now() });
    }
    // A section being loaded keeps what arrives meanwhile: it may be newer than what the load read.
    this.arrivedWhileLoading.get(name)?.push(message.payload);
    // The room's own key when it is open here: its names are built already.
    handlers.update(this.held.get(name) ?? message, message.payload);
  }

  /** Stores, for rooms open here, the updates whose senders never said they stored them; forgets every such update. */
  private async storeOrphans(handlers: FanOutHandlers): Promise<void> {
    const cutoff = Date.now() - ORPHAN_AFTER_MS;
    const orphans: UnconfirmedUpdate[] = [];
    for (const [sender, waiting] of this.unconfirmed) {
      for (const [seq, entry] of waiting) {
        if (entry.at > cutoff) break;
        waiting.delete(seq);
        if (handlers.openSection(entry.key)) orphans.push(entry);
      }
      if (waiting.size === 0) this.unconfirmed.delete(sender);
    }
    if (orphans.length === 0) return;
    try {
      await handlers.storeOrphaned(orphans);
    } catch (error) {
      logFailure("storing updates another process never stored")(error);
      return;
    }
    for (const orphan of orphans) if (orphan.relayedAs !== undefined) this.acknowledge(orphan.relayedAs);
  }

  /**
   * The updates of a section whose senders have not said they stored them,
   * no longer watched here: its room is going away and stores them itself.
   * Once it is gone they would reach storage only through a client handing
   * them over, and the clients that hold them found them in the room already.
   * (Those it relayed to an opener are stored there too, after
   * ORPHAN_AFTER_MS: a second copy is harmless.)
   */
  takeUnconfirmed(key: SectionKey): UnconfirmedUpdate[] {
    const name = sectionName(key);
    const taken: UnconfirmedUpdate[] = [];
    for (const [sender, waiting] of this.unconfirmed) {
      for (const [seq, entry] of waiting) {
        if (entry.name !== name) continue;
        waiting.delete(seq);
        taken.push(entry);
      }
      if (waiting.size === 0) this.unconfirmed.delete(sender);
    }
    return taken;
  }

  /**
   * Collects the updates other processes publish for a section while `load`
   * runs; resolves with what it loaded and them. Updates published before
   * and not yet confirmed stored are among them: the load may not find them
   * in storage yet.
   */
  async whileLoading<T>(key: SectionKey, load: () => Promise<T>): Promise<{ loaded: T; arrived: Uint8Array[] }> {
    const name = sectionName(key);
    const arrived: Uint8Array[] = [];
    for (const entry of this.unconfirmedOf(name)) arrived.push(entry.update);
    this.arrivedWhileLoading.set(name, arrived);
    try {
      return { loaded: await load(), arrived };
    } finally {
      this.arrivedWhileLoading.delete(name);
    }
  }

  /** Tells the other processes a branch head moved here, so their open rooms of that branch follow it. */
  announceHeadMove(key: DraftKey): void {
    this.send(
      { documentId: key.documentId, branchName: key.branchName, sectionId: "", kind: "head-moved", payload: new Uint8Array() },
      "head-move announcement",
    );
  }

  /**
   * Publishes a connection's update as it is applied here, before it is
   * stored (`stored` says when it is), if another process holds the section
   * open; otherwise keeps it until it is stored (see shareWith).
   */
  publishArrived(key: SectionKey, pending: PendingUpdate): void {
    if (!this.bus) return;
    const name = sectionName(key);
    if (this.sharedWith.get(name)?.length) this.publishUnstored(key, pending);
    else {
      const waiting = this.unpublished.get(name) ?? new Set<PendingUpdate>();
      waiting.add(pending);
      this.unpublished.set(name, waiting);
    }
  }

  private publishUnstored(key: SectionKey, pending: PendingUpdate): void {
    const seq = this.nextSeq++;
    this.published.set(pending, seq);
    this.send(
      { ...key, kind: "update", payload: pending.update, unstored: { seq, authorId: pending.authorId } },
      "draft update announcement",
      this.sharedWith.get(sectionName(key)),
    );
  }

  /**
   * Updates of a section are stored: those published on arrival are
   * confirmed to the other processes, those kept unpublished forgotten; the
   * rest (computed and stored by the server) are published now.
   */
  stored(key: SectionKey, updates: readonly PendingUpdate[]): void {
    if (!this.bus) return;
    const name = sectionName(key);
    const waiting = this.unpublished.get(name);
    for (const pending of updates) {
      const seq = this.published.get(pending);
      if (seq !== undefined) this.acknowledge(seq);
      else if (!waiting?.delete(pending)) this.publishStored(key, pending.update);
    }
    if (waiting?.size === 0) this.unpublished.delete(name);
  }

  /** Tells the other processes of an update already stored in a section's draft, so their open rooms of it apply it. */
  publishStored(key: SectionKey, update: Uint8Array): void {
    this.send({ ...key, kind: "update", payload: update }, "draft update announcement");
  }

  /** Publishes a presence change made here, if another process holds the section open (it is sent the whole presence when it opens it). */
  publishAwareness(key: SectionKey, update: Uint8Array): void {
    const peers = this.sharedWith.get(sectionName(key));
    if (peers?.length) this.send({ ...key, kind: "awareness", payload: update }, "presence announcement", peers);
  }

  /**
   * Publishes a message, to every process or to those `to` names; "stored"
   * for what was stored meanwhile rides along in the same frame. A failure
   * is logged once per frame (the messages of a turn's frame share its
   * promise), with what its first message was.
   */
  private send(message: BusMessage, what: string, to?: readonly string[]): void {
    if (!this.bus) return;
    this.flushAcknowledgements();
    this.publish(this.bus, message, what, to);
  }

  private publish(bus: CollabBus, message: BusMessage, what: string, to?: readonly string[]): void {
    const sent = bus.publish(message, to);
    if (sent === this.lastSent) return;
    this.lastSent = sent;
    sent.catch(logFailure(what));
  }

  private flushAcknowledgements(): void {
    if (this.acknowledgeTimer) clearTimeout(this.acknowledgeTimer);
    this.acknowledgeTimer = null;
    if (!this.bus || this.storedSeqs.length === 0) return;
    const seqs = this.storedSeqs;
    this.storedSeqs = [];
    // To the processes heard from: only they can have been sent (or relayed) the updates these numbers name.
    const peers = [...this.lastHeard.keys()];
    if (peers.length > 0) this.publish(this.bus, { ...NO_KEY, kind: "stored", payload: encodeSeqs(seqs) }, "stored confirmation", peers);
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
