/**
 * Live drafts as a service: what the actions ask of a branch's draft —
 * commit it, discard it, read it, its status, who is connected, and when it
 * changed — on `ActionContext.live`, as `files` is. The server's service
 * works through its rooms (`DraftRooms`, rooms.ts): open sections are read
 * and rewritten in their live docs, so every editor sees a commit's or
 * discard's effect at once, and what it stores for sections open only in
 * other processes is published to them. Without rooms (a context built
 * outside a server: benches, tests; the CLI builds none today)
 * `storageOnlyLiveDrafts` runs the same operations on storage alone: nobody
 * is connected there and no other process hears of it, as of any write made
 * without Redis; a room opened later starts from the stored draft.
 *
 * Access is the caller's business (the actions decide it and write the
 * commit through the one write path); this service keeps drafts consistent
 * with the branch head: commit and discard run on the branch's line
 * (branch-queue.ts), the one the rooms follow head moves on; reading writes
 * nothing.
 */
import * as Y from "yjs";
import type { Database } from "@/db/client";
import type { Actor } from "@/server/access/actor";
import type { SectionVersion } from "@/server/core/document-model";
import { canonicalJson } from "@/server/core/hashing";
import {
  appendDraftUpdates,
  type DraftAgentEditor,
  type DraftKey,
  draftAgentEditorsOf,
  deleteSectionDraft,
  draftEditors,
  draftEditorsByBranch,
  ensureDraft,
  findSectionDraft,
  findSectionDrafts,
  lastDraftUpdateId,
  listSectionDrafts,
  type SectionKey,
  settleDraft,
} from "@/server/store/drafts";
import { deleteDraft } from "@/server/store/document-management";
import { loadSections } from "@/server/store/objects";
import { BranchQueue } from "./branch-queue";
import { type LiveSection, newServerDoc, sectionFromYDoc } from "./codec";
import { DraftChanges } from "./draft-changes";
import { type BranchHead, blobHashIn, branchHead, docFromStored, liveOf, loadOrCreateSectionDraft, rebaseSection } from "./drafts-engine";
import type { LiveDoc } from "./live-doc";
import { sectionChangeUpdate } from "./section-change";

export type { BranchHead, LiveSection };

/** Who makes a draft edit: the person, and the agent acting for them (null for the person themselves). */
export type DraftAuthor = Pick<Actor, "userId" | "agent">;

/** A branch's draft in one line: has it uncommitted edits, by whom, and who is connected. */
export interface DraftStatus {
  /** The draft's text differs from the branch head (edits undone back to the committed text leave it false). */
  uncommittedChanges: boolean;
  /** Who edited the draft since its last commit or discard (empty when nothing is uncommitted). */
  editorIds: string[];
  /** Users with a live connection to this branch: in any Quire process with QUIRE_REDIS_URL, else in this one. */
  connectedUserIds: string[];
}

/** One branch's draft against its head, section by section (before any access filter: the caller applies its own). */
export interface BranchDraftStatus extends DraftStatus {
  head: BranchHead;
  /** The sections whose draft (name or content) differs from the head, in the head's order, with the draft's name. */
  changedSections: Array<{ sectionId: string; name: string }>;
}

/** What a commit is handed: the draft brought to the head, every edit made so far stored. */
export interface DraftToCommit {
  /** The head the draft has absorbed: the commit goes on it or not at all. */
  head: BranchHead;
  /** Each drafted section as it stands on `head` (sections no longer on the branch left out). */
  sections: ReadonlyMap<string, LiveSection>;
  /** Who edited the draft since its last commit or discard. */
  editorIds: string[];
  /** The agents among them (an API token's live connection, an OAuth client's comment), with the person each acted for. */
  agentEditors: DraftAgentEditor[];
}

export interface DraftCommitted<T> {
  result: T;
  /** The sections whose draft the commit took in (the caller may edit them); null when nothing was committed. */
  took: ReadonlySet<string> | null;
}

