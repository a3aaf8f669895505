/**
 * What history may tell whom. A commit message can name the sections its
 * commit touched (generated messages always do; people's may), so:
 *
 * - A reader who may not see one of the sections a commit touched reads
 *   HIDDEN_COMMIT_MESSAGE instead of its message (`log`, `show`, the document
 *   page's history). Visibility is judged on every version involved — the
 *   section as the commit left it, as each parent had it, as the reader's
 *   branch head has it now, and as the default branch's head has it now
 *   (`sectionRules`) — so a section deleted while hidden, hidden after the
 *   fact, or hidden on the default branch after this branch was made, still
 *   hides the message.
 * - Generated messages that quote other commits (a merge's list of source
 *   commits, a revert's subject) are stored once and read by everyone, so
 *   they never quote a commit that touched a section hidden from anyone who
 *   can read the document (`isRestrictedSection`), in any of those versions
 *   or at the default branch's head now.
 *
 * Every decision goes through server/policies/access.ts. The `documents`
 * actions on history (log, show, revert) are at the end.
 */
import { z } from "zod";
import { actingName } from "@/server/core/agents";
import { revertCommitMessage } from "@/server/core/commit-messages";
import { sectionChanges } from "@/server/core/section-changes";
import type { DocumentTree, SectionVersion } from "@/server/core/document-model";
import { DomainError, notFound } from "@/server/core/errors";
import { branchNameSchema } from "@/server/core/names";
import { isRestrictedSection } from "@/server/policies/access";
import { CommitGraph, type CommitRecord, walkLog } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { type DocumentRow, getBranch } from "@/server/store/documents";
import { loadSections, loadTree } from "@/server/store/objects";
import { userNames } from "@/server/store/users";
import {
  assertSectionChangesAllowed,
  type DocumentAccess,
  openDocument,
  sectionRules,
  sectionsHidingAtDefaultHead,
} from "@/server/access/documents";
import { writeBranch } from "./branch-write";
import type { ActionContext } from "./context";
import { commitMessageField, commitRefSchema, documentIdField, writeBranchField } from "./document-fields";
import { documentView } from "./read";
import { cursorSchema, DEFAULT_PAGE_SIZE, decodeCursor, encodeCursor, pageLimitSchema, uuidSchema } from "./tool";
import { downloadLinks } from "./upload-url";

/** Shown instead of the message of a commit that touched sections the reader may not see. */
export const HIDDEN_COMMIT_MESSAGE = "Changes to sections you cannot see";

/** A version of a section a commit changed. */
interface TouchedSection {
  sectionId: string;
  version: SectionVersion;
}

/**
 * For each commit, the versions of the sections it changed: in its own tree,
 * in each parent's tree, and in the `alsoIn` trees (a branch head, a merge
 * result). Commits that changed no section are left out.
 */
async function touchedSectionVersions(
  tx: Tx,
  graph: CommitGraph,
  commits: readonly CommitRecord[],
  alsoIn: readonly DocumentTree[],
): Promise<Map<string, TouchedSection[]>> {
  const relevant = commits.filter((c) => c.sectionIds.length > 0);
  if (relevant.length === 0) return new Map();
  const parentIds = [...new Set(relevant.flatMap((c) => c.parentIds))];
  const parentTree = new Map((await graph.getMany(parentIds)).map((p) => [p.id, p.treeHash]));
  const trees = new Map<string, DocumentTree>();
  for (const hash of new Set(relevant.flatMap((c) => [c.treeHash, ...c.parentIds.map((id) => parentTree.get(id)!)]))) {
    trees.set(hash, await loadTree(tx, hash));
  }
  // Each tree indexed once by section id, so a commit costs its own sections, not the trees' sizes.
  const indexes = new Map<DocumentTree, Map<string, string>>();
  const indexOf = (tree: DocumentTree) => {
    let index = indexes.get(tree);
    if (!index) {
      index = new Map(tree.sections.map((e) => [e.sectionId, e.blobHash]));
      indexes.set(tree, index);
    }
    return index;
  };
  const touchedByCommit = new Map<string, Array<{ sectionId: string; hash: string }>>();
  for (const c of relevant) {
    const involved = [trees.get(c.treeHash)!, ...c.parentIds.map((id) => trees.get(parentTree.get(id)!)!), ...alsoIn];
    const touched = new Map<string, { sectionId: string; hash: string }>();
    for (const tree of involved) {
      const index = indexOf(tree);
      for (const id of c.sectionIds) {
        const hash = index.get(id);
        if (hash !== undefined) touched.set(`${id}:${hash}`, { sectionId: id, hash });
      }
    }
    touchedByCommit.set(c.id, [...touched.values()]);
  }
  const versions = await loadSections(tx, new Set([...touchedByCommit.values()].flat().map((t) => t.hash)));
  return new Map(
    [...touchedByCommit].map(([id, touched]) => [id, touched.map((t) => ({ sectionId: t.sectionId, version: versions.get(t.hash)! }))]),
  );
}

