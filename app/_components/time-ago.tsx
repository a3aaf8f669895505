import { absoluteTime, isoTime, relativeTime } from "@/app/_lib/format";

/** "5 minutes ago", with the exact time as its title. In a client component the browser's "now" may be a minute past the server's: that text is not a hydration error. */
export function TimeAgo({ value }: { value: string | Date }) {
  return (
    <time dateTime={isoTime(value)} title={absoluteTime(value)} suppressHydrationWarning>
      {relativeTime(value)}
    </time>
  );
}