export interface LiveDrafts {
  /**
   * Commits the branch's draft: `write` gets the draft at the head and
   * writes its commit (through the one write path); the draft then rests on
   * that commit (what the commit stored differently, such as new comments'
   * anchors, flows back into it), and the editors of the sections it took
   * are settled. Sections it did not take keep their edits and editors.
   */
  commit<T>(key: DraftKey, write: (draft: DraftToCommit) => Promise<DraftCommitted<T>>): Promise<T>;
  /** Resets the sections `discardable` names (of the head) to the head, for every open editor; the rest keep their edits. */
  discard(
    key: DraftKey,
    discardable: (head: BranchHead) => Promise<ReadonlySet<string>>,
  ): Promise<{ headCommitId: string; discardedSections: number }>;
  /** The draft's sections as they stand on the head (only those with a draft; reading writes nothing). */
  read(key: DraftKey): Promise<Map<string, LiveSection>>;
  /**
   * The server's own edit of one section's draft (a posted comment's anchor),
   * on the branch's line: `change` edits a copy of the draft as it is now
   * (returning what it decided; throwing changes nothing); `confirm` then
   * runs with that answer, before the edit is stored (its refusal stores
   * nothing); the edit is stored as `author`'s (its agent credited), applied to the open room
   * (every editor sees it) and published to other processes' rooms.
   */
  edit<T>(key: SectionKey, author: DraftAuthor, change: (doc: Y.Doc) => T, confirm: (result: T) => Promise<void>): Promise<T>;
  /** Per branch of a document: uncommitted edits (by content, as `status` decides), and who is connected. */
  statuses(documentId: string): Promise<(branchName: string) => DraftStatus>;
  /** One branch's draft against its head: which sections differ, by whom, who is connected. */
  status(key: DraftKey): Promise<BranchDraftStatus>;
  /** Users connected to a document's rooms, per branch. */
  connected(documentId: string): Promise<Map<string, string[]>>;
  /**
   * Calls `listener` (debounced, DRAFT_CHANGE_DELAY_MS) when a branch's draft
   * content, its connected people or its head change in this process
   * (updates and head moves from other processes included, for rooms open
   * here); returns the unsubscribe function.
   */
  onDraftChanged(listener: (key: { documentId: string; branchName: string }) => void): () => void;
  /**
   * Removes a branch's draft with the branch, on the branch's line: `remove`
   * gets who edited the draft since its last commit (it may refuse) and
   * deletes the branch; then the branch's open rooms close their connections
   * (CLOSE_BRANCH_GONE, in every process) and what they stored meanwhile is
   * dropped too.
   */
  dropBranch<T>(key: DraftKey, remove: (draft: { editorIds: string[] }) => Promise<T>): Promise<T>;
}

/** A section room open in this process (section-room.ts). */
export interface OpenSection {
  readonly live: Pick<LiveDoc, "doc" | "settled" | "applyStored">;
  /** Moves the draft from the committed version `from` to `next` in the room (stored, applied, broadcast); returns the change or null. */
  rebase(from: string | null, next: string, fromContent?: LiveSection): Promise<Uint8Array | null>;
}

/**
 * What the service needs of a process's open rooms (rooms.ts). The rooms
 * follow every head move on the same per-branch line, after the operation
 * that made it: a commit's sections are already rebased onto its commit by
 * then, so following it changes nothing in them.
 */
export interface DraftRooms {
  /** The rooms' per-branch line: draft operations queue behind room openings and head moves. */
  readonly queue: BranchQueue;
  readonly changes: DraftChanges;
  /**
   * Resolves once every update the document's open sections (of one branch,
   * or of every branch) have applied is stored, here and in the other
   * processes (fan-out.ts, othersStored).
   */
  storedSoFar(documentId: string, branchName?: string): Promise<void>;
  /** The same for the other processes' rooms only (a read takes the rooms here as they are). */
  storedElsewhere(documentId: string, branchName?: string): Promise<void>;
  openSection(key: SectionKey): OpenSection | undefined;
  /** Publishes an update stored in a section's draft without a room here, for other processes' rooms. */
  shareStored(key: SectionKey, update: Uint8Array): void;
  connectedUsers(documentId: string): Promise<Map<string, string[]>>;
  /** The branch is gone: its room here closes every connection (CLOSE_BRANCH_GONE), and other processes' rooms are told. */
  closeBranch(key: DraftKey): Promise<void>;
}

const EMPTY_SECTION: LiveSection = { name: "", content: [] };

/** Equal content whatever order a block's fields were set in (a live block's come in the order its map received them). */
const sameContent = (a: LiveSection, b: Pick<SectionVersion, "name" | "content">) =>
  a.name === b.name && canonicalJson(a.content) === canonicalJson(b.content);

