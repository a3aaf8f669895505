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
import { DomainError, isDomainError } from "@/server/core/errors";
import { contentSchema } from "@/server/core/blocks";
import { branchNameSchema, documentNameSchema, quoteForMessage } from "@/server/core/names";
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
import { loadSections } from "@/server/store/objects";
import { userIdentities } from "@/server/store/users";
import { atLeast } from "@/server/policies/access";
import { type DocumentAccess, openDocument, requireDocument, sectionRules } from "@/server/access/documents";
import { assertNotDeleted, writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { commitMessageField, documentIdField } from "./document-fields";
import { keysVisibleOnBranch, prepareSectionContent } from "./section-content";
import { parseInput } from "./tool";

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
 * Brings each stored section draft to its version at `head`, storing the
 * change and applying it into an open room: from the draft's base version,
 * or from content of the caller's choosing (`fromContent`; undefined for a
 * section leaves its live edits as they are). Drafts of sections no longer on
 * the branch are dropped. Returns how many sections' content actually changed.
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
      // An open room here applies and publishes it; without one, the rooms other processes have open still must get it.
      if (live) live.applyStored(update);
      else rooms?.shareStored(sectionKey, update);
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

/**
 * The sections of the branch head the caller may change through the draft:
 * those it may see and edit. Commit and discard act on these only; live edits
 * in the others stay in the draft for someone who may commit or discard them.
 */
async function sectionsActedOn(db: Tx, access: DocumentAccess, branchName: string, head: BranchHead): Promise<ReadonlySet<string>> {
  const rules = await sectionRules(db, access, branchName);
  const versions = await loadSections(
    db,
    head.tree.sections.map((e) => e.blobHash),
  );
  return new Set(
    head.tree.sections.filter((e) => atLeast(rules.permission(e.sectionId, versions.get(e.blobHash)!), "edit")).map((e) => e.sectionId),
  );
}

const sameContent = (a: LiveSection, b: Pick<SectionVersion, "name" | "content">) =>
  a.name === b.name && JSON.stringify(a.content) === JSON.stringify(b.content);

/** A draft section as the `sections` tool would take it: its schemas and limits (the live face checked them on arrival too). */
const draftSectionSchema = z.strictObject({ name: documentNameSchema, content: contentSchema });

/** A draft section checked as the `sections` tool checks what it is sent; a refusal names the section. */
function draftAsWritten(draft: LiveSection, where: string): z.output<typeof draftSectionSchema> {
  try {
    return parseInput(draftSectionSchema, draft);
  } catch (error) {
    if (!isDomainError(error)) throw error;
    throw new DomainError(
      error.code,
      `Nothing was committed: ${where} cannot be stored as it is (${error.message.replace(/^Invalid parameters: | Fix it and retry\.$/g, "")}). Fix it in the editor and commit again, or discard it.`,
      error.details,
    );
  }
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
    const actedOn = await sectionsActedOn(ctx.db, opened, input.branchName, head);
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
          if (!draft || !actedOn.has(entry.sectionId) || sameContent(draft, current)) {
            sections.push(entry);
            continue;
          }
          const where = `the draft of section ${entry.sectionId}`;
          const checked = draftAsWritten(draft, where);
          const prepared = await prepareSectionContent(
            ctx,
            tx,
            {
              documentId: input.documentId,
              branchName: input.branchName,
              sectionId: entry.sectionId,
              name: checked.name,
              previous: current.content,
              where,
              keysVisibleInDocument: keysVisibleOnBranch(tx, access, state),
              commentAuthors: "as-marked",
            },
            checked.content,
          );
          const version: SectionVersion = { ...current, name: checked.name, content: prepared.content };
          newSections.push(version);
          newComments.push(...prepared.comments);
          names.push(checked.name);
          sections.push({ sectionId: entry.sectionId, blobHash: hashSection(version) });
        }
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
        message: `Nothing to commit: the draft of branch ${JSON.stringify(input.branchName)} is the same as its head${actedOn.size < head.tree.sections.length ? " in the sections you may edit" : ""}.`,
        coAuthorIds: [],
      };
    }
    const committed = await branchHead(ctx.db, key);
    // The draft now rests on the commit; what the commit stored differently (new comments anchored) flows back into it.
    await rewriteStoredDrafts(ctx.db, key, committed, (sectionId) => (actedOn.has(sectionId) ? drafted.get(sectionId) : undefined));
    await settleDraft(ctx.db, key, committed.commitId, through, leftInDraft(drafted, head, actedOn, await headVersions(ctx.db, head)));
    await liveRoomsFor(ctx.db)?.settled(key, committed);
    liveRoomsFor(ctx.db)?.announceHeadMove(key);
    return { ...key, commitId: committed.commitId, changed: true, message: written.message, coAuthorIds };
  });
}

