/** Webhooks and their delivery queue (db/schema-webhooks.ts): the SQL, nothing else. */
import { and, desc, eq, isNull, sql } from "drizzle-orm";
import { type WebhookEvent, webhookDeliveries, webhooks } from "@/db/schema";
import { queryRows, type Tx } from "./db";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

export async function insertWebhook(
  tx: Tx,
  row: { workspaceId: string; url: string; events: WebhookEvent[]; secret: string; createdBy: string; createdAt: Date },
): Promise<WebhookRow> {
  const [inserted] = await tx.insert(webhooks).values(row).returning();
  return inserted!;
}

export async function listWebhooks(tx: Tx, workspaceId: string): Promise<WebhookRow[]> {
  return tx.select().from(webhooks).where(eq(webhooks.workspaceId, workspaceId)).orderBy(webhooks.createdAt);
}

export async function getWebhook(tx: Tx, workspaceId: string, id: string): Promise<WebhookRow | undefined> {
  const [row] = await tx
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id)));
  return row;
}

export async function deleteWebhook(tx: Tx, workspaceId: string, id: string): Promise<boolean> {
  const deleted = await tx
    .delete(webhooks)
    .where(and(eq(webhooks.workspaceId, workspaceId), eq(webhooks.id, id)))
    .returning({ id: webhooks.id });
  return deleted.length > 0;
}

/** Live again after being disabled: the failure count starts over. */
export async function enableWebhook(tx: Tx, id: string): Promise<void> {
  await tx.update(webhooks).set({ disabledAt: null, consecutiveFailures: 0 }).where(eq(webhooks.id, id));
}

/** The workspace's live hooks that want `event`. */
export async function hooksFor(tx: Tx, workspaceId: string, event: WebhookEvent): Promise<WebhookRow[]> {
  return tx
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.workspaceId, workspaceId), isNull(webhooks.disabledAt), sql`${event} = any(${webhooks.events})`));
}

export async function insertDeliveries(
  tx: Tx,
  rows: ReadonlyArray<{ webhookId: string; event: WebhookEvent; body: string; createdAt: Date }>,
) {
  if (rows.length === 0) return;
  await tx.insert(webhookDeliveries).values(rows.map((row) => ({ ...row, nextAttemptAt: row.createdAt })));
}

/** The newest deliveries of a hook, newest first. */
export async function recentDeliveries(tx: Tx, webhookId: string, limit: number): Promise<DeliveryRow[]> {
  return tx
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId))
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(limit);
}

export interface DeliveryClaim {
  id: string;
  webhookId: string;
  event: WebhookEvent;
  body: string;
  attempts: number;
  url: string;
  secret: string;
}

/**
 * Claims up to `limit` due deliveries of live hooks: rows are taken `FOR UPDATE SKIP LOCKED` and their next attempt
 * pushed `leaseMs` ahead, so with several processes each delivery is claimed by one, and a claim whose process died
 * comes due again after the lease.
 */
export async function claimDueDeliveries(tx: Tx, now: Date, leaseMs: number, limit: number): Promise<DeliveryClaim[]> {
  const leaseEnd = new Date(now.getTime() + leaseMs);
  return queryRows<DeliveryClaim>(
    tx,
    sql`
      with due as (
        select d.id from webhook_deliveries d join webhooks w on w.id = d.webhook_id
        where d.status = 'pending' and d.next_attempt_at <= ${now.toISOString()}::timestamptz and w.disabled_at is null
        order by d.next_attempt_at
        limit ${limit}
        for update of d skip locked
      )
      update webhook_deliveries d set next_attempt_at = ${leaseEnd.toISOString()}::timestamptz
      from due, webhooks w
      where d.id = due.id and w.id = d.webhook_id
      returning d.id, d.webhook_id as "webhookId", d.event, d.body, d.attempts, w.url, w.secret
    `,
  );
}

/** A delivery the receiver took (2xx): done, and its hook's failures start over. */
export async function recordDelivered(tx: Tx, claim: DeliveryClaim, status: number, now: Date): Promise<void> {
  await tx
    .update(webhookDeliveries)
    .set({ status: "delivered", attempts: claim.attempts + 1, lastStatus: status, lastError: null, finishedAt: now })
    .where(eq(webhookDeliveries.id, claim.id));
  await tx.update(webhooks).set({ consecutiveFailures: 0 }).where(eq(webhooks.id, claim.webhookId));
}

/**
 * A failed attempt: tried again at `retryAt`, or failed for good (`retryAt` null). The hook's failures in a row go
 * up by one; it is disabled once they reach `disableAfter`. Returns the hook when this failure disabled it.
 */
export async function recordFailed(
  tx: Tx,
  claim: DeliveryClaim,
  failure: { status: number | null; error: string; retryAt: Date | null; disableAfter: number },
  now: Date,
): Promise<WebhookRow | null> {
  await tx
    .update(webhookDeliveries)
    .set({
      status: failure.retryAt ? "pending" : "failed",
      attempts: claim.attempts + 1,
      lastStatus: failure.status,
      lastError: failure.error,
      nextAttemptAt: failure.retryAt ?? now,
      finishedAt: failure.retryAt ? null : now,
    })
    .where(eq(webhookDeliveries.id, claim.id));
  const [hook] = await tx
    .update(webhooks)
    .set({
      consecutiveFailures: sql`${webhooks.consecutiveFailures} + 1`,
      disabledAt: sql`case when ${webhooks.disabledAt} is null and ${webhooks.consecutiveFailures} + 1 >= ${failure.disableAfter} then ${now.toISOString()}::timestamptz else ${webhooks.disabledAt} end`,
    })
    .where(eq(webhooks.id, claim.webhookId))
    .returning();
  // Disabled hooks are never claimed, so only the failure that reached the limit sees the count equal to it.
  return hook && hook.consecutiveFailures === failure.disableAfter ? hook : null;
}
