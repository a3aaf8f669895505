/**
 * Webhooks for integrations: a workspace's admins, signed in, register a URL and the events it wants; each event
 * becomes one delivery per live hook that wants it, queued in the database where the event happened and sent by
 * `startWebhookDeliveries` (several processes safe: claims are FOR UPDATE SKIP LOCKED), signed with HMAC-SHA256 over
 * `timestamp + "." + body` (`Quire-Signature: t=…,v1=…`), retried with exponential backoff. A hook failing
 * `disableAfter` times in a row is disabled and the admin who registered it is emailed (when Quire sends email).
 *
 * Not an MCP tool, and an API token is refused on tRPC too: a hook decides what leaves the workspace, which is a
 * person's decision, like access. Every URL passes the outbound guard when registered and again on each delivery.
 */
import { createHmac, randomUUID } from "node:crypto";
import nodemailer from "nodemailer";
import { z } from "zod";
import type { Database } from "@/db/client";
import { type AgentIdentity, WEBHOOK_EVENTS, type WebhookEvent } from "@/db/schema";
import { refuseAgents } from "@/server/access/documents";
import { newSecretToken } from "@/server/auth/secret-tokens";
import { DomainError, isDomainError, notFound } from "@/server/core/errors";
import { checkOutboundUrl, DEFAULT_OUTBOUND_SETTINGS, type OutboundSettings } from "@/server/outbound/addresses";
import { outboundRequest } from "@/server/outbound/request";
import type { Tx } from "@/server/store/db";
import { userIdentities, userNames } from "@/server/store/users";
import {
  claimDueDeliveries,
  type DeliveryClaim,
  type DeliveryRow,
  deleteWebhook,
  enableWebhook,
  getWebhook,
  hooksFor,
  insertDeliveries,
  insertWebhook,
  listWebhooks,
  recentDeliveries,
  recordDelivered,
  recordFailed,
  type WebhookRow,
} from "@/server/store/webhooks";
import type { ActionContext } from "./context";
import type { NotificationEmailOptions } from "./notification-email";
import { defineTool, type ToolResults, uuidSchema } from "./tool";
import { periodicWorker } from "./periodic-worker";

/** How many of a hook's latest deliveries the settings page lists. */
export const DELIVERY_LOG_SIZE = 20;

type WebhooksContext = Pick<ActionContext, "db" | "actor" | "clock" | "outbound">;

const webhookIdField = uuidSchema.describe("The hook's id, from list.");

export const webhooksInput = z.discriminatedUnion("action", [
  z.strictObject({ action: z.literal("list").describe("The workspace's hooks, each with its latest deliveries.") }),
  z.strictObject({
    action: z.literal("create").describe("Register a URL for events; the signing secret is returned once."),
    url: z.string().max(2_000).describe("Where deliveries are POSTed: an https:// URL on a public address."),
    events: z
      .array(z.enum(WEBHOOK_EVENTS))
      .min(1, "choose at least one event")
      .describe(`The events the hook wants: ${WEBHOOK_EVENTS.join(", ")}.`),
  }),
  z.strictObject({ action: z.literal("delete").describe("Remove a hook and its delivery log."), webhookId: webhookIdField }),
  z.strictObject({ action: z.literal("enable").describe("Make a disabled hook live again."), webhookId: webhookIdField }),
  z.strictObject({ action: z.literal("test").describe("Queue a `webhook.test` event to this hook alone."), webhookId: webhookIdField }),
]);

export type WebhooksInput = z.input<typeof webhooksInput>;
type ActionInput<A extends z.output<typeof webhooksInput>["action"]> = Extract<z.output<typeof webhooksInput>, { action: A }>;

/** Owners and admins, signed in: an API token never manages hooks. */
function requireHookAdmin(ctx: WebhooksContext): void {
  refuseAgents(ctx.actor);
  if (ctx.actor.role !== "owner" && ctx.actor.role !== "admin") {
    throw new DomainError("PERMISSION_DENIED", "Only the workspace's owners and admins manage webhooks. Ask one of them.");
  }
}

function presentDelivery(row: DeliveryRow) {
  return {
    deliveryId: row.id,
    event: row.event,
    status: row.status,
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    nextAttemptAt: row.status === "pending" ? row.nextAttemptAt.toISOString() : null,
  };
}