/** The ids of the commits whose messages the reader may not see; `alsoIn`: the reader's branch head as it is now, if any. */
export async function hiddenCommitIds(
  tx: Tx,
  access: DocumentAccess,
  graph: CommitGraph,
  commits: readonly CommitRecord[],
  alsoIn: readonly DocumentTree[],
): Promise<Set<string>> {
  if (access.canManage) return new Set();
  const rules = await sectionRules(tx, access, null);
  const touched = await touchedSectionVersions(tx, graph, commits, alsoIn);
  return new Set(
    [...touched].filter(([, sections]) => sections.some((s) => rules.permission(s.sectionId, s.version) === "none")).map(([id]) => id),
  );
}

/**
 * Each commit's message, or null where a generated message must not quote it:
 * it touched a section hidden from some reader of the document, in its own
 * versions, in the `alsoIn` trees or at the default branch's head now.
 */
export async function quotableMessages(
  tx: Tx,
  document: Pick<DocumentRow, "id" | "defaultBranch">,
  graph: CommitGraph,
  commits: readonly CommitRecord[],
  alsoIn: readonly DocumentTree[],
): Promise<Array<string | null>> {
  const [touched, hidingNow] = await Promise.all([
    touchedSectionVersions(tx, graph, commits, alsoIn),
    sectionsHidingAtDefaultHead(tx, document),
  ]);
  return commits.map((c) =>
    c.sectionIds.some((id) => hidingNow.has(id)) || (touched.get(c.id) ?? []).some((s) => isRestrictedSection(s.version))
      ? null
      : c.message,
  );
}

const commitIdField = commitRefSchema.describe("Commit id (or 7+ hex prefix) from `log`.");

const logInput = z.strictObject({
  action: z.literal("log"),
  documentId: documentIdField,
  branchName: branchNameSchema.optional().describe("Default: the default branch."),
  limit: pageLimitSchema,
  cursor: cursorSchema,
});

const showInput = z.strictObject({
  action: z.literal("show"),
  documentId: documentIdField,
  commitId: commitIdField,
  baseCommitId: commitRefSchema.optional().describe("Diff base (default: the first parent)."),
});

const revertInput = z.strictObject({
  action: z.literal("revert"),
  documentId: documentIdField,
  branchName: writeBranchField,
  commitId: commitIdField.describe("Commit id (or 7+ hex prefix) from `log`."),
  expectedHeadCommitId: uuidSchema.optional().describe("Head you saw (moved: BRANCH_MOVED)."),
  commitMessage: commitMessageField,
});

/** The input schemas of these actions, in the order agents read them. */
export const historyActionInputs = [logInput, showInput, revertInput] as const;

/** Commit summaries for a reader; `hidden` holds the ids of the commits whose messages the reader may not see. */
async function summarizeCommits(tx: Tx, commits: CommitRecord[], hidden: ReadonlySet<string>) {
  const names = await userNames(
    tx,
    commits.map((c) => c.authorId),
  );
  return commits.map((c) => ({
    commitId: c.id,
    message: hidden.has(c.id) ? HIDDEN_COMMIT_MESSAGE : c.message,
    authorId: c.authorId,
    authorName: names.get(c.authorId) ?? null,
    agentName: c.agent?.name ?? null,
    madeBy: actingName(names.get(c.authorId) ?? "Unknown author", c.agent),
    createdAt: c.createdAt.toISOString(),
    parentIds: [...c.parentIds],
    kind: c.kind,
  }));
}

async function log(ctx: ActionContext, input: z.output<typeof logInput>) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const { document } = access;
  const graph = new CommitGraph(ctx.db, document.id);
  const head = await graph.get((await getBranch(ctx.db, document.id, input.branchName ?? document.defaultBranch)).headCommitId);
  const frontier = input.cursor
    ? decodeCursor(input.cursor, z.object({ frontier: z.array(uuidSchema).min(1).max(1_000) })).frontier
    : [head.id];
  const page = await walkLog(graph, frontier, input.limit ?? DEFAULT_PAGE_SIZE);
  const hidden = await hiddenCommitIds(ctx.db, access, graph, page.commits, [await loadTree(ctx.db, head.treeHash)]);
  return {
    commits: await summarizeCommits(ctx.db, page.commits, hidden),
    nextCursor: page.nextFrontier ? encodeCursor({ frontier: page.nextFrontier }) : null,
  };
}

