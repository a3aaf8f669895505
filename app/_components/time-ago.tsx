import { absoluteTime, isoTime, relativeTime } from "@/app/_lib/format";

export function TimeAgo({ value }: { value: string | Date }) {
  return (
    <time dateTime={isoTime(value)} title={absoluteTime(value)}>
      {relativeTime(value)}
    </time>
  );
}
