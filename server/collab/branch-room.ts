/**
 * One branch's rooms in this process: per connection an outline (the section
 * ids it may see, written by the server), and the open section rooms. It
 * follows the branch head (`follow`, on the per-branch line: every section
 * brought to the new head, every connection decided again) and decides its
 * connections again when access changes (`redecide`): gone access closes a
 * connection, lowered access makes it read-only, and outlines show exactly
 * what each may now see. While a decision is under way the room's
 * connections are held (connection.ts), so no byte crosses before it.
 */
import type { DocumentAccess } from "@/server/access/documents";
import { canEditSection, storageKeysVisibleIn, visibleSectionIds } from "@/server/access/sections";
import { sectionRules } from "@/server/access/documents";
import { isNotFound } from "@/server/core/errors";
import { sameList } from "@/server/core/lists";
import { type DraftKey, setDraftBase } from "@/server/store/drafts";
import { loadSections } from "@/server/store/objects";
import { applyOutline } from "./codec";
import { CLOSE_ACCESS_LOST, closeNow, hold, type RoomConnection, release, throttle } from "./connection";
import { type BranchHead, branchHead } from "./drafts-engine";
import { LiveDoc, type LiveDocHooks } from "./live-doc";
import type { RoomServices } from "./room-services";
import { type SectionOwner, SectionRoom } from "./section-room";

/** An outline is the server's, written by it alone: nothing of it is stored (one hooks object for all of them). */
const OUTLINE_HOOKS: LiveDocHooks = { store: async () => {} };

/** Per principal, what one pass of decisions worked out (so a principal's connections ask once). */
interface DecisionMemo {
  readonly visible: Map<string, Promise<string[]>>;
  readonly keys: Map<string, Promise<ReadonlySet<string>>>;
}

function once<T>(memo: Map<string, Promise<T>>, key: string, work: () => Promise<T>): Promise<T> {
  const known = memo.get(key);
  if (known) return known;
  const answer = work();
  memo.set(key, answer);
  return answer;
}

export class BranchRoom implements SectionOwner {
  readonly outlines = new Map<RoomConnection, LiveDoc>();
  readonly sections = new Map<string, SectionRoom>();
  /**
   * Connections being taken in (their section opens on the branch line,
   * behind whatever waits there): the room is not forgotten meanwhile.
   * Without this, a connection that found the room while its last sections
   * were unloading was taken into a room its owner had just forgotten, which
   * no head move, access change or branch deletion reached any more.
   */
  private attaching = 0;
  /** Its owner forgot it (it held nothing): it takes no connection after that, a new room of the branch does. */
  private forgotten = false;
  /** The users last told of (shareUsers), sorted. */
  private sharedUsers: readonly string[] = [];

  constructor(
    private readonly services: RoomServices,
    readonly key: DraftKey,
    /** The head this room's sections and outlines show. */
    public head: BranchHead,
    /** Called when the room holds nothing any more (its owner forgets it). */
    private readonly emptied: (room: BranchRoom) => void,
  ) {}

  connections(): RoomConnection[] {
    return [...this.outlines.keys(), ...[...this.sections.values()].flatMap((s) => s.connections)];
  }

  /** The users connected here, sorted (a share visitor is nobody). */
  users(): string[] {
    return [...new Set(this.connections().flatMap((c) => (c.actor ? [c.actor.userId] : [])))].sort();
  }

  /** The document's default branch, as its connections' access knows it (null for a room with no connection). */
  defaultBranch(): string | null {
    return this.connections()[0]?.access.document.defaultBranch ?? null;
  }

  /** Holds every connection until `work` (a decision about them) is over. */
  async held<T>(work: () => Promise<T>): Promise<T> {
    const connections = hold(this.connections());
    try {
      return await work();
    } finally {
      release(connections);
    }
  }

  /**
   * Takes an admitted connection into its section room (opened on the branch
   * line) or its own outline, or closes it when it may no longer read what it
   * came for. False when the room was forgotten before it could (its owner
   * opens the branch's room again).
   */
  async attach(connection: RoomConnection, admittedHead: string): Promise<boolean> {
    if (this.forgotten) return false;
    this.attaching += 1;
    try {
      // Admitted on a head this room has not taken in yet (moved by another process, whose word is still on the bus): the
      // room takes it in first, or its older head would refuse what the newer one allows (a section created there is in no
      // tree the room knows, and was closed as hidden: the live fuzzer's seed 609453).
      if (admittedHead !== this.head.commitId) await this.services.queue.run(this.key, () => this.followStoredHead());
      return await this.takeIn(connection);
    } finally {
      this.attaching -= 1;
      // One whose socket closed while it was taken in left the room as it found it.
      this.forgetIfEmpty();
    }
  }