async function show(ctx: ActionContext, input: z.output<typeof showInput>) {
  const access = await openDocument(ctx.db, ctx.actor, input.documentId, "read");
  const graph = new CommitGraph(ctx.db, access.document.id);
  const commit = await graph.getByRef(input.commitId);
  const view = await documentView(ctx.db, {
    access,
    commit,
    branchName: null,
    downloads: (content, commitId) => downloadLinks(ctx, access.document.id, commitId, content),
  });
  // The commit's own versions and the default branch's head (the rules' part) decide, as in `log`: no face shows more than another.
  const hidden = await hiddenCommitIds(ctx.db, access, graph, [commit], []);
  const [summary] = await summarizeCommits(ctx.db, [commit], hidden);
  // Like `git show`: what the commit changed against its first parent (or the base asked for), in the sections the reader may see in both.
  const base =
    input.baseCommitId !== undefined
      ? await graph.getByRef(input.baseCommitId)
      : commit.parentIds[0]
        ? await graph.get(commit.parentIds[0])
        : undefined;
  const parent = base ? await documentView(ctx.db, { access, commit: base, branchName: null }) : undefined;
  return { ...view, commit: summary!, changes: sectionChanges(parent?.sections ?? [], view.sections) };
}

/**
 * Refuses a write decided on a head the branch has moved from (checked in the
 * write, on the head it is built on, so no write can land in between); `then`
 * says what to do instead.
 */
export function assertHeadUnmoved(headCommitId: string, expectedHeadCommitId: string, then: string): void {
  if (headCommitId === expectedHeadCommitId) return;
  throw new DomainError(
    "BRANCH_MOVED",
    `The branch has moved past ${expectedHeadCommitId.slice(0, 8)} (its head is now ${headCommitId.slice(0, 8)}): ${then}.`,
    { expectedHeadCommitId, headCommitId },
  );
}

/** What restoring an earlier state works on: the write's transaction, the caller's access, and the head's tree. */
interface RestoreScope {
  tx: Tx;
  access: DocumentAccess;
  document: DocumentRow;
  graph: CommitGraph;
  tree: DocumentTree;
  loadSections: (hashes: Iterable<string>) => Promise<Map<string, SectionVersion>>;
}

/**
 * The tree a revert or an undo writes: the one at `treeHash`, checked like
 * any write (no section the caller may not edit changes), with `named`'s
 * message if the caller may quote it. A `named` commit that touched a
 * section hidden from the caller reads as not found: its state is not theirs
 * to see or bring back.
 */
export async function restoreState(
  scope: RestoreScope,
  named: CommitRecord,
  treeHash: string,
  doing: string,
): Promise<{ restored: DocumentTree; quotable: string | null }> {
  const { tx, access, document, graph, tree, loadSections } = scope;
  if ((await hiddenCommitIds(tx, access, graph, [named], [tree])).has(named.id)) {
    throw notFound("Commit", named.id, "Use `documents` action `log` to list this document's commits.");
  }
  const restored = await loadTree(tx, treeHash);
  await assertSectionChangesAllowed(await sectionRules(tx, access, null), tree, restored, loadSections, doing);
  const [quotable] = await quotableMessages(tx, document, graph, [named], [tree, restored]);
  return { restored, quotable: quotable ?? null };
}

/**
 * Restores the document state of a commit. A commit whose message the caller
 * may not see (it touched a section hidden from them) reads as not found: they
 * cannot see what the revert would bring back.
 */
function revert(ctx: ActionContext, input: z.output<typeof revertInput>) {
  return writeBranch(ctx, input, "edit", async ({ head, tree, document, loadSections }, tx, access) => {
    if (input.expectedHeadCommitId !== undefined) {
      assertHeadUnmoved(head.id, input.expectedHeadCommitId, "look at the history again, then revert");
    }
    const graph = new CommitGraph(tx, document.id);
    const target = await graph.getByRef(input.commitId);
    const { restored, quotable } = await restoreState(
      { tx, access, document, graph, tree, loadSections },
      target,
      target.treeHash,
      "revert to that commit",
    );
    return { tree: restored, message: revertCommitMessage(target.id, quotable), kind: "revert", result: {} };
  });
}

/** A commit as `log` and `show` present it. */
export type CommitSummary = Awaited<ReturnType<typeof summarizeCommits>>[number];

export const historyHandlers = { log, show, revert };