class LiveDraftsService implements LiveDrafts {
  private readonly queue: BranchQueue;
  private readonly changes: DraftChanges;

  constructor(
    private readonly db: Database,
    private readonly rooms: DraftRooms | null,
  ) {
    this.queue = rooms?.queue ?? new BranchQueue();
    this.changes = rooms?.changes ?? new DraftChanges();
  }

  commit<T>(key: DraftKey, write: (draft: DraftToCommit) => Promise<DraftCommitted<T>>): Promise<T> {
    return this.queue.run(key, async () => {
      const head = await this.atHead(key);
      await this.rooms?.storedSoFar(key.documentId, key.branchName);
      const through = await lastDraftUpdateId(this.db, key);
      const sections = await this.contentAt(key, head);
      const [editorIds, agentEditors] = await Promise.all([draftEditors(this.db, key), draftAgentEditorsOf(this.db, key)]);
      const written = await write({ head, sections, editorIds, agentEditors });
      const took = written.took;
      if (!took) return written.result;
      const committed = await branchHead(this.db, key);
      // The draft now rests on the commit; what the commit stored differently (new comments anchored) flows back into it.
      await this.rewrite(key, committed, (sectionId) => (took.has(sectionId) ? sections.get(sectionId) : undefined));
      await settleDraft(this.db, key, committed.commitId, through, await this.leftInDraft(sections, head, took));
      this.changes.changed(key);
      return written.result;
    });
  }

  discard(
    key: DraftKey,
    discardable: (head: BranchHead) => Promise<ReadonlySet<string>>,
  ): Promise<{ headCommitId: string; discardedSections: number }> {
    return this.queue.run(key, async () => {
      const head = await this.atHead(key);
      await this.rooms?.storedSoFar(key.documentId, key.branchName);
      const through = await lastDraftUpdateId(this.db, key);
      const actedOn = await discardable(head);
      const left = await this.leftInDraft(await this.contentAt(key, head), head, actedOn);
      // From the draft as it is to the head's version: every live edit the caller may discard undone, for every open editor.
      const discardedSections = await this.rewrite(key, head, (sectionId, doc) =>
        actedOn.has(sectionId) ? sectionFromYDoc(doc) : undefined,
      );
      await settleDraft(this.db, key, head.commitId, through, left);
      this.changes.changed(key);
      return { headCommitId: head.commitId, discardedSections };
    });
  }

  /**
   * On the branch's line, like commit and discard: read in the middle of a
   * commit (its head moved, its sections not yet rebased onto it), the draft
   * would be read as if the committed change were someone else's, applied
   * over the very edits it was made from (a comment typed live read twice,
   * its tags interleaved with the committed ones).
   */
  read(key: DraftKey): Promise<Map<string, LiveSection>> {
    return this.queue.run(key, async () => {
      // What other processes' rooms applied a moment ago is read from storage: stored first.
      await this.rooms?.storedElsewhere(key.documentId, key.branchName);
      return this.contentAt(key, await branchHead(this.db, key));
    });
  }

  edit<T>(key: SectionKey, author: DraftAuthor, change: (doc: Y.Doc) => T, confirm: (result: T) => Promise<void>): Promise<T> {
    const draft = { documentId: key.documentId, branchName: key.branchName };
    return this.queue.run(draft, async () => {
      const head = await this.atHead(draft);
      const open = this.rooms?.openSection(key);
      if (open) await open.live.settled();
      const stored = open ? null : await loadOrCreateSectionDraft(this.db, key, head.tree);
      const doc = stored ? docFromStored(stored) : newServerDoc();
      if (open) Y.applyUpdate(doc, Y.encodeStateAsUpdate(open.live.doc));
      const updates: Uint8Array[] = [];
      doc.on("update", (update: Uint8Array) => updates.push(update));
      try {
        const result = change(doc);
        await confirm(result);
        if (updates.length === 0) return result;
        // Computed on a copy: people typing meanwhile merge with it like any concurrent edit.
        const update = Y.mergeUpdates(updates);
        await appendDraftUpdates(this.db, [{ ...key, update, authorId: author.userId, agent: author.agent }]);
        if (open) open.live.applyStored(update);
        else this.rooms?.shareStored(key, update);
        this.changes.changed(draft);
        return result;
      } finally {
        doc.destroy();
      }
    });
  }

