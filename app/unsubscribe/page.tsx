import type { Metadata } from "next";
import Link from "next/link";
import { AuthCard } from "@/app/_components/auth-card";
import { firstParam, type SearchParams } from "@/app/_lib/search-params";

// The token is a credential: never send it onward in a Referer header.
export const metadata: Metadata = { title: "Unsubscribe", referrer: "no-referrer", robots: { index: false, follow: false } };

/**
 * Where a notification email's unsubscribe link leads, without signing in: one button stops the emails (a POST,
 * so a mail scanner that opens links unsubscribes nobody). The signed token in the link is checked by the server.
 */
export default async function UnsubscribePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const token = firstParam(query.token);
  if (firstParam(query.done) === "1") {
    return (
      <AuthCard>
        <h1>You are unsubscribed</h1>
        <p className="muted" role="status" data-testid="unsubscribed">
          Quire sends you no more notification emails. Your inbox still collects everything; turn email back on in{" "}
          <Link href="/settings/notifications">Settings → Notifications</Link>.
        </p>
      </AuthCard>
    );
  }
  if (!token || firstParam(query.invalid) === "1") {
    return (
      <AuthCard>
        <h1>This unsubscribe link does not work</h1>
        <p className="muted">
          Copy the whole link from the email, or change email notifications in <Link href="/settings/notifications">Settings</Link>.
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard>
      <h1>Stop notification emails?</h1>
      <p className="muted">Quire will stop emailing you about reviews, mentions and merge requests. Your inbox keeps everything.</p>
      <form method="post" action={`/api/unsubscribe?token=${encodeURIComponent(token)}`}>
        <button type="submit" className="button button-primary button-block">
          Unsubscribe
        </button>
      </form>
    </AuthCard>
  );
}
