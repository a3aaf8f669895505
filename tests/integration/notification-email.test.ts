/**
 * Email for people who are away, against a real SMTP server run in this process (smtp-server): the digest arrives
 * batched (one email per person per window, what arrived meanwhile together), only items still unread at send time,
 * by each person's setting (all / direct: reviews requested and mentions / none), with links on the public URL, an
 * unsubscribe link (and List-Unsubscribe headers) that works without signing in and sets email to none.
 */
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { text } from "../helpers/blocks";
import { waitFor } from "../helpers/collab";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

interface Received {
  to: string;
  headers: Map<string, string>;
  body: string;
}

const PUBLIC_URL = "https://quire.example.test";
const received: Received[] = [];
let smtp: SMTPServer;
let server: TestServer;
let olive: TestUser;
let rex: TestUser;
let mia: TestUser;
let uma: TestUser;

/** Undoes quoted-printable and base64 transfer encodings, part by part, so the test reads the text as sent. */
function decodeBody(raw: string): string {
  return raw
    .split(/\r?\n--[^\r\n]+\r?\n/)
    .map((part) => {
      const [head = "", ...rest] = part.split(/\r?\n\r?\n/);
      const body = rest.join("\n\n");
      if (/content-transfer-encoding:\s*quoted-printable/i.test(head)) {
        const bytes = body
          .replace(/=\r?\n/g, "")
          .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
        return Buffer.from(bytes, "latin1").toString("utf8");
      }
      if (/content-transfer-encoding:\s*base64/i.test(head)) return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
      return part;
    })
    .join("\n");
}

function parse(raw: string, to: string): Received {
  const split = raw.search(/\r?\n\r?\n/);
  const headerText = raw.slice(0, split).replace(/\r?\n[ \t]+/g, " ");
  const headers = new Map<string, string>();
  for (const line of headerText.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return { to, headers, body: decodeBody(raw.slice(split)) };
}

const mailsTo = (user: TestUser) => received.filter((m) => m.to === user.email);

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        for (const to of session.envelope.rcptTo) received.push(parse(Buffer.concat(chunks).toString("utf8"), to.address));
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  server = await startTestServer({
    publicUrl: PUBLIC_URL,
    email: { smtpUrl: `smtp://127.0.0.1:${port}`, from: "Quire <quire@example.test>", batchSeconds: 1 },
  });
  olive = await server.createUser("olive@example.test", "Olive Owner");
  rex = await server.createUser("rex@example.test", "Rex Reviewer");
  mia = await server.createUser("mia@example.test", "Mia Member");
  uma = await server.createUser("uma@example.test", "Uma Unplugged");
  await server.trpcCaller(mia).notifications({ action: "set_settings", email: "direct" });
  await server.trpcCaller(uma).notifications({ action: "set_settings", email: "none" });
});

