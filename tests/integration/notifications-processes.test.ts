/**
 * Notifications with two Quire processes on one PostgreSQL and one Redis: a badge served by one process hears an
 * item recorded by the other (the `inbox` subscription, through Redis), and of two processes sending email to one
 * SMTP server, exactly one sends each person's digest (claims taken FOR UPDATE SKIP LOCKED).
 */
import type { AddressInfo } from "node:net";
import { createTRPCClient, httpSubscriptionLink } from "@trpc/client";
import { EventSource } from "eventsource";
import { encode } from "next-auth/jwt";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, expect, test } from "vitest";
import type { AppRouter } from "@/server/api/router";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { waitFor } from "../helpers/collab";
import { createTestDatabase, type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { type QuireProcess, startQuireProcess, TEST_PROCESS_AUTH_SECRET } from "../helpers/quire-process";

const REDIS_URL = "redis://127.0.0.1:6379";
const withoutPostgres = !testDatabaseUrl();

let database: TestDatabase;
let smtp: SMTPServer;
const received: string[] = [];
const processes: QuireProcess[] = [];
let oliveToken: string;
const reviewers: Array<{ id: string; email: string; cookie: string }> = [];
const closers: Array<() => void> = [];

beforeAll(async () => {
  if (withoutPostgres) return;
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      stream.on("data", () => {});
      stream.on("end", () => {
        for (const to of session.envelope.rcptTo) received.push(to.address);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  database = await createTestDatabase();
  await addUser(database.db, { email: "olive@example.test", name: "Olive Owner", password: "correct horse battery" }, new Date());
  ({ token: oliveToken } = await issueApiToken(database.db, { email: "olive@example.test", label: "t" }, new Date()));
  for (const name of ["rex", "mia", "ned", "uma", "ida", "kai"]) {
    const email = `${name}@example.test`;
    const { user } = await addUser(database.db, { email, name, password: "correct horse battery" }, new Date());
    const cookie = `${sessionCookieName(false)}=${await encode({ token: { sub: user.id }, secret: TEST_PROCESS_AUTH_SECRET })}`;
    reviewers.push({ id: user.id, email, cookie });
  }
  const env = { QUIRE_SMTP_URL: smtpUrl, QUIRE_EMAIL_BATCH_SECONDS: "1" };
  processes.push(await startQuireProcess({ databaseUrl: database.url!, redisUrl: REDIS_URL, env }));
  processes.push(await startQuireProcess({ databaseUrl: database.url!, redisUrl: REDIS_URL, env }));
}, 60_000);

afterAll(async () => {
  for (const close of closers) close();
  for (const p of processes) await p.stop("SIGTERM");
  await database?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

/** A tool call over tRPC as Olive's agent (her API token). */
async function asOlive<T>(url: string, procedure: string, input: Record<string, unknown>): Promise<T> {
  const response = await fetch(`${url}/api/trpc/${procedure}`, {
    method: "POST",
    headers: { authorization: `Bearer ${oliveToken}`, "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  const body = (await response.json()) as { result?: { data: T }; error?: unknown };
  if (!body.result) throw new Error(`${procedure} failed: ${JSON.stringify(body.error)}`);
  return body.result.data;
}

async function requestReviews(url: string, path: string) {
  const doc = await asOlive<{ documentId: string; sectionIds: string[] }>(url, "documents", {
    action: "create",
    path,
    sections: [{ name: "A", content: [{ blockType: "text", text: "A" }] }],
  });
  await asOlive(url, "documents", { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
  await asOlive(url, "sections", {
    action: "update",
    documentId: doc.documentId,
    branchName: "feature",
    sectionId: doc.sectionIds[0],
    newContent: [{ blockType: "text", text: "A changed" }],
  });
  return asOlive<{ mergeRequestId: string }>(url, "mergeRequests", {
    action: "create",
    documentId: doc.documentId,
    sourceBranch: "feature",
    targetBranch: "main",
    title: `Review ${path}`,
    reviewerIds: reviewers.map((r) => r.id),
  });
}

test.skipIf(withoutPostgres)(
  "a badge on one process hears an item recorded on the other; each digest is sent by exactly one process",
  async () => {
    const [one, two] = processes as [QuireProcess, QuireProcess];
    const rex = reviewers[0]!;
    const client = createTRPCClient<AppRouter>({
      links: [
        httpSubscriptionLink({
          url: `${two.url}/api/trpc`,
          EventSource,
          eventSourceOptions: {
            fetch: (url, init) =>
              fetch(url, { ...init, headers: { ...init?.headers, cookie: rex.cookie, "sec-fetch-site": "same-origin" } }),
          },
        }),
      ],
    });
    const counts: number[] = [];
    const subscription = client.inbox.subscribe(undefined, { onData: (value) => counts.push(value.unreadCount) });
    closers.push(() => subscription.unsubscribe());
    await waitFor(() => counts.length > 0, 10_000, "the first inbox state");
    expect(counts.at(-1)).toBe(0);

    await requestReviews(one.url, "processes/first");
    await waitFor(() => counts.at(-1) === 1, 10_000, "the item recorded by the other process");

    // Both processes run the sender every quarter second; each reviewer gets one digest, not two.
    await waitFor(() => reviewers.every((r) => received.includes(r.email)), 15_000, "every reviewer's digest");
    await new Promise((r) => setTimeout(r, 2_500));
    for (const reviewer of reviewers) expect(received.filter((to) => to === reviewer.email)).toHaveLength(1);
    expect(received).not.toContain("olive@example.test");
  },
  60_000,
);
