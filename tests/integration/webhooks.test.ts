/**
 * Webhooks against a real receiver on loopback (opened by the outbound setting the tests use): deliveries arrive as
 * signed JSON for the events a hook wants, from the same seams the inbox uses (a commit, a merge request opened,
 * approved, merged, a reply); a receiver that fails is retried with backoff until it answers; a hook that keeps
 * failing is disabled and its admin emailed; a private address is refused at registration and at delivery; only a
 * signed-in admin manages hooks (never an API token).
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { webhooks } from "@/db/schema";
import { issueApiToken } from "@/server/auth/accounts";
import { type WebhooksInput, webhooksTool } from "@/server/actions/webhooks";
import { runTool, type ToolResult } from "@/server/actions/tool";
import { DEFAULT_OUTBOUND_SETTINGS } from "@/server/outbound/addresses";
import { text } from "../helpers/blocks";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** When it arrived (ms). */
  arrivedAt: number;
}

const received: Received[] = [];
/** Per path: how many more requests to answer 500 before answering 200. */
const failuresLeft = new Map<string, number>();
const mails: string[] = [];
let receiver: Server;
let smtp: SMTPServer;
let base: string;
let server: TestServer;
let olivia: TestUser;
let mia: TestUser;
let documentId: string;
let sectionId: string;

function verified(delivery: Received, secret: string): boolean {
  const header = String(delivery.headers["quire-signature"]);
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(`${match[1]}.${delivery.body}`).digest();
  return timingSafeEqual(expected, Buffer.from(match[2]!, "hex"));
}

const at = (path: string) => received.filter((r) => r.path === path);

const outbound = { ...DEFAULT_OUTBOUND_SETTINGS, allowHttp: true, allow: ["loopback" as const], timeoutMs: 2_000 };