afterAll(async () => {
  await server?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

async function openRequest(path: string, reviewers: TestUser[]) {
  const doc = await server.callTool("documents", olive.userId, { action: "create", path, sections: [{ name: "A", content: [text("A")] }] });
  await server.callTool("documents", olive.userId, { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
  const write = (body: string) =>
    server.callTool("sections", olive.userId, {
      action: "update",
      documentId: doc.documentId,
      branchName: "feature",
      sectionId: doc.sectionIds[0]!,
      newContent: [text(body)],
    });
  await write("A changed");
  const request = await server.callTool("merge_requests", olive.userId, {
    action: "create",
    documentId: doc.documentId,
    sourceBranch: "feature",
    targetBranch: "main",
    title: "Quarterly plan",
    reviewerIds: reviewers.map((r) => r.userId),
  });
  return { ...request, write };
}

describe("email digests", () => {
  test("one batched digest per person with links on the public URL, by setting; the unsubscribe link sets email to none without signing in", async () => {
    const request = await openRequest("mail/plan", [rex, mia, uma]);
    // A second event inside the window: the request was updated (not a direct kind).
    await request.write("A changed again");
    await waitFor(() => mailsTo(rex).length > 0 && mailsTo(mia).length > 0, 10_000, "the digests");
    await new Promise((r) => setTimeout(r, 1_500));

    const [rexMail, ...more] = mailsTo(rex);
    expect(more).toEqual([]);
    const link = `${PUBLIC_URL}/merge-requests/${request.mergeRequestId}`;
    expect(rexMail!.headers.get("subject")).toBe("Quire: 2 new notifications");
    expect(rexMail!.body).toContain("Review requested: “Quarterly plan” (by Olive Owner)");
    expect(rexMail!.body).toContain("Updated: “Quarterly plan” (by Olive Owner)");
    expect(rexMail!.body).toContain(link);
    expect(rexMail!.body).toContain(`${PUBLIC_URL}/settings/notifications`);

    // Mia wants direct items only: the review request, not the update.
    const [miaMail, ...miaMore] = mailsTo(mia);
    expect(miaMore).toEqual([]);
    expect(miaMail!.body).toContain("Review requested");
    expect(miaMail!.body).not.toContain("Updated:");
    // Uma wants none.
    expect(mailsTo(uma)).toEqual([]);

    // Unsubscribe: the page link and the one-click header, both signed; the header's POST works without a session.
    const pageLink = /https:\/\/quire\.example\.test\/unsubscribe\?token=([A-Za-z0-9._%-]+)/.exec(rexMail!.body);
    expect(pageLink).not.toBeNull();
    expect(rexMail!.headers.get("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    const oneClick = /<(https:\/\/quire\.example\.test\/api\/unsubscribe\?token=[^>]+)>/.exec(
      rexMail!.headers.get("list-unsubscribe") ?? "",
    );
    expect(oneClick).not.toBeNull();
    const forged = await fetch(`${server.url}/api/unsubscribe?token=${rex.userId}.forged`, { method: "POST" });
    expect(forged.status).toBe(403);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe("SIGNATURE_INVALID");
    expect(await server.trpcCaller(rex).notifications({ action: "get_settings" })).toEqual({ email: "all" });
    const unsubscribed = await fetch(oneClick![1]!.replace(PUBLIC_URL, server.url), { method: "POST" });
    expect(unsubscribed.status).toBe(200);
    expect(await server.trpcCaller(rex).notifications({ action: "get_settings" })).toEqual({ email: "none" });
    // The unsubscribe page's button (a browser's form POST) is answered with the page saying so.
    const fromPage = await fetch(`${server.url}/api/unsubscribe?token=${pageLink![1]!}`, {
      method: "POST",
      headers: { accept: "text/html" },
      redirect: "manual",
    });
    expect(fromPage.status).toBe(303);
    expect(fromPage.headers.get("location")).toBe("/unsubscribe?done=1");

    // Now Rex gets no more email.
    await openRequest("mail/after-unsubscribe", [rex]);
    await new Promise((r) => setTimeout(r, 2_500));
    expect(mailsTo(rex)).toHaveLength(1);
    await server.trpcCaller(rex).notifications({ action: "set_settings", email: "all" });
  });

  test("at most one email per window; what was read before sending is not sent", async () => {
    const before = mailsTo(mia).length;
    const first = await openRequest("mail/first", [mia]);
    await waitFor(() => mailsTo(mia).length === before + 1, 10_000, "the first digest");
    const sentAt = Date.now();
    // Two more requests right away: they wait for the window and arrive together.
    const second = await openRequest("mail/second", [mia]);
    const third = await openRequest("mail/third", [mia]);
    // One read in the meantime is left out.
    const inbox = await server.callTool("notifications", mia.userId, { action: "list", unreadOnly: true });
    const thirdItem = inbox.notifications.find((n) => n.mergeRequestId === third.mergeRequestId)!;
    await server.trpcCaller(mia).notifications({ action: "mark_read", notificationIds: [thirdItem.notificationId] });
    await waitFor(() => mailsTo(mia).length === before + 2, 10_000, "the second digest");
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(900);
    const digest = mailsTo(mia).at(-1)!;
    expect(digest.body).toContain(`${PUBLIC_URL}/merge-requests/${second.mergeRequestId}`);
    expect(digest.body).not.toContain(third.mergeRequestId);
    expect(digest.body).not.toContain(first.mergeRequestId);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(mailsTo(mia)).toHaveLength(before + 2);
  });
});
