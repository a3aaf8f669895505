/**
 * What Quire tells people, recorded where it happens: the merge request actions call these in their own
 * transaction (a review requested, a verdict, a merge, a close), the `comments` reply in its transaction (a reply
 * in your thread, a mention), and `followHeadMovesForNotifications` reacts to head moves on the head-move seam,
 * right after the write committed (a mention in a new comment, a merge request you review updated, your approval
 * gone stale). Staleness is detected there because it needs both branches' trees and the approvals of every open
 * request on the moved branch: computing it inside every write transaction (writes, merges, reverts, draft commits,
 * group commits) would lengthen the hottest path of the server for a message; the seam runs once per committed
 * move, in the process that made it, so exactly one process records each item.
 *
 * Recipients are chosen here by role (reviewer, author, thread participant, mentioned); whether a recipient may
 * see the place is decided when the item is shown or mailed (notifications.ts), so a place hidden later, or hidden
 * from the start, tells nothing.
 */
import { existingCommentTags } from "@/server/core/comment-markup";
import type { DocumentTree } from "@/server/core/document-model";
import { accessFor } from "@/server/access/documents";
import type { Database } from "@/db/client";
import { getMembership } from "@/server/store/accounts";
import { getComments } from "@/server/store/comments";
import { CommitGraph } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import type { DocumentRow } from "@/server/store/documents";
import { type HeadMove, onHeadMoved } from "@/server/store/head-moves";
import { listReviewers, type MergeRequestRow } from "@/server/store/merge-requests";
import {
  documentById,
  insertNotifications,
  listInbox,
  type NewNotification,
  openRequestsOnBranch,
  threadParticipants,
} from "@/server/store/notifications";
import { loadSections, loadTree } from "@/server/store/objects";
import { isStale } from "./merge-approvals";
import { type EventActor, recordWebhookEvent } from "./webhooks";
import { branchSides } from "./merge-state";

const quoted = (text: string) => `“${text}”`;

function aboutRequest(row: MergeRequestRow, actorId: string | null, now: Date) {
  return {
    workspaceId: row.workspaceId,
    actorId,
    documentId: row.documentId,
    branchName: row.sourceBranch,
    mergeRequestId: row.id,
    createdAt: now,
  };
}

/** Each new reviewer is asked for a review (never the person who added them). */
export async function notifyReviewRequested(tx: Tx, row: MergeRequestRow, actorId: string, reviewerIds: readonly string[], now: Date) {
  await insertNotifications(
    tx,
    [...new Set(reviewerIds)].map((recipientId) => ({
      ...aboutRequest(row, actorId, now),
      recipientId,
      kind: "review_requested" as const,
      title: `Review requested: ${quoted(row.title)}`,
    })),
  );
}

const REQUEST_EVENT_TITLES = {
  approved: "Approved",
  changes_requested: "Changes requested",
  merged: "Merged",
  closed: "Closed",
} as const;

/** What a merge request event tells a webhook about the request. */
const requestSubject = (row: MergeRequestRow) => ({
  mergeRequestId: row.id,
  documentId: row.documentId,
  title: row.title,
  sourceBranch: row.sourceBranch,
  targetBranch: row.targetBranch,
});

/** A new request: its reviewers are asked for a review, and the workspace's webhooks hear it was opened. */
export async function notifyRequestOpened(tx: Tx, row: MergeRequestRow, actor: EventActor, reviewerIds: readonly string[], now: Date) {
  await notifyReviewRequested(tx, row, actor.userId, reviewerIds, now);
  await recordWebhookEvent(tx, { workspaceId: row.workspaceId, event: "merge_request.opened", actor, subject: requestSubject(row), now });
}

const REQUEST_WEBHOOK_EVENTS = {
  approved: "merge_request.approved",
  changes_requested: null,
  merged: "merge_request.merged",
  closed: "merge_request.closed",
} as const;

/** The request's author hears of a verdict on it, its merge or its closing; webhooks of an approval, a merge, a close. */
export async function notifyAuthor(tx: Tx, row: MergeRequestRow, actor: EventActor, kind: keyof typeof REQUEST_EVENT_TITLES, now: Date) {
  await insertNotifications(tx, [
    {
      ...aboutRequest(row, actor.userId, now),
      recipientId: row.authorId,
      kind,
      title: `${REQUEST_EVENT_TITLES[kind]}: ${quoted(row.title)}`,
    },
  ]);
  const event = REQUEST_WEBHOOK_EVENTS[kind];
  if (event) await recordWebhookEvent(tx, { workspaceId: row.workspaceId, event, actor, subject: requestSubject(row), now });
}