  async statuses(documentId: string): Promise<(branchName: string) => DraftStatus> {
    // Edits typed here a moment ago count: who edited is read from storage.
    await this.rooms?.storedSoFar(documentId);
    const [editors, connected] = await Promise.all([draftEditorsByBranch(this.db, documentId), this.connected(documentId)]);
    // Only a branch someone edited can differ from its head; each such branch is decided by `status`, by content, as
    // draft_status is (a draft undone back to the committed text is not uncommitted, whichever action asks).
    const edited = new Map<string, DraftStatus>();
    for (const branchName of editors.keys()) {
      const { uncommittedChanges, editorIds } = await this.status({ documentId, branchName });
      edited.set(branchName, { uncommittedChanges, editorIds, connectedUserIds: connected.get(branchName) ?? [] });
    }
    return (branchName) =>
      edited.get(branchName) ?? { uncommittedChanges: false, editorIds: [], connectedUserIds: connected.get(branchName) ?? [] };
  }

  /** On the branch's line, as `read` is (what changed is read from the draft). */
  status(key: DraftKey): Promise<BranchDraftStatus> {
    return this.queue.run(key, () => this.statusNow(key));
  }

  private async statusNow(key: DraftKey): Promise<BranchDraftStatus> {
    // Edits typed here a moment ago count: who edited is read from storage.
    await this.rooms?.storedSoFar(key.documentId, key.branchName);
    const head = await branchHead(this.db, key);
    const [editorIds, connected] = await Promise.all([draftEditors(this.db, key), this.connected(key.documentId)]);
    // Nobody edited since the last commit or discard: the draft equals the head, with nothing to compare.
    const changedSections = editorIds.length === 0 ? [] : await this.changedSections(key, head);
    // Edits undone back to the committed text leave nothing to commit: the status says what the text says, not who typed.
    const uncommittedChanges = changedSections.length > 0;
    return {
      head,
      uncommittedChanges,
      editorIds: uncommittedChanges ? editorIds : [],
      connectedUserIds: connected.get(key.branchName) ?? [],
      changedSections,
    };
  }

  async connected(documentId: string): Promise<Map<string, string[]>> {
    return (await this.rooms?.connectedUsers(documentId)) ?? new Map();
  }

  onDraftChanged(listener: (key: { documentId: string; branchName: string }) => void): () => void {
    return this.changes.listen(listener);
  }

  dropBranch<T>(key: DraftKey, remove: (draft: { editorIds: string[] }) => Promise<T>): Promise<T> {
    return this.queue.run(key, async () => {
      await this.rooms?.storedSoFar(key.documentId, key.branchName);
      const result = await remove({ editorIds: await draftEditors(this.db, key) });
      await this.rooms?.closeBranch(key);
      // Updates the rooms stored between the branch's removal and their closing.
      await deleteDraft(this.db, key);
      this.changes.changed(key);
      return result;
    });
  }

  private async changedSections(key: DraftKey, head: BranchHead): Promise<Array<{ sectionId: string; name: string }>> {
    const drafted = await this.contentAt(key, head);
    const versions = await this.headVersions(head);
    return head.tree.sections
      .filter((e) => drafted.has(e.sectionId) && !sameContent(drafted.get(e.sectionId)!, versions.get(e.sectionId)!))
      .map((e) => ({ sectionId: e.sectionId, name: drafted.get(e.sectionId)!.name }));
  }

  /** Brings the stored draft up to the branch head (so what is read or committed has absorbed every commit). */
  private async atHead(key: DraftKey): Promise<BranchHead> {
    const head = await branchHead(this.db, key);
    const draft = await ensureDraft(this.db, key, head.commitId);
    if (draft.baseCommitId !== head.commitId) await this.rewrite(key, head);
    return head;
  }

