"use client";
/**
 * The inbox's list and its one button. Opening an item marks it read first, then goes to its place; the list is
 * read again whenever the inbox changes (the `inbox` subscription), so new items appear without a reload.
 */
import { useSubscription } from "@trpc/tanstack-react-query";
import { useRouter } from "next/navigation";
import { type MouseEvent, useEffect, useRef, useState } from "react";
import { TimeAgo } from "@/app/_components/time-ago";
import { toolCall } from "@/app/_lib/tool-call";
import { useTRPC, useTRPCClient } from "@/app/_lib/trpc";
import type { NotificationView, notificationsTool } from "@/server/actions/notifications";

const useNotificationsTool = () => toolCall<typeof notificationsTool>(useTRPCClient().notifications.mutate);

const KIND_LABELS: Record<NotificationView["kind"], string> = {
  review_requested: "Review requested",
  approved: "Approved",
  changes_requested: "Changes requested",
  merged: "Merged",
  closed: "Closed",
  mention: "Mention",
  reply: "Reply",
  approval_stale: "Approval stale",
  merge_request_updated: "Updated",
};

/**
 * Follows the inbox for the page: reads the page again when the inbox changes
 * after it was rendered, also when that happened between the server's render
 * and the subscription's start (its first state's unread count is not the one
 * the page shows). Rendered on every inbox page, an empty one included.
 */
export function InboxFollower({ unreadCount }: { unreadCount: number }) {
  const router = useRouter();
  const inbox = useSubscription(useTRPC().inbox.subscriptionOptions());
  const last = useRef<string | null>(null);
  useEffect(() => {
    if (!inbox.data) return;
    const state = JSON.stringify(inbox.data);
    if (last.current === null) {
      last.current = state;
      if (inbox.data.unreadCount !== unreadCount) router.refresh();
    } else if (last.current !== state) {
      last.current = state;
      router.refresh();
    }
  }, [inbox.data, router, unreadCount]);
  return null;
}

export function InboxList({ items }: { items: NotificationView[] }) {
  const notifications = useNotificationsTool();
  const router = useRouter();

  async function open(event: MouseEvent<HTMLAnchorElement>, item: NotificationView) {
    // A modified click (new tab, download) is the browser's; the item stays unread until opened here.
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    if (!item.read) await notifications({ action: "mark_read", notificationIds: [item.notificationId] });
    router.push(item.link);
  }

  return (
    <ul className="inbox-list" data-testid="inbox-list">
      {items.map((item) => (
        <li
          key={item.notificationId}
          className={`inbox-item${item.read ? "" : " inbox-item-unread"}`}
          data-testid="inbox-item"
          data-kind={item.kind}
          data-read={item.read}
        >
          <a href={item.link} onClick={(event) => void open(event, item)}>
            <span className="inbox-dot" aria-hidden="true" />
            <span className="inbox-title">
              {item.read ? null : <span className="visually-hidden">Unread: </span>}
              {item.title}
            </span>
            <span className="inbox-when">
              <TimeAgo value={item.createdAt} />
            </span>
            <span className="inbox-meta">
              {KIND_LABELS[item.kind]}
              {item.actorName ? ` · ${item.actorName}` : ""}
            </span>
          </a>
        </li>
      ))}
    </ul>
  );
}

export function MarkAllReadButton({ disabled }: { disabled: boolean }) {
  const notifications = useNotificationsTool();
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <div>
      <button
        type="button"
        className="button"
        disabled={disabled || pending}
        onClick={async () => {
          setPending(true);
          const result = await notifications({ action: "mark_all_read" });
          setPending(false);
          setError(result.ok ? null : result.message);
          router.refresh();
        }}
      >
        {pending ? "Marking…" : "Mark all read"}
      </button>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
