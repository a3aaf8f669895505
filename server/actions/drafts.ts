/**
 * A branch's draft as actions see it: commit it (one commit through the
 * write path, compare-and-swap on the head it is based on), discard it, read
 * it, and say who has uncommitted edits and who is connected. Works whether
 * or not this process has the branch's rooms open (the CLI has none).
 */
import type * as Y from "yjs";
import { z } from "zod";
import type { Database } from "@/db/client";
import type { LiveSection } from "@/server/collab/codec";
import { sectionFromYDoc } from "@/server/collab/codec";
import { type BranchHead, blobHashIn, branchHead, docFromStored, draftContentAt, rebaseSection } from "@/server/collab/drafts-engine";
import { liveRoomsFor } from "@/server/collab/rooms";
import { hashSection, type SectionVersion, type TreeEntry } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { branchNameSchema, quoteForMessage } from "@/server/core/names";
import {
  draftEditorsByBranch,
  type DraftKey,
  deleteSectionDraft,
  draftEditors,
  ensureDraft,
  findSectionDraft,
  lastDraftUpdateId,
  listSectionDrafts,
  settleDraft,
} from "@/server/store/drafts";
import type { Tx } from "@/server/store/db";
import { userIdentities } from "@/server/store/users";
import { atLeast } from "@/server/policies/access";
import { openDocument, requireDocument, sectionChangesRefused } from "./access";
import { assertNotDeleted, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { commitMessageField, documentIdField } from "./document-fields";
import { keysVisibleOnBranch, prepareSectionContent } from "./section-content";

export interface CommitDraftResult {
  documentId: string;
  branchName: string;
  /** The branch head after the call. */
  commitId: string;
  /** False when the draft held no change: nothing was committed. */
  changed: boolean;
  message: string;
  /** Everyone credited with `Co-authored-by:` (editors of the draft other than the committer). */
  coAuthorIds: string[];
}

export interface DiscardDraftResult {
  documentId: string;
  branchName: string;
  /** The head the draft now equals. */
  headCommitId: string;
  /** Sections whose live edits were thrown away. */
  discardedSections: number;
}

export interface DraftStatus {
  /** Someone edited the draft since its last commit or discard. */
  uncommittedChanges: boolean;
  /** Who edited the draft since its last commit or discard (empty when nothing is uncommitted). */
  editorIds: string[];
  /** Users with a live connection to this branch: in any Quire process with QUIRE_REDIS_URL, else in this one. */
  connectedUserIds: string[];
}

/** Runs a draft operation after every earlier one on the branch in this process (rooms open or not). */
function onDraft<T>(db: Database, key: DraftKey, work: () => Promise<T>): Promise<T> {
  const rooms = liveRoomsFor(db);
  return rooms ? rooms.serial(key, work) : work();
}

const liveDocOf = (db: Tx, key: DraftKey) => (sectionId: string) => liveRoomsFor(db)?.liveSection({ ...key, sectionId })?.doc;

/**
 * Brings each stored section draft to its version at `head` (or, with
 * `target`, to content of the caller's choosing), storing the change and
 * applying it into an open room. Drafts of sections no longer on the branch
 * are dropped. Returns how many sections' content actually changed.
 */
async function rewriteStoredDrafts(
  db: Database,
  key: DraftKey,
  head: BranchHead,
  fromContent?: (sectionId: string, doc: Y.Doc) => LiveSection | undefined,
): Promise<number> {
  const rooms = liveRoomsFor(db);
  let changed = 0;
  for (const { sectionId, baseBlobHash } of await listSectionDrafts(db, key)) {
    const sectionKey = { ...key, sectionId };
    const next = blobHashIn(head.tree, sectionId);
    const live = rooms?.liveSection(sectionKey);
    if (!next) {
      if (!live) await deleteSectionDraft(db, sectionKey);
      continue;
    }
    if (live) await live.settled();
    const stored = live ? undefined : await findSectionDraft(db, sectionKey);
    const doc = live?.doc ?? (stored ? docFromStored(stored) : undefined);
    if (!doc) continue;
    const update = await rebaseSection(db, sectionKey, doc, baseBlobHash, next, fromContent?.(sectionId, doc));
    if (update) {
      changed += 1;
      if (live) live.applyStored(update);
    }
    if (!live) doc.destroy();
  }
  return changed;
}

/** Brings the stored draft up to the branch head (so what is read or committed has absorbed every commit). */
async function draftAtHead(db: Database, key: DraftKey): Promise<BranchHead> {
  const head = await branchHead(db, key);
  const draft = await ensureDraft(db, key, head.commitId);
  if (draft.baseCommitId !== head.commitId) await rewriteStoredDrafts(db, key, head);
  return head;
}

/** The commit message: the caller's or one naming the changed sections, then one `Co-authored-by:` line per other editor. */
async function draftCommitMessage(db: Database, given: string | undefined, sectionNames: string[], coAuthorIds: string[]): Promise<string> {
  const subject = given ?? `Commit live edits to ${sectionNames.map(quoteForMessage).join(", ")}`;
  if (coAuthorIds.length === 0) return subject;
  const identities = await userIdentities(db, coAuthorIds);
  const trailers = coAuthorIds.map((id) => identities.get(id)).map((who) => `Co-authored-by: ${who?.name} <${who?.email}>`);
  return `${subject}\n\n${trailers.join("\n")}`;
}

export function commitDraft(
  ctx: ActionContext,
  input: { documentId: string; branchName: string; commitMessage?: string },
): Promise<CommitDraftResult> {
  const key: DraftKey = { documentId: input.documentId, branchName: input.branchName };
  return onDraft(ctx.db, key, async () => {
    const opened = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
    const head = await draftAtHead(ctx.db, key);
    await liveRoomsFor(ctx.db)?.storedSoFar(key);
    const through = await lastDraftUpdateId(ctx.db, key);
    const drafted = await draftContentAt(ctx.db, key, head, liveDocOf(ctx.db, key));
    const coAuthorIds = (await draftEditors(ctx.db, key)).filter((id) => id !== ctx.actor.userId);
    const written = await writeBranch(
      ctx,
      { documentId: input.documentId, branchName: input.branchName },
      "read",
      async (state, tx, access) => {
        if (state.head.id !== head.commitId) {
          throw new DomainError(
            "BRANCH_MOVED",
            `Branch ${JSON.stringify(input.branchName)} moved while the draft was being committed; nothing was committed. Commit again: the draft takes in the new head first.`,
            { branchName: input.branchName },
          );
        }
        assertNotDeleted(state.tree, input.branchName);
        const versions = await state.loadSections(state.tree.sections.map((e) => e.blobHash));
        const sections: TreeEntry[] = [];
        const newSections: SectionVersion[] = [];
        const newComments = [];
        const names: string[] = [];
        for (const entry of state.tree.sections) {
          const current = versions.get(entry.blobHash)!;
          const draft = drafted.get(entry.sectionId);
          if (!draft || (draft.name === current.name && JSON.stringify(draft.content) === JSON.stringify(current.content))) {
            sections.push(entry);
            continue;
          }
          const prepared = await prepareSectionContent(
            ctx,
            tx,
            {
              documentId: input.documentId,
              branchName: input.branchName,
              sectionId: entry.sectionId,
              name: draft.name,
              previous: current.content,
              where: `the draft of section ${entry.sectionId}`,
              keysVisibleInDocument: keysVisibleOnBranch(access, state),
            },
            draft.content,
          );
          const version: SectionVersion = { ...current, name: draft.name, content: prepared.content };
          newSections.push(version);
          newComments.push(...prepared.comments);
          names.push(draft.name);
          sections.push({ sectionId: entry.sectionId, blobHash: hashSection(version) });
        }
        // The draft keeps each section's permission overrides, so the versions being replaced decide.
        const replaced = state.tree.sections.filter((e, i) => sections[i] !== e).map((e) => versions.get(e.blobHash)!);
        const forbidden = replaced.filter((v) => !atLeast(access.section(v), "edit"));
        if (forbidden.length > 0) throw sectionChangesRefused(access, forbidden, "commit this draft");
        const tree = { ...state.tree, sections };
        const message = await draftCommitMessage(ctx.db, input.commitMessage, names, coAuthorIds);
        return { tree, newSections, newComments, message, kind: "draft-commit", result: { message } };
      },
    );
    if (!written.changed) {
      // A changed draft is judged section by section above; with nothing to commit, one who may not edit is told that, not "nothing to commit".
      requireDocument(opened, "edit");
      return {
        ...key,
        commitId: head.commitId,
        changed: false,
        message: `Nothing to commit: the draft of branch ${JSON.stringify(input.branchName)} is the same as its head.`,
        coAuthorIds: [],
      };
    }
    const committed = await branchHead(ctx.db, key);
    // The draft now rests on the commit; what the commit stored differently (new comments anchored) flows back into it.
    await rewriteStoredDrafts(ctx.db, key, committed, (sectionId) => drafted.get(sectionId));
    await settleDraft(ctx.db, key, committed.commitId, through);
    await liveRoomsFor(ctx.db)?.settled(key, committed);
    liveRoomsFor(ctx.db)?.announceHeadMove(key);
    return { ...key, commitId: committed.commitId, changed: true, message: written.message, coAuthorIds };
  });
}

export function discardDraft(ctx: ActionContext, input: { documentId: string; branchName: string }): Promise<DiscardDraftResult> {
  const key: DraftKey = { documentId: input.documentId, branchName: input.branchName };
  return onDraft(ctx.db, key, async () => {
    await openDocument(ctx.db, ctx.actor, input.documentId, "edit");
    const head = await draftAtHead(ctx.db, key);
    await liveRoomsFor(ctx.db)?.storedSoFar(key);
    const through = await lastDraftUpdateId(ctx.db, key);
    // From the draft as it is to the head's version: every live edit undone, for every open editor.
    const discardedSections = await rewriteStoredDrafts(ctx.db, key, head, (_sectionId, doc) => sectionFromYDoc(doc));
    await settleDraft(ctx.db, key, head.commitId, through);
    await liveRoomsFor(ctx.db)?.settled(key, head);
    return { ...key, headCommitId: head.commitId, discardedSections };
  });
}

/** The draft's sections for `read` with `includeDraft`: only those with live edits differ from the head. */
export async function draftSections(db: Tx, key: DraftKey): Promise<Map<string, LiveSection>> {
  return draftContentAt(db, key, await branchHead(db, key), liveDocOf(db, key));
}

/** Per branch of a document: uncommitted edits, and who is connected. */
export async function draftStatuses(db: Database, documentId: string): Promise<(branchName: string) => DraftStatus> {
  const editors = await draftEditorsByBranch(db, documentId);
  const connected = (await liveRoomsFor(db)?.connectedUsers(documentId)) ?? new Map<string, string[]>();
  return (branchName) => {
    const editorIds = editors.get(branchName) ?? [];
    return { uncommittedChanges: editorIds.length > 0, editorIds, connectedUserIds: connected.get(branchName) ?? [] };
  };
}

const commitInput = z.strictObject({
  action: z.literal("commit"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The branch whose draft (live edits since its head) becomes one commit on it."),
  commitMessage: commitMessageField.describe(
    "Commit message (max 1000 characters); default: one naming the changed sections. `Co-authored-by:` lines for the draft's other editors are added either way.",
  ),
});

const discardInput = z.strictObject({
  action: z.literal("discard"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The branch whose draft is reset to its head; every open editor sees the reset."),
});

/** The input schemas of the draft actions, in the order agents read them. */
export const draftActionInputs = [commitInput, discardInput] as const;

export const draftHandlers = {
  commit: (ctx: ActionContext, input: z.output<typeof commitInput>) => commitDraft(ctx, input),
  discard: (ctx: ActionContext, input: z.output<typeof discardInput>) => discardDraft(ctx, input),
};