  /**
   * Decides the connection on what holds now and joins it to the room. Until
   * it joins it is in none of the room's sets, so no decision of the room
   * reaches it: decided again while access changed, the head moved or its
   * section unloaded as it was being decided, and never joined to a room
   * forgotten meanwhile (its branch deleted).
   */
  private async takeIn(connection: RoomConnection): Promise<boolean> {
    const { sectionId } = connection.address;
    let section: SectionRoom | null = null;
    let joined = false;
    try {
      for (;;) {
        section = sectionId === null ? null : await this.services.queue.run(this.key, () => this.openSection(sectionId));
        const accessChanges = this.services.accessChanges();
        const head = this.head;
        const visible = await this.decide(connection);
        // Nothing is awaited from here on: what is checked below still holds when the connection joins.
        if (this.forgotten) return false;
        if (visible === null) return true;
        const changed = accessChanges !== this.services.accessChanges() || head !== this.head;
        if (changed || (sectionId !== null && this.sections.get(sectionId) !== section)) continue;
        this.join(connection, section, visible);
        joined = true;
        return true;
      }
    } finally {
      // Closed or failed, it may have been the one that opened the section: a section room nobody is in is unloaded as
      // after a last leave.
      if (!joined && section && section.live.connectionCount === 0) void this.unloadSection(section.key.sectionId, section);
    }
  }

  private join(connection: RoomConnection, section: SectionRoom | null, visible: string[]): void {
    const { socket } = connection;
    let live: LiveDoc<RoomConnection>;
    if (section) live = section.live;
    else {
      // The outline is the server's: each connection has its own, listing only what it may see.
      live = new LiveDoc([], OUTLINE_HOOKS);
      applyOutline(live.doc, visible);
      this.outlines.set(connection, live);
    }
    live.connect(connection);
    this.shareUsers();
    socket.on("message", (data: Buffer) => {
      if (throttle(connection)) this.services.stats.throttledConnections += 1;
      try {
        live.receive(connection, data);
      } catch {
        socket.close(1003, "malformed message");
      }
    });
    if (socket.readyState !== socket.OPEN) this.detach(connection, live);
    else socket.on("close", () => this.detach(connection, live));
  }

  /**
   * Tells who is connected, when that changed: other processes (the shared
   * presence) and this process's draft listeners. A user's second connection
   * (an editor opens one per section on screen) changes nothing, and costs no
   * Redis write; the shared entry is renewed by the fan-out's refresh.
   */
  shareUsers(): void {
    const users = this.users();
    if (sameList(users, this.sharedUsers)) return;
    this.sharedUsers = users;
    void this.services.fanOut.sharePresence(this.key, users);
    this.services.changes.changed(this.key);
  }

  private detach(connection: RoomConnection, live: LiveDoc<RoomConnection>): void {
    live.disconnect(connection);
    this.services.stats.droppedUpdates += connection.droppedUpdates;
    connection.droppedUpdates = 0;
    const sectionId = connection.address.sectionId;
    if (sectionId) {
      const section = this.sections.get(sectionId);
      if (section && section.live.connectionCount === 0) void this.unloadSection(sectionId, section);
    } else {
      this.outlines.delete(connection);
      live.destroy();
    }
    // Counted once the connection is out of the room's sets (above), so the list no longer holds it.
    this.shareUsers();
    this.forgetIfEmpty();
  }

  /** Its branch was deleted: a connection that comes for it after this goes to a new room of the branch (which cannot open). */
  forget(): void {
    this.forgotten = true;
  }

  private forgetIfEmpty(): void {
    if (this.forgotten || this.attaching > 0 || this.outlines.size > 0 || this.sections.size > 0) return;
    this.forgotten = true;
    this.emptied(this);
  }

  /**
   * Loads a section's draft into a room, bringing it up to the branch head
   * first if it was based on an older one. On the branch line. Null once the
   * room is forgotten (a deleted branch's draft is not loaded again).
   */
  private async openSection(sectionId: string): Promise<SectionRoom | null> {
    if (this.forgotten) return null;
    const open = this.sections.get(sectionId);
    if (open) return open;
    const section = await SectionRoom.open(this.services, { ...this.key, sectionId }, this.head.tree, this);
    this.sections.set(sectionId, section);
    await section.bringToHead(this.head.tree);
    return section;
  }