async function presentHook(db: Database, row: WebhookRow) {
  return {
    webhookId: row.id,
    url: row.url,
    events: row.events,
    createdAt: row.createdAt.toISOString(),
    consecutiveFailures: row.consecutiveFailures,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    deliveries: (await recentDeliveries(db, row.id, DELIVERY_LOG_SIZE)).map(presentDelivery),
  };
}

async function list(ctx: WebhooksContext) {
  requireHookAdmin(ctx);
  const hooks = await listWebhooks(ctx.db, ctx.actor.workspaceId);
  return { webhooks: await Promise.all(hooks.map((hook) => presentHook(ctx.db, hook))) };
}

async function create(ctx: WebhooksContext, input: ActionInput<"create">) {
  requireHookAdmin(ctx);
  const url = (await checkOutboundUrl(input.url, ctx.outbound ?? DEFAULT_OUTBOUND_SETTINGS)).toString();
  const secret = newSecretToken("whsec_");
  const row = await insertWebhook(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    url,
    events: [...new Set(input.events)],
    secret,
    createdBy: ctx.actor.userId,
    createdAt: ctx.clock(),
  });
  return { webhook: await presentHook(ctx.db, row), secret };
}

async function ownHook(ctx: WebhooksContext, webhookId: string): Promise<WebhookRow> {
  const row = await getWebhook(ctx.db, ctx.actor.workspaceId, webhookId);
  if (!row) throw notFound("Webhook", webhookId, "List the workspace's webhooks to find valid ids.");
  return row;
}

async function remove(ctx: WebhooksContext, input: ActionInput<"delete">) {
  requireHookAdmin(ctx);
  if (!(await deleteWebhook(ctx.db, ctx.actor.workspaceId, input.webhookId))) {
    throw notFound("Webhook", input.webhookId, "List the workspace's webhooks to find valid ids.");
  }
  return { webhookId: input.webhookId, deleted: true };
}

async function enable(ctx: WebhooksContext, input: ActionInput<"enable">) {
  requireHookAdmin(ctx);
  const row = await ownHook(ctx, input.webhookId);
  await enableWebhook(ctx.db, row.id);
  return { webhook: await presentHook(ctx.db, await ownHook(ctx, row.id)) };
}

async function test(ctx: WebhooksContext, input: ActionInput<"test">) {
  requireHookAdmin(ctx);
  const row = await ownHook(ctx, input.webhookId);
  const event = await eventBody(ctx.db, {
    workspaceId: row.workspaceId,
    event: "webhook.test",
    actor: ctx.actor,
    subject: { webhookId: row.id },
    now: ctx.clock(),
  });
  await insertDeliveries(ctx.db, [{ webhookId: row.id, event: "webhook.test", body: event.body, createdAt: ctx.clock() }]);
  return { webhookId: row.id, eventId: event.id };
}

export const webhooksTool = defineTool({
  name: "webhooks",
  description:
    "The workspace's webhooks (owners and admins, signed in; never with an API token). list -> {webhooks} with each hook's latest deliveries; create {url, events} -> {webhook, secret}: the secret is shown once; delete, enable, test {webhookId}. Not an MCP tool.",
  input: webhooksInput,
  readOnly: false,
  handlers: { list, create, delete: remove, enable, test },
});

export type WebhooksResults = ToolResults<typeof webhooksTool>;

/** Who an event names: the person, and the agent acting for them (null for the person themselves). */
export interface EventActor {
  userId: string;
  agent: AgentIdentity | null;
}

interface EventInput {
  workspaceId: string;
  event: WebhookEvent;
  actor: EventActor | null;
  subject: Record<string, unknown>;
  now: Date;
}

/** The JSON every delivery of one event carries: the same bytes on every attempt. */
async function eventBody(tx: Tx | Database, input: EventInput): Promise<{ id: string; body: string }> {
  const id = randomUUID();
  const names = input.actor ? await userNames(tx, [input.actor.userId]) : new Map<string, string>();
  const actor = input.actor
    ? {
        userId: input.actor.userId,
        name: names.get(input.actor.userId) ?? null,
        agent: input.actor.agent ? { kind: input.actor.agent.kind, name: input.actor.agent.name } : null,
      }
    : null;
  const body = JSON.stringify({
    id,
    event: input.event,
    timestamp: input.now.toISOString(),
    workspace: { id: input.workspaceId },
    actor,
    subject: input.subject,
  });
  return { id, body };
}

/**
 * Queues `event` for every live hook of the workspace that wants it, in `tx` (the transaction of the action the
 * event comes from, or the head-move seam's database): a rolled-back action queues nothing.
 */
