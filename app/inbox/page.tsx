import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { PageHeading } from "@/app/_components/page-parts";
import { attempt } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { InboxFollower, InboxList, MarkAllReadButton } from "./inbox-client";
import "./inbox.css";

export const metadata: Metadata = { title: "Inbox" };

/** The signed-in person's inbox: unread or all, newest first, 30 a page; each item links to its place. */
export default async function InboxPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const unreadOnly = firstParam(query.filter) === "unread";
  const cursor = firstParam(query.cursor);
  const user = await requireUser(withQuery("/inbox", { filter: unreadOnly ? "unread" : undefined, cursor }));
  const listed = await attempt(() => getBridge().callTool("notifications", user.id, { action: "list", unreadOnly, limit: 30, cursor }));
  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <PageHeading title="Inbox" description="What needs you." />
        <ErrorPanel title="Could not load your inbox" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }
  const { notifications, unreadCount, nextCursor } = listed.value;
  return (
    <AppShell user={user}>
      <PageHeading
        title="Inbox"
        description="Reviews requested of you, what happened to your merge requests, mentions and replies."
        action={<MarkAllReadButton disabled={unreadCount === 0} />}
      />
      <InboxFollower unreadCount={unreadCount} />
      <div className="inbox-toolbar">
        <nav className="inbox-filter tabs" aria-label="Show">
          <Link href="/inbox" className="tab" aria-current={unreadOnly ? undefined : "page"}>
            All
          </Link>
          <Link href="/inbox?filter=unread" className="tab" aria-current={unreadOnly ? "page" : undefined}>
            Unread{unreadCount > 0 ? ` (${unreadCount >= 100 ? "99+" : unreadCount})` : ""}
          </Link>
        </nav>
      </div>
      {notifications.length === 0 ? (
        <div className="empty-state" data-testid="inbox-empty">
          <p>{unreadOnly ? "Nothing unread." : "Your inbox is empty."}</p>
          <p className="muted small">Reviews requested of you, mentions and replies arrive here as they happen.</p>
        </div>
      ) : (
        <InboxList items={notifications} />
      )}
      {nextCursor ? (
        <p className="inbox-more">
          <Link href={withQuery("/inbox", { filter: unreadOnly ? "unread" : undefined, cursor: nextCursor })} className="button">
            Older
          </Link>
        </p>
      ) : null}
    </AppShell>
  );
}