  /** A section room whose storing failed closed: forgotten (its clients reconnect to a new one). */
  sectionFailed(failed: SectionRoom): void {
    if (this.sections.get(failed.key.sectionId) === failed) this.sections.delete(failed.key.sectionId);
    this.forgetIfEmpty();
  }

  /** Unloads a section whose last connection left, once every update it received is stored (nothing pending is lost). */
  private async unloadSection(sectionId: string, section: SectionRoom): Promise<void> {
    await this.services.queue.run(this.key, async () => {
      await section.live.settled().catch(() => undefined);
      if (section.live.connectionCount > 0 || this.sections.get(sectionId) !== section) return;
      this.sections.delete(sectionId);
      // Taken before the room closes (nothing awaited in between), stored before the next opening of the section reads it.
      const storing = section.storeUnconfirmed();
      section.close();
      this.forgetIfEmpty();
      await storing;
      if (section.hasUncompacted) await this.services.compact({ ...this.key, sectionId });
    });
  }

  /**
   * Takes a new head in (on the branch line): the draft's base, every open
   * section brought to it, every connection decided again. A section already
   * on its version there (a draft commit rebased it onto its own commit) is
   * left as it is.
   */
  async follow(head: BranchHead): Promise<void> {
    if (head.commitId === this.head.commitId) return;
    this.head = head;
    await setDraftBase(this.services.db, this.key, head.commitId);
    await this.redecide();
    for (const section of this.sections.values()) await section.bringToHead(head.tree);
  }

  /** Takes in the branch's head as stored, its connections held meanwhile as for any head move (on the branch line). */
  private async followStoredHead(): Promise<void> {
    const head = await branchHead(this.services.db, this.key).catch((error: unknown) => {
      // Deleted: its deletion closes the room and whoever is being taken in.
      if (isNotFound(error)) return null;
      throw error;
    });
    if (head) await this.held(() => this.follow(head));
  }

  /**
   * Decides every connection again (access changed, or the head moved): gone
   * access closes it, lowered access makes it read-only at once, and outlines
   * show exactly what each may now see.
   */
  async redecide(): Promise<void> {
    // What a principal sees is worked out once per pass, however many of its connections the room has.
    const memo: DecisionMemo = { visible: new Map(), keys: new Map() };
    for (const connection of this.connections()) {
      const visible = await this.decide(connection, memo);
      const outline = connection.address.sectionId === null ? this.outlines.get(connection) : undefined;
      if (visible && outline) applyOutline(outline.doc, visible);
    }
  }

  /**
   * Decides one connection on the head and access now: closed (null) when it
   * may no longer read the document or its section; otherwise its access,
   * whether it may edit and the section ids it may see (for an outline).
   */
  private async decide(connection: RoomConnection, memo: DecisionMemo = { visible: new Map(), keys: new Map() }): Promise<string[] | null> {
    let access: DocumentAccess;
    try {
      ({ access } = await this.services.authorize.document(connection.credential, this.key.documentId, "read"));
    } catch {
      closeNow(connection, CLOSE_ACCESS_LOST, "access revoked");
      return null;
    }
    connection.access = this.services.decisions.access(access);
    const principal = `${connection.actor?.userId ?? "share"}|${connection.actor?.principal ?? ""}|${access.permission}`;
    const { tree } = this.head;
    const visible = await once(memo.visible, principal, () => visibleSectionIds(this.services.db, access, this.key.branchName, tree));
    const sectionId = connection.address.sectionId;
    if (sectionId === null) return visible;
    if (!visible.includes(sectionId)) {
      closeNow(connection, CLOSE_ACCESS_LOST, "section hidden");
      return null;
    }
    await this.decideSectionConnection(connection, sectionId, () => once(memo.keys, principal, () => this.keysVisibleTo(access)));
    return visible;
  }

  /** What a section connection may do now: edit (or only read), and which storage keys its edits may use. */
  private async decideSectionConnection(
    connection: RoomConnection,
    sectionId: string,
    keysVisible: () => Promise<ReadonlySet<string>>,
  ): Promise<void> {
    connection.readOnly = !(await canEditSection(this.services.db, connection.access, this.key.branchName, this.head.tree, sectionId));
    if (!connection.readOnly) connection.usableKeys = this.services.decisions.keys(await keysVisible());
  }

  /** The storage keys a principal sees in the document on the head (those its live edits may put into a block). */
  private async keysVisibleTo(access: DocumentAccess): Promise<ReadonlySet<string>> {
    const { db } = this.services;
    return storageKeysVisibleIn(await sectionRules(db, access, this.key.branchName), this.head.tree, (hashes) => loadSections(db, hashes));
  }
}
