/** Display formatting shared by the pages (server-rendered, so "now" is the request time). */

export function toDate(value: string | Date): Date | null {
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

const UNITS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["year", 365 * 24 * 3600],
  ["month", 30 * 24 * 3600],
  ["week", 7 * 24 * 3600],
  ["day", 24 * 3600],
  ["hour", 3600],
  ["minute", 60],
];

const relativeFormat = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

/** "just now", "5 minutes ago", "yesterday", "3 weeks ago". */
export function relativeTime(value: string | Date, now: Date = new Date()): string {
  const date = toDate(value);
  if (!date) return String(value);
  const seconds = Math.round((date.getTime() - now.getTime()) / 1000);
  if (Math.abs(seconds) < 45) return "just now";
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === "minute") {
      return relativeFormat.format(Math.round(seconds / size), unit);
    }
  }
  return "just now";
}

const absoluteFormat = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

export function absoluteTime(value: string | Date): string {
  const date = toDate(value);
  return date ? `${absoluteFormat.format(date)} UTC` : String(value);
}

export function isoTime(value: string | Date): string {
  const date = toDate(value);
  return date ? date.toISOString() : String(value);
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}

export function firstLine(text: string): string {
  const line = text.split(/\r?\n/, 1)[0] ?? "";
  return line.trim() || "(no message)";
}

/** Splits "handbook/team/onboarding" into its folder ("handbook/team") and leaf ("onboarding"). */
export function splitPath(path: string): { folder: string; leaf: string } {
  const index = path.lastIndexOf("/");
  return index < 0 ? { folder: "", leaf: path } : { folder: path.slice(0, index), leaf: path.slice(index + 1) };
}

/** Up to two capital letters for an avatar: "Ada Lovelace" → "AL"; "?" for a blank name. */
export function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const letters = parts.length > 1 ? [parts[0]?.[0], parts[parts.length - 1]?.[0]] : [parts[0]?.[0]];
  return letters.filter(Boolean).join("").toUpperCase() || "?";
}

/** "a" or "an" before a role name. */
export function article(role: string): string {
  return /^[aeiou]/.test(role) ? "an" : "a";
}
