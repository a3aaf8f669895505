/**
 * The draft actions (`documents` commit, discard, draft_status) and what
 * `read` takes of a draft: access and the write are decided here; the
 * draft's own mechanics (bringing it to the head, settling it after a
 * commit, open rooms) are the live layer's, reached through `ctx.live`.
 * A commit is one commit through the write path, on the head the draft
 * absorbed (BRANCH_MOVED otherwise).
 */
import { z } from "zod";
import type { Database } from "@/db/client";
import type { BranchHead, LiveDrafts, LiveSection } from "@/server/collab/live-drafts";
import { hashSection, type SectionVersion, type TreeEntry } from "@/server/core/document-model";
import { DomainError, isDomainError } from "@/server/core/errors";
import { contentSchema } from "@/server/core/blocks";
import { branchNameSchema, documentNameSchema, quoteForMessage } from "@/server/core/names";
import type { AgentIdentity } from "@/db/schema-agents";
import { coAuthorTrailer } from "@/server/core/commit-messages";
import type { DraftAgentEditor, DraftKey } from "@/server/store/drafts";
import type { Tx } from "@/server/store/db";
import { loadSections } from "@/server/store/objects";
import { userIdentities } from "@/server/store/users";
import { atLeast } from "@/server/policies/access";
import { type DocumentAccess, openDocument, requireDocument, sectionRules } from "@/server/access/documents";
import { visibleSectionIds } from "@/server/access/sections";
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

/** One `Co-authored-by:` credit: a person, or an agent acting for them. */
interface DraftCredit {
  userId: string;
  agent: AgentIdentity | null;
}

const sameAgent = (a: AgentIdentity | null, b: AgentIdentity | null) => a !== null && b !== null && a.kind === b.kind && a.id === b.id;

/**
 * Who a live commit credits, in the order of the editors' ids: each agent that edited the draft as "<agent> via
 * <person>" (the committer's own agents too, but not the agent committing), and each other person who edited it
 * with no agent of theirs credited (the draft log names people only, so a person whose agent edited is credited
 * through that agent's line, which names them).
 */
function draftCredits(committer: DraftCredit, editorIds: readonly string[], agentEditors: readonly DraftAgentEditor[]): DraftCredit[] {
  const credits: DraftCredit[] = [];
  for (const userId of [...new Set([...editorIds, ...agentEditors.map((e) => e.userId)])].sort()) {
    const agents = agentEditors.filter((e) => e.userId === userId).sort((a, b) => a.agent.name.localeCompare(b.agent.name));
    if (agents.length === 0 && userId !== committer.userId) credits.push({ userId, agent: null });
    for (const { agent } of agents)
      if (!(userId === committer.userId && sameAgent(agent, committer.agent))) credits.push({ userId, agent });
  }
  return credits;
}

/** The commit message: the caller's or one naming the changed sections, then one `Co-authored-by:` line per credit. */
async function draftCommitMessage(
  db: Database,
  given: string | undefined,
  sectionNames: string[],
  credits: DraftCredit[],
): Promise<string> {
  const subject = given ?? `Commit live edits to ${sectionNames.map(quoteForMessage).join(", ")}`;
  if (credits.length === 0) return subject;
  const identities = await userIdentities(
    db,
    credits.map((c) => c.userId),
  );
  const trailers = credits.map(({ userId, agent }) => coAuthorTrailer(identities.get(userId)!, agent));
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
  return ctx.live.commit<CommitDraftResult>(key, async ({ head, sections: drafted, editorIds, agentEditors }) => {
    const opened = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
    const actedOn = await sectionsActedOn(ctx.db, opened, input.branchName, head);
    const coAuthorIds = editorIds.filter((id) => id !== ctx.actor.userId);
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
        const message = await draftCommitMessage(ctx.db, input.commitMessage, names, draftCredits(ctx.actor, editorIds, agentEditors));
        return { tree, newSections, newComments, message, result: { message } };
      },
    );
    if (!written.changed) {
      // A changed draft is judged section by section above; with nothing to commit, one who may not edit is told that, not "nothing to commit".
      requireDocument(opened, "edit");
      return {
        took: null,
        result: {
          ...key,
          commitId: head.commitId,
          changed: false,
          message: `Nothing to commit: the draft of branch ${JSON.stringify(input.branchName)} is the same as its head${actedOn.size < head.tree.sections.length ? " in the sections you may edit" : ""}.`,
          coAuthorIds: [],
        },
      };
    }
    return {
      took: actedOn,
      result: { ...key, commitId: written.commitId, changed: true, message: written.message, coAuthorIds },
    };
  });
}

export async function discardDraft(ctx: ActionContext, input: { documentId: string; branchName: string }): Promise<DiscardDraftResult> {
  const key: DraftKey = { documentId: input.documentId, branchName: input.branchName };
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "edit");
  const discarded = await ctx.live.discard(key, (head) => sectionsActedOn(ctx.db, access, input.branchName, head));
  return { ...key, ...discarded };
}

/**
 * The draft's sections for `read` with `includeDraft`: only those with live
 * edits differ from the head. A section whose draft the content schema
 * refuses (the live face refuses such edits on arrival; a draft stored before
 * it did may hold one) is read as its head version, so `read` never answers
 * what its own output schema refuses.
 */
export async function draftSections(live: LiveDrafts, key: DraftKey): Promise<Map<string, LiveSection>> {
  const drafted = await live.read(key);
  for (const [sectionId, section] of drafted) {
    if (!readableDraftSchema.safeParse(section).success) drafted.delete(sectionId);
  }
  return drafted;
}

/** What `read` may answer of a draft section: the output schema's content (a name may be empty while someone retypes it). */
const readableDraftSchema = z.strictObject({ name: z.string().max(300), content: contentSchema });

/**
 * `draft_status`: the branch's draft against its head for the caller: only
 * sections the caller sees are named, and people by name. Costs no `read`:
 * the live layer compares each drafted section with its head version.
 */
async function draftStatus(ctx: ActionContext, input: z.output<typeof draftStatusInput>) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const status = await ctx.live.status({ documentId: access.document.id, branchName: input.branchName });
  const visible = new Set(await visibleSectionIds(ctx.db, access, input.branchName, status.head.tree));
  const names = await userIdentities(ctx.db, [...status.editorIds, ...status.connectedUserIds]);
  const person = (userId: string) => ({ userId, name: names.get(userId)?.name ?? "Someone" });
  return {
    documentId: access.document.id,
    branchName: input.branchName,
    headCommitId: status.head.commitId,
    uncommittedChanges: status.uncommittedChanges,
    editors: status.editorIds.map(person),
    connected: status.connectedUserIds.map(person),
    changedSections: status.changedSections.filter((s) => visible.has(s.sectionId)),
  };
}

const commitInput = z.strictObject({
  action: z.literal("commit"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The branch."),
  commitMessage: commitMessageField.describe("Commit message; default: generated."),
});

const draftStatusInput = z.strictObject({
  action: z.literal("draft_status"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The branch."),
});

const discardInput = z.strictObject({
  action: z.literal("discard"),
  documentId: documentIdField,
  branchName: branchNameSchema.describe("The branch."),
});

/** The input schemas of the draft actions, in the order agents read them. */
export const draftActionInputs = [commitInput, discardInput, draftStatusInput] as const;

export const draftHandlers = {
  commit: (ctx: ActionContext, input: z.output<typeof commitInput>) => commitDraft(ctx, input),
  discard: (ctx: ActionContext, input: z.output<typeof discardInput>) => discardDraft(ctx, input),
  draft_status: draftStatus,
};
