/**
 * Each person's inbox and the email digests made from it. Items are recorded in the transaction of the change they
 * tell of (or, for what a head move causes, right after it on the head-move seam); an item for the person who acted
 * is never stored. Whether the recipient may still see an item's place is not this module's business: the
 * notifications action decides it each time an item is shown or mailed.
 *
 * A change to someone's inbox has its own event (`onInboxChanged`), after the commit, which the live badge
 * follows. It reaches this process's listeners directly; a relay (`relayInboxChanges`, Redis when the server has
 * QUIRE_REDIS_URL) carries it to the other processes, whose listeners hear it through `announceInboxChangedHere`.
 */
import { and, desc, eq, isNull, lt, or, sql } from "drizzle-orm";
import { afterCommit } from "@/db/commit-hooks";
import {
  documents,
  type EmailSetting,
  mergeRequests,
  type NotificationKind,
  notificationRecipients,
  notifications,
  users,
} from "@/db/schema";
import { anyOf, queryRows, type Tx } from "./db";

export type NotificationRow = typeof notifications.$inferSelect;
export type NewNotification = Omit<typeof notifications.$inferInsert, "id" | "readAt" | "emailedAt">;
export type { EmailSetting, NotificationKind };

type InboxListener = (userId: string) => void;
const inboxListeners = new Set<{ listener: InboxListener }>();
let relay: ((userIds: readonly string[]) => void) | null = null;

/** Calls `listener` with a person's id whenever their inbox changed (new items, items read), here or in another process; returns unsubscribe. */
export function onInboxChanged(listener: InboxListener): () => void {
  const entry = { listener };
  inboxListeners.add(entry);
  return () => {
    inboxListeners.delete(entry);
  };
}

/** Tells this process's listeners only (what the relay calls with other processes' news). */
export function announceInboxChangedHere(userIds: readonly string[]): void {
  for (const userId of new Set(userIds)) {
    for (const { listener } of inboxListeners) {
      try {
        listener(userId);
      } catch (error) {
        console.error("[quire] inbox listener failed", error);
      }
    }
  }
}

/** Sets (or, with null, removes) what carries inbox changes to the other processes. */
export function relayInboxChanges(publish: ((userIds: readonly string[]) => void) | null): void {
  relay = publish;
}

/** After the commit (never on rollback): listeners read the inbox as it is then. */
function announceInboxChanged(tx: Tx, userIds: readonly string[]): void {
  if (userIds.length === 0) return;
  afterCommit(tx, () => {
    announceInboxChangedHere(userIds);
    relay?.(userIds);
  });
}

/**
 * Stores the items, except any for the person who acted and any whose (recipient, dedupeKey) was stored before.
 * Returns the items stored.
 */
export async function insertNotifications(tx: Tx, items: readonly NewNotification[]): Promise<NotificationRow[]> {
  const kept = items.filter((item) => item.recipientId !== item.actorId);
  if (kept.length === 0) return [];
  const stored = await tx
    .insert(notifications)
    .values([...kept])
    .onConflictDoNothing()
    .returning();
  const recipients = [...new Set(stored.map((row) => row.recipientId))];
  if (recipients.length > 0) {
    await tx
      .insert(notificationRecipients)
      .values(recipients.map((userId) => ({ userId })))
      .onConflictDoNothing();
  }
  announceInboxChanged(tx, recipients);
  return stored;
}

export interface InboxRow extends NotificationRow {
  actorName: string | null;
}