/** A reply tells the thread's author and earlier repliers; a mention tells the mentioned (a mention is the stronger news). */
export async function notifyReply(
  tx: Tx,
  place: { document: DocumentRow; branchName: string; sectionId: string; sectionName: string; commentId: string },
  actor: EventActor,
  mentions: readonly string[],
  now: Date,
) {
  const actorId = actor.userId;
  await recordWebhookEvent(tx, {
    workspaceId: place.document.workspaceId,
    event: "comment.added",
    actor,
    subject: {
      documentId: place.document.id,
      branchName: place.branchName,
      sectionId: place.sectionId,
      commentId: place.commentId,
      reply: true,
    },
    now,
  });
  const participants = await threadParticipants(tx, place.commentId);
  const where = `${quoted(place.sectionName)} (${place.document.path})`;
  const common = {
    workspaceId: place.document.workspaceId,
    actorId,
    documentId: place.document.id,
    branchName: place.branchName,
    sectionId: place.sectionId,
    commentId: place.commentId,
    createdAt: now,
  };
  const mentioned = new Set(mentions);
  await insertNotifications(tx, [
    ...[...mentioned].map((recipientId) => ({ ...common, recipientId, kind: "mention" as const, title: `Mentioned in ${where}` })),
    ...participants
      .filter((id) => !mentioned.has(id))
      .map((recipientId) => ({ ...common, recipientId, kind: "reply" as const, title: `Reply in ${where}` })),
  ]);
}

/** A comment's mentions as inbox items: each mentioned person told once per comment (the dedupe key), wherever it is first seen. */
function mentionItems(
  document: DocumentRow,
  comment: { id: string; authorId: string; sectionId: string; mentions: readonly string[] },
  place: { branchName: string; sectionName: string | null },
  now: Date,
): NewNotification[] {
  return [...new Set(comment.mentions)].map((recipientId) => ({
    workspaceId: document.workspaceId,
    recipientId,
    actorId: comment.authorId,
    kind: "mention",
    title: `Mentioned in ${quoted(place.sectionName ?? "a section")} (${document.path})`,
    documentId: document.id,
    branchName: place.branchName,
    sectionId: comment.sectionId,
    commentId: comment.id,
    dedupeKey: `mention:${comment.id}`,
    createdAt: now,
  }));
}

/** A comment posted (`comments` `post`): the mentioned hear of it at once, in the post's transaction (its commit later tells nobody again). */
export async function notifyCommentPosted(
  tx: Tx,
  document: DocumentRow,
  comment: { id: string; authorId: string; sectionId: string; mentions: readonly string[] },
  place: { branchName: string; sectionName: string },
  now: Date,
) {
  await insertNotifications(tx, mentionItems(document, comment, place, now));
}

/** Comment ids anchored in a tree's sections, by section. */
async function commentIdsBySection(tx: Tx, tree: DocumentTree | null, sectionIds: ReadonlySet<string>): Promise<Map<string, Set<string>>> {
  const bySection = new Map<string, Set<string>>();
  if (!tree) return bySection;
  const entries = tree.sections.filter((e) => sectionIds.has(e.sectionId));
  const versions = await loadSections(
    tx,
    entries.map((e) => e.blobHash),
  );
  for (const entry of entries) {
    const ids = new Set<string>();
    for (const block of versions.get(entry.blobHash)!.content) {
      if (block.blockType === "text" && block.text.includes("<svc:comment"))
        for (const tag of existingCommentTags(block.text)) ids.add(tag.id);
    }
    bySection.set(entry.sectionId, ids);
  }
  return bySection;
}

/**
 * Mentions in comments the move brought onto the branch (new comments, written directly or arriving by a merge):
 * each mentioned person is told once per comment (the dedupe key), on whichever branch it reached first.
 */
async function mentionsInNewComments(
  db: Database,
  move: HeadMove,
  graph: CommitGraph,
  documentOf: () => Promise<DocumentRow | null>,
  now: Date,
) {
  const after = await loadTree(db, (await graph.get(move.commitId)).treeHash);
  const before = move.previousCommitId ? await loadTree(db, (await graph.get(move.previousCommitId)).treeHash) : null;
  const beforeHashes = new Map((before?.sections ?? []).map((e) => [e.sectionId, e.blobHash]));
  const changed = new Set(after.sections.filter((e) => beforeHashes.get(e.sectionId) !== e.blobHash).map((e) => e.sectionId));
  if (changed.size === 0) return;
  const [now_, then] = await Promise.all([commentIdsBySection(db, after, changed), commentIdsBySection(db, before, changed)]);
  const added = [...now_].flatMap(([sectionId, ids]) => [...ids].filter((id) => !then.get(sectionId)?.has(id)));
  if (added.length === 0) return;
  const document = await documentOf();
  if (!document) return;
  const all = await getComments(db, move.documentId, added);
  for (const comment of all) {
    await recordWebhookEvent(db, {
      workspaceId: document.workspaceId,
      event: "comment.added",
      actor: { userId: comment.authorId, agent: comment.agent },
      subject: { documentId: document.id, branchName: move.branchName, sectionId: comment.sectionId, commentId: comment.id, reply: false },
      now,
    });
  }
  const comments = all.filter((c) => c.mentions.length > 0);
  if (comments.length === 0) return;
  const versions = await loadSections(
    db,
    after.sections.map((e) => e.blobHash),
  );
  const nameOf = new Map(after.sections.map((e) => [e.sectionId, versions.get(e.blobHash)!.name]));
  await insertNotifications(
    db,
    comments.flatMap((comment) =>
      mentionItems(document, comment, { branchName: move.branchName, sectionName: nameOf.get(comment.sectionId) ?? null }, now),
    ),
  );
}

