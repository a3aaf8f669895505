/**
 * Notifications (issue 24): each person's inbox, and how and when they are told by email. An item names the place it
 * links to (document, branch, section, comment, merge request); whether its recipient may see that place is decided
 * again whenever it is shown or mailed, so an item whose place became hidden is never shown.
 */
import { index, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { sql } from "drizzle-orm";
import { documents, mergeRequests, users, workspaces } from "./schema";

export const NOTIFICATION_KINDS = [
  "review_requested",
  "approved",
  "changes_requested",
  "merged",
  "closed",
  "mention",
  "reply",
  "approval_stale",
  "merge_request_updated",
] as const;

export const EMAIL_SETTINGS = ["all", "direct", "none"] as const;

export const notifications = pgTable(
  "notifications",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    recipientId: uuid("recipient_id")
      .notNull()
      .references(() => users.id),
    /** Who did what the item tells of; null for what nobody did in person (none yet, kept for system events). */
    actorId: uuid("actor_id").references(() => users.id),
    kind: text("kind", { enum: NOTIFICATION_KINDS }).notNull(),
    title: text("title").notNull(),
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    branchName: text("branch_name"),
    sectionId: uuid("section_id"),
    commentId: uuid("comment_id"),
    mergeRequestId: uuid("merge_request_id").references(() => mergeRequests.id),
    /** Same key, same recipient: told once (a mention merged into another branch, an approval going stale). */
    dedupeKey: text("dedupe_key"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    readAt: timestamp("read_at", { withTimezone: true, mode: "date" }),
    /** When the item went out in an email digest (or was passed over by the recipient's email setting). */
    emailedAt: timestamp("emailed_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("notifications_inbox_idx").on(t.recipientId, t.createdAt, t.id),
    uniqueIndex("notifications_dedupe_idx").on(t.recipientId, t.dedupeKey).where(sql`${t.dedupeKey} is not null`),
    index("notifications_unmailed_idx").on(t.recipientId, t.createdAt).where(sql`${t.emailedAt} is null and ${t.readAt} is null`),
  ],
);

/** One row per person who was ever notified: their email setting, and the row the email sender claims (FOR UPDATE SKIP LOCKED). */
export const notificationRecipients = pgTable("notification_recipients", {
  userId: uuid("user_id")
    .primaryKey()
    .references(() => users.id),
  email: text("email", { enum: EMAIL_SETTINGS }).notNull().default("all"),
  /** When this person's last digest was claimed for sending: at most one per batch window. */
  lastEmailedAt: timestamp("last_emailed_at", { withTimezone: true, mode: "date" }),
});

export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];
export type EmailSetting = (typeof EMAIL_SETTINGS)[number];