/** The `webhooks` tool as a signed-in person, typed per action (what the settings page calls through the bridge). */
async function hooks<const I extends WebhooksInput>(user: TestUser, input: I): Promise<ToolResult<typeof webhooksTool, I>> {
  const actor = { ...user.actor, principal: "person" as const };
  return runTool(webhooksTool, { db: server.db, actor, clock: () => new Date(), outbound }, input);
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      const path = req.url ?? "";
      received.push({ path, headers: req.headers, body, arrivedAt: Date.now() });
      const left = failuresLeft.get(path) ?? 0;
      if (left > 0) failuresLeft.set(path, left - 1);
      res.writeHead(left > 0 ? 500 : 200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, _session, callback) {
      let raw = "";
      stream.on("data", (chunk: Buffer) => {
        raw += chunk.toString();
      });
      stream.on("end", () => {
        mails.push(raw);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const smtpPort = (smtp.server.address() as AddressInfo).port;
  server = await startTestServer({
    outbound,
    // The rounds are run by the test; the timer's tick is far away.
    webhookDelivery: { retryBaseMs: 50, maxAttempts: 5, disableAfter: 3, tickMs: 3_600_000 },
    email: { smtpUrl: `smtp://127.0.0.1:${smtpPort}`, from: "Quire <quire@example.test>", batchSeconds: 3_600 },
  });
  olivia = await server.createUser("olivia@example.test", "Olivia Owner");
  mia = await server.createUser("mia@example.test", "Mia Member");
  const created = await server.callTool("documents", olivia.userId, {
    action: "create",
    path: "hooks/plan",
    sections: [{ name: "Plan", content: [text("Ship in May.")] }],
  });
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
});

afterAll(async () => {
  await server?.close();
  receiver?.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
});

/** Runs delivery rounds until `done` holds (retries come due after their backoff). */
async function deliverUntil(done: () => boolean, rounds = 60): Promise<void> {
  for (let i = 0; i < rounds && !done(); i++) {
    await server.webhookDeliveries.runOnce();
    if (!done()) await new Promise((resolve) => setTimeout(resolve, 60));
  }
  expect(done()).toBe(true);
}

describe("managing hooks", () => {
  test("a private or loopback-by-default address is refused at registration; http refused without the setting", async () => {
    const strict = await startTestServer({ database: server.database });
    try {
      const caller = strict.trpcCaller(olivia);
      await expect(caller.webhooks({ action: "create", url: `${base}/x`, events: ["document.committed"] })).rejects.toMatchObject({
        cause: { code: "OUTBOUND_REFUSED" },
      });
      await expect(
        caller.webhooks({ action: "create", url: "https://10.0.0.8/hook", events: ["document.committed"] }),
      ).rejects.toMatchObject({ cause: { code: "OUTBOUND_REFUSED", details: { reason: "address" } } });
    } finally {
      await strict.close();
    }
    await expect(
      server.trpcCaller(olivia).webhooks({ action: "create", url: "https://169.254.169.254/latest", events: ["comment.added"] }),
    ).rejects.toMatchObject({ cause: { code: "OUTBOUND_REFUSED" } });
  });

  test("a member may not manage hooks; an API token may not, even the owner's", async () => {
    await expect(server.trpcCaller(mia).webhooks({ action: "create", url: `${base}/m`, events: ["comment.added"] })).rejects.toMatchObject({
      cause: { code: "PERMISSION_DENIED" },
    });
    const asToken = server.trpcClient(olivia.token);
    await expect(asToken.webhooks.mutate({ action: "list" })).rejects.toMatchObject({ data: { code: "FORBIDDEN" } });
    await expect(asToken.webhooks.mutate({ action: "create", url: `${base}/t`, events: ["comment.added"] })).rejects.toMatchObject({
      data: { code: "FORBIDDEN" },
    });
  });
});

describe("deliveries", () => {
  let secret: string;
  let hookId: string;

  test("events arrive signed, as JSON naming the event, the workspace, the actor with its agent, and the subject", async () => {
    const created = await hooks(olivia, {
      action: "create",
      url: `${base}/events`,
      events: ["document.committed", "merge_request.opened", "merge_request.approved", "merge_request.merged", "comment.added"],
    });
    secret = created.secret;
    hookId = created.webhook.webhookId;
    expect(secret).toMatch(/^whsec_/);
    expect(JSON.stringify(await hooks(olivia, { action: "list" }))).not.toContain(secret);

    const { token } = await issueApiToken(server.db, { email: olivia.email, label: "Claude" }, new Date());
    const claude = await server.mcpClient(token);
    await callMcp(claude, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId,
      newContent: [text('Ship <svc:comment-new body="Sure?">in June</svc:comment-new>.')],
    });
    await claude.close();
    await deliverUntil(() => at("/events").length >= 2);
    const bodies = at("/events").map((r) => JSON.parse(r.body));
    const committed = bodies.find((b) => b.event === "document.committed");
    expect(committed).toMatchObject({
      workspace: { id: olivia.actor.workspaceId },
      actor: { userId: olivia.userId, name: "Olivia Owner", agent: { kind: "api_token", name: "Claude" } },
      subject: { documentId, branchName: "main", kind: "write" },
    });
    expect(bodies.find((b) => b.event === "comment.added")).toMatchObject({ subject: { documentId, sectionId, reply: false } });
    for (const delivery of at("/events")) {
      expect(delivery.headers["content-type"]).toBe("application/json");
      expect(verified(delivery, secret)).toBe(true);
      expect(verified(delivery, "whsec_wrong")).toBe(false);
    }
  });

  test("merge request opened, approved and merged reach the hook; an unwanted event does not", async () => {
    const before = at("/events").length;
    await server.callTool("documents", olivia.userId, { action: "create_branch", documentId, branchName: "autumn" });
    await server.callTool("sections", olivia.userId, {
      action: "create",
      documentId,
      branchName: "autumn",
      name: "Risks",
      content: [text("None yet.")],
    });
    const opened = await server.callTool("merge_requests", olivia.userId, {
      action: "create",
      documentId,
      sourceBranch: "autumn",
      targetBranch: "main",
      title: "Autumn",
      reviewerIds: [mia.userId],
    });
    await server.callTool("merge_requests", mia.userId, { action: "approve", mergeRequestId: opened.mergeRequestId });
    await server.callTool("merge_requests", olivia.userId, { action: "execute", mergeRequestId: opened.mergeRequestId });
    const wanted = ["merge_request.opened", "merge_request.approved", "merge_request.merged"];
    const events = () =>
      at("/events")
        .slice(before)
        .map((r) => JSON.parse(r.body).event as string);
    await deliverUntil(() => wanted.every((event) => events().includes(event)));
    const merged = at("/events")
      .map((r) => JSON.parse(r.body))
      .find((b) => b.event === "merge_request.merged");
    expect(merged).toMatchObject({ subject: { mergeRequestId: opened.mergeRequestId, title: "Autumn" }, actor: { agent: null } });
    // The hook did not ask for these.
    expect(events()).not.toContain("merge_request.closed");
  });

  test("a receiver that fails is retried with backoff (each wait twice the last) until it answers; the log shows it", async () => {
    const hook = await hooks(olivia, { action: "create", url: `${base}/flaky`, events: ["comment.added"] });
    failuresLeft.set("/flaky", 2);
    const sent = await hooks(olivia, { action: "test", webhookId: hook.webhook.webhookId });
    await deliverUntil(() => at("/flaky").length === 3);
    const attempts = at("/flaky");
    // retryBaseMs 50: the first retry comes no sooner than 50 ms after the failure, the second no sooner than 100 ms.
    expect(attempts[1]!.arrivedAt - attempts[0]!.arrivedAt).toBeGreaterThanOrEqual(50);
    expect(attempts[2]!.arrivedAt - attempts[1]!.arrivedAt).toBeGreaterThanOrEqual(100);
    expect(new Set(attempts.map((r) => JSON.parse(r.body).id))).toEqual(new Set([sent.eventId]));
    expect(attempts.every((r) => verified(r, hook.secret))).toBe(true);
    const listed = (await hooks(olivia, { action: "list" })).webhooks.find((w) => w.webhookId === hook.webhook.webhookId)!;
    expect(listed.deliveries[0]).toMatchObject({ event: "webhook.test", status: "delivered", attempts: 3, lastStatus: 200 });
    expect(listed.consecutiveFailures).toBe(0);
    expect(listed.disabledAt).toBeNull();
  });

  test("a hook that keeps failing is disabled and its admin is emailed; enable makes it live again", async () => {
    const hook = await hooks(olivia, { action: "create", url: `${base}/down`, events: ["comment.added"] });
    failuresLeft.set("/down", 1_000);
    for (let i = 0; i < 3; i++) await hooks(olivia, { action: "test", webhookId: hook.webhook.webhookId });
    const disabled = async () => (await hooks(olivia, { action: "list" })).webhooks.find((w) => w.webhookId === hook.webhook.webhookId)!;
    await deliverUntil(() => mails.some((m) => m.includes("Webhook disabled")));
    const row = await disabled();
    expect(row.disabledAt).not.toBeNull();
    expect(row.consecutiveFailures).toBe(3);
    expect(mails.find((m) => m.includes("Webhook disabled"))).toContain("olivia@example.test");
    // Disabled: nothing more is sent.
    const sentSoFar = at("/down").length;
    await server.webhookDeliveries.runOnce();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await server.webhookDeliveries.runOnce();
    expect(at("/down").length).toBe(sentSoFar);
    failuresLeft.set("/down", 0);
    await hooks(olivia, { action: "enable", webhookId: hook.webhook.webhookId });
    await deliverUntil(() => at("/down").length > sentSoFar);
  });

  test("an address that turned private after registration is refused at delivery, and nothing is sent", async () => {
    const hook = await hooks(olivia, { action: "create", url: `${base}/later`, events: ["comment.added"] });
    // As if the host now resolved elsewhere: the stored URL points at a private address.
    await server.db.update(webhooks).set({ url: "http://10.255.255.1/later" }).where(eq(webhooks.id, hook.webhook.webhookId));
    await hooks(olivia, { action: "test", webhookId: hook.webhook.webhookId });
    await server.webhookDeliveries.runOnce();
    const listed = (await hooks(olivia, { action: "list" })).webhooks.find((w) => w.webhookId === hook.webhook.webhookId)!;
    expect(listed.deliveries[0]).toMatchObject({ status: "pending", attempts: 1, lastStatus: null });
    expect(listed.deliveries[0]!.lastError).toMatch(/^OUTBOUND_REFUSED/);
  });

  test("deleting a hook stops its deliveries", async () => {
    await hooks(olivia, { action: "delete", webhookId: hookId });
    const listed = await hooks(olivia, { action: "list" });
    expect(listed.webhooks.map((w) => w.webhookId)).not.toContain(hookId);
  });
});
