/**
 * Webhooks (issue 26): URLs a workspace's admins register for events, and the durable queue of deliveries to them.
 * A delivery row is written in the transaction (or on the seam) where its event happened, then sent by whichever
 * process claims it (FOR UPDATE SKIP LOCKED), retried with exponential backoff; a hook that keeps failing is disabled.
 */
import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { users, workspaces } from "./schema";

export const WEBHOOK_EVENTS = [
  "document.committed",
  "merge_request.opened",
  "merge_request.approved",
  "merge_request.merged",
  "merge_request.closed",
  "comment.added",
] as const;

/** What a delivery carries: one of the events above, or the settings page's test event. */
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number] | "webhook.test";

export const webhooks = pgTable(
  "webhooks",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    url: text("url").notNull(),
    events: text("events").array().notNull().$type<WebhookEvent[]>(),
    /** The HMAC-SHA256 key deliveries are signed with: shown once at creation, kept to sign. */
    secret: text("secret").notNull(),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** Deliveries that failed in a row (a success resets it); at the limit the hook is disabled. */
    consecutiveFailures: integer("consecutive_failures").notNull().default(0),
    /** Set when the hook was disabled for failing; null while it is live. */
    disabledAt: timestamp("disabled_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("webhooks_workspace_idx").on(t.workspaceId)],
);

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    webhookId: uuid("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    event: text("event").notNull().$type<WebhookEvent>(),
    /** The JSON body, fixed when the event happened; every attempt sends the same bytes. */
    body: text("body").notNull(),
    status: text("status", { enum: ["pending", "delivered", "failed"] })
      .notNull()
      .default("pending"),
    attempts: integer("attempts").notNull().default(0),
    /** When the next attempt is due (a claim pushes it ahead by a lease, so a crashed sender's claim comes back). */
    nextAttemptAt: timestamp("next_attempt_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** The receiver's HTTP status on the last attempt, or null when it gave none. */
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    finishedAt: timestamp("finished_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index("webhook_deliveries_hook_idx").on(t.webhookId, t.createdAt),
  ],
);