/** A person's items, newest first, from before `before` (keyset), `limit` of them; only unread ones with `unreadOnly`. */
export async function listInbox(
  tx: Tx,
  recipientId: string,
  options: { unreadOnly: boolean; before?: { createdAt: Date; id: string }; limit: number },
): Promise<InboxRow[]> {
  const { before } = options;
  const rows = await tx
    .select({ item: notifications, actorName: users.name })
    .from(notifications)
    .leftJoin(users, eq(users.id, notifications.actorId))
    .where(
      and(
        eq(notifications.recipientId, recipientId),
        options.unreadOnly ? isNull(notifications.readAt) : undefined,
        before
          ? or(
              lt(notifications.createdAt, before.createdAt),
              and(eq(notifications.createdAt, before.createdAt), lt(notifications.id, before.id)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(notifications.createdAt), desc(notifications.id))
    .limit(options.limit);
  return rows.map(({ item, actorName }) => ({ ...item, actorName }));
}

/** Marks the person's own items read (ids of anyone else's are left alone); returns the ids that changed. */
export async function markNotificationsRead(tx: Tx, recipientId: string, ids: readonly string[] | "all", now: Date): Promise<string[]> {
  const changed = await tx
    .update(notifications)
    .set({ readAt: now })
    .where(
      and(
        eq(notifications.recipientId, recipientId),
        isNull(notifications.readAt),
        ids === "all" ? undefined : anyOf(notifications.id, ids),
      ),
    )
    .returning({ id: notifications.id });
  if (changed.length > 0) announceInboxChanged(tx, [recipientId]);
  return changed.map((row) => row.id);
}

/** Of these ids, the ones that are the person's own items. */
export async function ownNotificationIds(tx: Tx, recipientId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await tx
    .select({ id: notifications.id })
    .from(notifications)
    .where(and(eq(notifications.recipientId, recipientId), anyOf(notifications.id, ids)));
  return new Set(rows.map((row) => row.id));
}

export async function getEmailSetting(tx: Tx, userId: string): Promise<EmailSetting> {
  const [row] = await tx
    .select({ email: notificationRecipients.email })
    .from(notificationRecipients)
    .where(eq(notificationRecipients.userId, userId));
  return row?.email ?? "all";
}

export async function setEmailSetting(tx: Tx, userId: string, email: EmailSetting): Promise<void> {
  await tx
    .insert(notificationRecipients)
    .values({ userId, email })
    .onConflictDoUpdate({ target: notificationRecipients.userId, set: { email } });
}

/** A person's digest, claimed by one process for sending. */
export interface EmailClaim {
  userId: string;
  email: string;
  name: string;
  setting: EmailSetting;
  items: InboxRow[];
}

/**
 * Claims the digests due now: for each person whose email setting is not `none`, whose last digest was claimed at
 * least `windowMs` ago and whose oldest item neither read nor mailed arrived at least `windowMs` ago, the items
 * neither read nor mailed are marked mailed and returned. Rows are taken `FOR UPDATE SKIP LOCKED`, so of several
 * processes exactly one claims each digest; items of someone who wants no email are passed over for good.
 */
export async function claimDueEmails(tx: Tx, now: Date, windowMs: number, limit: number): Promise<EmailClaim[]> {
  const due = new Date(now.getTime() - windowMs);
  return tx.transaction(async (claim) => {
    const recipients = await queryRows<{ user_id: string; email: EmailSetting }>(
      claim,
      sql`select r.user_id, r.email from ${notificationRecipients} r
          where (r.last_emailed_at is null or r.last_emailed_at <= ${due.toISOString()}::timestamptz)
            and exists (select 1 from ${notifications} n where n.recipient_id = r.user_id and n.emailed_at is null
                        and n.read_at is null and n.created_at <= ${due.toISOString()}::timestamptz)
          order by r.user_id
          limit ${limit}
          for update of r skip locked`,
    );
    const claims: EmailClaim[] = [];
    for (const recipient of recipients) {
      const marked = await claim
        .update(notifications)
        .set({ emailedAt: now })
        .where(and(eq(notifications.recipientId, recipient.user_id), isNull(notifications.emailedAt), isNull(notifications.readAt)))
        .returning({ id: notifications.id });
      await claim.update(notificationRecipients).set({ lastEmailedAt: now }).where(eq(notificationRecipients.userId, recipient.user_id));
      if (recipient.email === "none" || marked.length === 0) continue;
      const items = await claim
        .select({ item: notifications, actorName: users.name })
        .from(notifications)
        .leftJoin(users, eq(users.id, notifications.actorId))
        .where(
          anyOf(
            notifications.id,
            marked.map((m) => m.id),
          ),
        )
        .orderBy(notifications.createdAt, notifications.id);
      const [person] = await claim.select({ email: users.email, name: users.name }).from(users).where(eq(users.id, recipient.user_id));
      claims.push({
        userId: recipient.user_id,
        email: person!.email,
        name: person!.name,
        setting: recipient.email,
        items: items.map(({ item, actorName }) => ({ ...item, actorName })),
      });
    }
    return claims;
  });
}

/** Gives a digest that could not be sent back to the next round. */
export async function releaseEmailClaim(tx: Tx, claim: EmailClaim): Promise<void> {
  await tx
    .update(notifications)
    .set({ emailedAt: null })
    .where(
      and(
        eq(notifications.recipientId, claim.userId),
        anyOf(
          notifications.id,
          claim.items.map((i) => i.id),
        ),
      ),
    );
  await tx.update(notificationRecipients).set({ lastEmailedAt: null }).where(eq(notificationRecipients.userId, claim.userId));
}

/** The open merge requests with `branchName` as their source or target, with their reviewers' verdicts. */
export async function openRequestsOnBranch(tx: Tx, documentId: string, branchName: string) {
  return tx
    .select()
    .from(mergeRequests)
    .where(
      and(
        eq(mergeRequests.documentId, documentId),
        eq(mergeRequests.status, "open"),
        or(eq(mergeRequests.sourceBranch, branchName), eq(mergeRequests.targetBranch, branchName)),
      ),
    );
}

/** Everyone in a comment thread: the comment's author and each earlier replier. */
export async function threadParticipants(tx: Tx, commentId: string): Promise<string[]> {
  const rows = await queryRows<{ user_id: string }>(
    tx,
    sql`select author_id as user_id from comments where id = ${commentId}
        union select author_id from comment_replies where comment_id = ${commentId}`,
  );
  return rows.map((row) => row.user_id);
}

/** A document by id alone (a head move names no workspace); null when there is none. */
export async function documentById(tx: Tx, documentId: string): Promise<typeof documents.$inferSelect | null> {
  const [row] = await tx.select().from(documents).where(eq(documents.id, documentId));
  return row ?? null;
}
