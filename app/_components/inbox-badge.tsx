"use client";
/**
 * The header's inbox link with the unread count, kept current by the `inbox` subscription (Server-Sent Events: the
 * server sends the count whenever this person's inbox changes, here or in another process), never by polling.
 */
import { useSubscription } from "@trpc/tanstack-react-query";
import Link from "next/link";
import { useTRPC } from "@/app/_lib/trpc";
import "./inbox-badge.css";

export function InboxBadge() {
  const inbox = useSubscription(useTRPC().inbox.subscriptionOptions());
  const unread = inbox.data?.unreadCount;
  const shown = unread === undefined ? "" : unread >= 100 ? "99+" : String(unread);
  return (
    <Link
      href="/inbox"
      className="inbox-link"
      data-testid="inbox-link"
      aria-label={unread === undefined ? "Inbox" : `Inbox, ${shown} unread`}
    >
      <svg className="inbox-icon" viewBox="0 0 20 20" width="18" height="18" aria-hidden="true" focusable="false">
        <path
          d="M3 11.5 5 4h10l2 7.5V16H3z M3 11.5h4.5a2.5 2.5 0 0 0 5 0H17"
          fill="none"
          stroke="currentColor"
          strokeWidth="1.6"
          strokeLinejoin="round"
        />
      </svg>
      <span className="inbox-label">Inbox</span>
      <span className={`inbox-count${unread ? "" : " inbox-count-empty"}`} data-testid="inbox-count" aria-hidden="true">
        {shown}
      </span>
    </Link>
  );
}