async function headVersions(db: Tx, head: BranchHead): Promise<Map<string, SectionVersion>> {
  const versions = await loadSections(
    db,
    head.tree.sections.map((e) => e.blobHash),
  );
  return new Map(head.tree.sections.map((e) => [e.sectionId, versions.get(e.blobHash)!]));
}

/** Sections whose live edits a commit or discard left in the draft (the caller may not edit them): their editors stay credited. */
function leftInDraft(
  drafted: ReadonlyMap<string, LiveSection>,
  head: BranchHead,
  actedOn: ReadonlySet<string>,
  versions: ReadonlyMap<string, SectionVersion>,
): string[] {
  return head.tree.sections
    .map((e) => e.sectionId)
    .filter((id) => !actedOn.has(id) && drafted.has(id) && !sameContent(drafted.get(id)!, versions.get(id)!));
}

export function discardDraft(ctx: ActionContext, input: { documentId: string; branchName: string }): Promise<DiscardDraftResult> {
  const key: DraftKey = { documentId: input.documentId, branchName: input.branchName };
  return onDraft(ctx.db, key, async () => {
    const access = await openDocument(ctx.db, ctx.actor, input.documentId, "edit");
    const head = await draftAtHead(ctx.db, key);
    await liveRoomsFor(ctx.db)?.storedSoFar(key);
    const through = await lastDraftUpdateId(ctx.db, key);
    const actedOn = await sectionsActedOn(ctx.db, access, input.branchName, head);
    const left = leftInDraft(
      await draftContentAt(ctx.db, key, head, liveDocOf(ctx.db, key)),
      head,
      actedOn,
      await headVersions(ctx.db, head),
    );
    // From the draft as it is to the head's version: every live edit the caller may discard undone, for every open editor.
    const discardedSections = await rewriteStoredDrafts(ctx.db, key, head, (sectionId, doc) =>
      actedOn.has(sectionId) ? sectionFromYDoc(doc) : undefined,
    );
    await settleDraft(ctx.db, key, head.commitId, through, left);
    await liveRoomsFor(ctx.db)?.settled(key, head);
    return { ...key, headCommitId: head.commitId, discardedSections };
  });
}

/**
 * The draft's sections for `read` with `includeDraft`: only those with live
 * edits differ from the head. A section whose draft the content schema
 * refuses (the live face refuses such edits on arrival; a draft stored before
 * it did may hold one) is read as its head version, so `read` never answers
 * what its own output schema refuses.
 */
export async function draftSections(db: Tx, key: DraftKey): Promise<Map<string, LiveSection>> {
  const drafted = await draftContentAt(db, key, await branchHead(db, key), liveDocOf(db, key));
  for (const [sectionId, section] of drafted) {
    if (!readableDraftSchema.safeParse(section).success) drafted.delete(sectionId);
  }
  return drafted;
}

/** What `read` may answer of a draft section: the output schema's content (a name may be empty while someone retypes it). */
const readableDraftSchema = z.strictObject({ name: z.string().max(300), content: contentSchema });

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
  branchName: branchNameSchema.describe(
    "The branch whose draft (live edits since its head) becomes one commit on it. Only sections you may edit are committed; live edits in sections you may not edit or see stay in the draft for someone who may. The draft is checked as the `sections` tool checks content (an empty name, for one, is refused, naming the section).",
  ),
  commitMessage: commitMessageField.describe(
    "Commit message (max 1000 characters); default: one naming the changed sections. `Co-authored-by:` lines for the draft's other editors are added either way.",
  ),
});

const discardInput = z.strictObject({
  action: z.literal("discard"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe(
    "The branch whose draft is reset to its head in the sections you may edit; every open editor sees the reset. Live edits in sections you may not edit or see are kept.",
  ),
});

/** The input schemas of the draft actions, in the order agents read them. */
export const draftActionInputs = [commitInput, discardInput] as const;

export const draftHandlers = {
  commit: (ctx: ActionContext, input: z.output<typeof commitInput>) => commitDraft(ctx, input),
  discard: (ctx: ActionContext, input: z.output<typeof discardInput>) => discardDraft(ctx, input),
};