export async function recordWebhookEvent(tx: Tx | Database, input: EventInput): Promise<void> {
  const hooks = await hooksFor(tx, input.workspaceId, input.event);
  if (hooks.length === 0) return;
  const { body } = await eventBody(tx, input);
  await insertDeliveries(
    tx,
    hooks.map((hook) => ({ webhookId: hook.id, event: input.event, body, createdAt: input.now })),
  );
}

/** `Quire-Signature` for a body sent at `timestamp` (seconds): receivers recompute v1 with their secret. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

export interface WebhookDeliveryOptions {
  /** First retry after this long; each further retry waits twice as long (default 30 s). */
  retryBaseMs: number;
  /** Attempts before a delivery is given up (default 8: about two hours of backoff). */
  maxAttempts: number;
  /** Failures in a row after which a hook is disabled (default 10). */
  disableAfter: number;
  /** How often the queue is looked at (default 2 s). */
  tickMs: number;
}

export const DEFAULT_WEBHOOK_DELIVERY: WebhookDeliveryOptions = { retryBaseMs: 30_000, maxAttempts: 8, disableAfter: 10, tickMs: 2_000 };

export interface WebhookSender {
  /** Claims and sends what is due now; resolves to the number of deliveries attempted. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/** A claim outlives any one attempt (the outbound guard's time limit), so no two processes send it at once. */
const CLAIM_LEASE_MS = 60_000;

export function startWebhookDeliveries(context: {
  db: Database;
  clock: () => Date;
  outbound: OutboundSettings;
  options?: Partial<WebhookDeliveryOptions>;
  /** Email the admin of a hook disabled for failing (QUIRE_SMTP_URL); absent: the settings page alone shows it. */
  email: NotificationEmailOptions | undefined;
}): WebhookSender {
  const { db, clock, outbound } = context;
  const options = { ...DEFAULT_WEBHOOK_DELIVERY, ...context.options };
  const transport = context.email ? nodemailer.createTransport(context.email.smtpUrl) : null;

  async function tellAdmin(hook: WebhookRow): Promise<void> {
    if (!transport || !context.email) return;
    const admin = (await userIdentities(db, [hook.createdBy])).get(hook.createdBy);
    if (!admin) return;
    await transport.sendMail({
      from: context.email.from,
      to: { name: admin.name, address: admin.email },
      subject: `Webhook disabled: ${hook.url}`,
      text: `Quire disabled the webhook to ${hook.url} after ${hook.consecutiveFailures} failed deliveries in a row. Its deliveries wait until an admin enables it again under Settings → Webhooks.`,
    });
  }

  async function attempt(claim: DeliveryClaim): Promise<void> {
    const now = clock();
    const timestamp = Math.floor(now.getTime() / 1000);
    let failure: { status: number | null; error: string };
    try {
      const response = await outboundRequest(
        {
          url: claim.url,
          method: "POST",
          body: claim.body,
          headers: {
            "content-type": "application/json",
            "quire-event": claim.event,
            "quire-delivery": claim.id,
            "quire-signature": webhookSignature(claim.secret, timestamp, claim.body),
          },
          maxResponseBytes: 65_536,
        },
        outbound,
      );
      if (response.status >= 200 && response.status < 300) {
        await recordDelivered(db, claim, response.status, clock());
        return;
      }
      failure = { status: response.status, error: `HTTP ${response.status}` };
    } catch (error) {
      if (!isDomainError(error)) throw error;
      failure = { status: null, error: `${error.code}: ${error.message}` };
    }
    const attempts = claim.attempts + 1;
    const retryAt = attempts < options.maxAttempts ? new Date(clock().getTime() + options.retryBaseMs * 2 ** (attempts - 1)) : null;
    const disabled = await db.transaction((tx) =>
      recordFailed(tx, claim, { ...failure, retryAt, disableAfter: options.disableAfter }, clock()),
    );
    if (disabled) await tellAdmin(disabled).catch((error: unknown) => console.error("[quire] telling a webhook's admin failed", error));
  }

  async function runOnce(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const claims = await db.transaction((tx) => claimDueDeliveries(tx, clock(), CLAIM_LEASE_MS, 10));
      await Promise.all(
        claims.map((claim) =>
          attempt(claim).catch((error: unknown) => console.error("[quire] a webhook delivery failed unexpectedly", error)),
        ),
      );
      attempted += claims.length;
      if (claims.length < 10) return attempted;
    }
  }

  return periodicWorker("webhook", options.tickMs, runOnce, () => transport?.close());
}