/**
 * For each open request on the moved branch: when its source moved, its reviewers hear it was updated (one unread
 * item per request is enough); on either side, each approval the move made stale is told to its reviewer, once per
 * approval.
 */
async function requestsOnMovedBranch(db: Database, move: HeadMove, document: DocumentRow, requests: MergeRequestRow[], now: Date) {
  for (const row of requests) {
    const reviewers = (await listReviewers(db, [row.id])).get(row.id)!;
    const items: NewNotification[] = [];
    if (row.sourceBranch === move.branchName) {
      for (const reviewer of reviewers) {
        const unread = await listInbox(db, reviewer.userId, { unreadOnly: true, limit: 50 });
        if (unread.some((n) => n.kind === "merge_request_updated" && n.mergeRequestId === row.id)) continue;
        items.push({
          ...aboutRequest(row, move.authorId, now),
          recipientId: reviewer.userId,
          kind: "merge_request_updated",
          title: `Updated: ${quoted(row.title)}`,
        });
      }
    }
    const approved = reviewers.filter((r) => r.state === "approved" && r.reviewedAt);
    if (approved.length > 0) {
      // Staleness compares versions only (no section is shown), so whose view the sides are loaded with does not matter.
      const membership = await getMembership(db, row.authorId);
      if (membership) {
        const access = await accessFor(db, document, { kind: "member", userId: row.authorId, role: membership.role, principal: "person" });
        const sides = await branchSides(db, row, access);
        for (const reviewer of approved.filter((r) => isStale(r, sides))) {
          items.push({
            ...aboutRequest(row, move.authorId, now),
            recipientId: reviewer.userId,
            kind: "approval_stale",
            title: `Your approval went stale: ${quoted(row.title)}`,
            dedupeKey: `stale:${row.id}:${reviewer.reviewedAt!.toISOString()}`,
          });
        }
      }
    }
    await insertNotifications(db, items);
  }
}

/**
 * Records what each committed head move of this process tells people, one move at a time, after the write returned
 * (a failure is logged; the write stands). Returns the stop function, which resolves once the moves heard so far
 * are recorded.
 */
export function followHeadMovesForNotifications(db: Database, clock: () => Date): () => Promise<void> {
  let line: Promise<void> = Promise.resolve();
  const stop = onHeadMoved((move) => {
    if (move.kind === "create-branch") return;
    // When the move was heard: right after its commit, before anything its writer did next.
    const now = clock();
    line = line.then(async () => {
      try {
        // A plain write with no new comment, no open request on its branch and no webhook costs a few indexed reads here.
        const graph = new CommitGraph(db, move.documentId);
        let document: Promise<DocumentRow | null> | undefined;
        const documentOf = () => {
          document ??= documentById(db, move.documentId);
          return document;
        };
        // A move this database does not hold was made by another server in this process (tests run several).
        const held = await documentOf();
        if (!held) return;
        // The workspace's webhooks hear of every committed move (one event source with the inbox: this seam).
        const commit = await graph.get(move.commitId);
        await recordWebhookEvent(db, {
          workspaceId: held.workspaceId,
          event: "document.committed",
          actor: { userId: commit.authorId, agent: commit.agent },
          subject: {
            documentId: held.id,
            path: held.path,
            branchName: move.branchName,
            commitId: move.commitId,
            previousCommitId: move.previousCommitId,
            kind: move.kind,
            message: commit.message,
          },
          now,
        });
        await mentionsInNewComments(db, move, graph, documentOf, now);
        if (move.kind === "create-document") return;
        // A request opened after the move (while this one waited its turn) was opened on the moved head: nothing to tell.
        const requests = (await openRequestsOnBranch(db, move.documentId, move.branchName)).filter((row) => row.createdAt <= now);
        if (requests.length > 0) await requestsOnMovedBranch(db, move, held, requests, now);
      } catch (error) {
        console.error("[quire] notifications for a head move failed", error);
      }
    });
  });
  return async () => {
    stop();
    await line;
  };
}
