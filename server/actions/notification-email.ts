/**
 * Email for people who are away (QUIRE_SMTP_URL): a digest of the inbox items they have not read, at most one per
 * person per batch window (QUIRE_EMAIL_BATCH_SECONDS), by their setting (all; direct: reviews requested and
 * mentions; none), with an unsubscribe link that works without signing in.
 *
 * The sender runs in every server process; each round claims the digests that are due with
 * `FOR UPDATE SKIP LOCKED` (claimDueEmails), so with several processes exactly one sends each. A digest is claimed
 * (its items marked mailed) before it is sent, and given back if sending fails, so a crash between the two loses
 * that digest rather than sending it twice. What an item says is checked against the recipient's access at send
 * time: an item whose place they may no longer see is left out.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import nodemailer from "nodemailer";
import type { Database } from "@/db/client";
import { actorForUser } from "@/server/access/actor";
import { DomainError } from "@/server/core/errors";
import { claimDueEmails, type EmailClaim, releaseEmailClaim, setEmailSetting } from "@/server/store/notifications";
import { DIRECT_KINDS, notificationLink, visibilityFor } from "./notifications";
import { periodicWorker } from "./periodic-worker";

export interface NotificationEmailOptions {
  /** smtp:// or smtps:// URL of the mail server (QUIRE_SMTP_URL). */
  smtpUrl: string;
  /** The From address (QUIRE_EMAIL_FROM). */
  from: string;
  /** At most one email per person per this many seconds (QUIRE_EMAIL_BATCH_SECONDS). */
  batchSeconds: number;
}

const UNSUBSCRIBE_PURPOSE = "quire-unsubscribe-v1";

const signature = (secret: string, userId: string) =>
  createHmac("sha256", secret).update(`${UNSUBSCRIBE_PURPOSE}\n${userId}`).digest("base64url");

/** A token that sets this person's email to none, signed with the server's secret (it never expires: old emails keep working). */
export function unsubscribeToken(secret: string, userId: string): string {
  return `${userId}.${signature(secret, userId)}`;
}

/** Sets the email setting of the token's person to none; SIGNATURE_INVALID for a token this server did not sign. */
export async function unsubscribe(db: Database, secret: string, token: string): Promise<{ userId: string }> {
  const [userId, given] = token.split(".", 2);
  const expected = userId ? Buffer.from(signature(secret, userId)) : Buffer.alloc(0);
  const received = Buffer.from(given ?? "");
  if (!userId || !/^[0-9a-f-]{36}$/i.test(userId) || expected.length !== received.length || !timingSafeEqual(expected, received)) {
    throw new DomainError(
      "SIGNATURE_INVALID",
      "This unsubscribe link is not valid. Change email notifications on Settings → Notifications.",
    );
  }
  await setEmailSetting(db, userId, "none");
  return { userId };
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** The digest's text and HTML for the items kept, each linking to its place on the public site. */
function digest(claim: EmailClaim, items: EmailClaim["items"], baseUrl: string, unsubscribeUrl: string) {
  const lines = items.map((item) => ({
    text: `${item.title}${item.actorName ? ` (by ${item.actorName})` : ""}`,
    url: `${baseUrl}${notificationLink(item)}`,
  }));
  const subject = items.length === 1 ? `Quire: ${items[0]!.title}` : `Quire: ${items.length} new notifications`;
  const settingsUrl = `${baseUrl}/settings/notifications`;
  const text = [
    `Hello ${claim.name},`,
    "",
    ...lines.flatMap((l) => [`- ${l.text}`, `  ${l.url}`]),
    "",
    `Your inbox: ${baseUrl}/inbox`,
    `Email settings: ${settingsUrl}`,
    `Stop these emails: ${unsubscribeUrl}`,
  ].join("\n");
  const html = [
    `<p>Hello ${escapeHtml(claim.name)},</p>`,
    `<ul>${lines.map((l) => `<li><a href="${escapeHtml(l.url)}">${escapeHtml(l.text)}</a></li>`).join("")}</ul>`,
    `<p><a href="${escapeHtml(`${baseUrl}/inbox`)}">Your inbox</a> · <a href="${escapeHtml(settingsUrl)}">Email settings</a> · <a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe</a></p>`,
  ].join("\n");
  return { subject, text, html };
}

export interface NotificationEmailSender {
  /** Claims and sends what is due now; resolves to the number of emails sent. */
  runOnce(): Promise<number>;
  /** Stops the rounds and waits for the one under way. */
  stop(): Promise<void>;
}

/** Starts the rounds (every few seconds, never slower than the batch window needs). */
export function startNotificationEmail(context: {
  db: Database;
  clock: () => Date;
  options: NotificationEmailOptions;
  authSecret: string;
  /** The public base URL of links (QUIRE_PUBLIC_URL, else the server's own URL), without a trailing slash. */
  baseUrl: () => string;
}): NotificationEmailSender {
  const { db, clock, options, authSecret } = context;
  const transport = nodemailer.createTransport(options.smtpUrl);
  const windowMs = options.batchSeconds * 1000;

  async function send(claim: EmailClaim): Promise<boolean> {
    const actor = await actorForUser(db, claim.userId, "person");
    if (!actor) return false;
    const visible = visibilityFor(db, actor);
    const items = [];
    for (const item of claim.items) {
      if (claim.setting === "direct" && !DIRECT_KINDS.has(item.kind)) continue;
      if (await visible(item)) items.push(item);
    }
    if (items.length === 0) return false;
    const baseUrl = context.baseUrl();
    const token = unsubscribeToken(authSecret, claim.userId);
    const unsubscribePage = `${baseUrl}/unsubscribe?token=${encodeURIComponent(token)}`;
    const oneClick = `${baseUrl}/api/unsubscribe?token=${encodeURIComponent(token)}`;
    const { subject, text, html } = digest(claim, items, baseUrl, unsubscribePage);
    await transport.sendMail({
      from: options.from,
      to: { name: claim.name, address: claim.email },
      subject,
      text,
      html,
      // RFC 8058: mail clients offer their own unsubscribe button, which POSTs to the one-click URL.
      list: { unsubscribe: { url: oneClick, comment: "Unsubscribe" } },
      headers: { "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" },
    });
    return true;
  }

  async function runOnce(): Promise<number> {
    let sent = 0;
    for (;;) {
      const claims = await claimDueEmails(db, clock(), windowMs, 20);
      for (const claim of claims) {
        try {
          if (await send(claim)) sent += 1;
        } catch (error) {
          console.error("[quire] notification email failed; it is tried again next round", error);
          await releaseEmailClaim(db, claim).catch((release: unknown) => console.error("[quire] giving an email back failed", release));
        }
      }
      if (claims.length < 20) return sent;
    }
  }

  const tick = Math.min(Math.max(windowMs / 4, 250), 15_000);
  return periodicWorker("notification email", tick, runOnce, () => transport.close());
}