  /**
   * Brings each stored section draft to its version at `head`, storing the
   * change and applying it into an open room: from the draft's base version,
   * or from content of the caller's choosing (`fromContent`; undefined for a
   * section leaves its live edits as they are). Drafts of sections no longer
   * on the branch are dropped. Returns how many sections' content changed.
   */
  private async rewrite(
    key: DraftKey,
    head: BranchHead,
    fromContent?: (sectionId: string, doc: Y.Doc) => LiveSection | undefined,
  ): Promise<number> {
    let changed = 0;
    for (const { sectionId, baseBlobHash } of await listSectionDrafts(this.db, key)) {
      const sectionKey = { ...key, sectionId };
      const next = blobHashIn(head.tree, sectionId);
      const open = this.rooms?.openSection(sectionKey);
      if (!next) {
        if (!open) await deleteSectionDraft(this.db, sectionKey);
        continue;
      }
      if (open) {
        // Its content as stored so far (what the commit or discard's log position covers).
        await open.live.settled();
        if (await open.rebase(baseBlobHash, next, fromContent?.(sectionId, open.live.doc))) changed += 1;
        continue;
      }
      const stored = await findSectionDraft(this.db, sectionKey);
      if (!stored) continue;
      const doc = docFromStored(stored);
      const update = await rebaseSection(this.db, sectionKey, doc, baseBlobHash, next, fromContent?.(sectionId, doc));
      doc.destroy();
      if (!update) continue;
      changed += 1;
      // No room here applies it; the rooms other processes have open still must get it.
      this.rooms?.shareStored(sectionKey, update);
    }
    return changed;
  }

  /**
   * The draft's sections as they would be on `head`: each stored draft, with
   * the change from its base to its version at `head` applied on a copy (so
   * reading never writes). Sections no longer on the branch are left out.
   */
  private async contentAt(key: DraftKey, head: BranchHead): Promise<Map<string, LiveSection>> {
    const content = new Map<string, LiveSection>();
    const drafts = (await listSectionDrafts(this.db, key)).filter((d) => blobHashIn(head.tree, d.sectionId) !== null);
    const openDoc = (sectionId: string) => this.rooms?.openSection({ ...key, sectionId })?.live.doc;
    // The sections no room here has open, read from storage all at once.
    const closed = await findSectionDrafts(
      this.db,
      key,
      drafts.filter((d) => !openDoc(d.sectionId)).map((d) => d.sectionId),
    );
    for (const { sectionId, baseBlobHash } of drafts) {
      const next = blobHashIn(head.tree, sectionId)!;
      const open = openDoc(sectionId);
      if (open && baseBlobHash === next) {
        // Already on the head: read as it is (reading changes nothing, so no copy).
        content.set(sectionId, sectionFromYDoc(open));
        continue;
      }
      let doc: Y.Doc;
      if (open) {
        doc = newServerDoc();
        Y.applyUpdate(doc, Y.encodeStateAsUpdate(open));
      } else {
        // A room that closed since is read on its own.
        const stored = closed.get(sectionId) ?? (await findSectionDraft(this.db, { ...key, sectionId }));
        if (!stored) continue;
        doc = docFromStored(stored);
      }
      if (baseBlobHash !== next) {
        const versions = await loadSections(
          this.db,
          [baseBlobHash, next].filter((h): h is string => h !== null),
        );
        const update = await sectionChangeUpdate(
          doc,
          baseBlobHash ? liveOf(versions.get(baseBlobHash)!) : EMPTY_SECTION,
          liveOf(versions.get(next)!),
        );
        if (update) Y.applyUpdate(doc, update);
      }
      content.set(sectionId, sectionFromYDoc(doc));
      doc.destroy();
    }
    return content;
  }

  private async headVersions(head: BranchHead): Promise<Map<string, SectionVersion>> {
    const versions = await loadSections(
      this.db,
      head.tree.sections.map((e) => e.blobHash),
    );
    return new Map(head.tree.sections.map((e) => [e.sectionId, versions.get(e.blobHash)!]));
  }

  /** Sections whose live edits a commit or discard left in the draft (the caller could not act on them): their editors stay credited. */
  private async leftInDraft(drafted: ReadonlyMap<string, LiveSection>, head: BranchHead, actedOn: ReadonlySet<string>): Promise<string[]> {
    const versions = await this.headVersions(head);
    return head.tree.sections
      .map((e) => e.sectionId)
      .filter((id) => !actedOn.has(id) && drafted.has(id) && !sameContent(drafted.get(id)!, versions.get(id)!));
  }
}

/** The server's live drafts: through its open rooms. */
export function roomsLiveDrafts(db: Database, rooms: DraftRooms): LiveDrafts {
  return new LiveDraftsService(db, rooms);
}

/**
 * Live drafts where this process has no rooms (the CLI; contexts built
 * outside a server): the same operations on storage alone. Nobody is
 * connected here; `onDraftChanged` hears this process's commits and discards.
 */
export function storageOnlyLiveDrafts(db: Database): LiveDrafts {
  return new LiveDraftsService(db, null);
}
