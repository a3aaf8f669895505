/** Schemas for the names people and agents type: document paths, branch names, tag paths, messages. */
import { z } from "zod";

export const MAX_COMMIT_MESSAGE_CHARS = 1_000;

const noControlChars = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

/**
 * How every slash-separated path people and agents type is read (document
 * paths and tag paths alike): surrounding spaces trimmed, and a leading "/"
 * dropped, so "/a/b" and "a/b" name the same thing.
 */
export function normalizePath(raw: string): string {
  return raw.trim().replace(/^\/+/, "");
}

/**
 * Document paths look like file paths: "handbook/onboarding". A leading "/" is
 * accepted and dropped so "/a/b" and "a/b" name the same document.
 */
export const documentPathSchema = z
  .string()
  .transform(normalizePath)
  .pipe(
    z
      .string()
      .min(1, "path must not be empty")
      .max(500, "path must be at most 500 characters")
      .refine(noControlChars, "path must not contain control characters")
      .refine((p) => !p.includes("\\"), "path must use '/' as separator, not '\\'")
      .refine((p) => !p.endsWith("/"), "path must not end with '/'")
      .refine(
        (p) => p.split("/").every((seg) => seg.length > 0 && seg !== "." && seg !== ".." && seg.trim() === seg),
        "path segments must be non-empty, not '.' or '..', and not start or end with spaces",
      ),
  )
  .describe('Path, e.g. "handbook/onboarding".');

/** git check-ref-format rules, narrowed to a portable character set. */
export const branchNameSchema = z
  .string()
  .min(1, "branch name must not be empty")
  .max(200, "branch name must be at most 200 characters")
  .regex(/^[A-Za-z0-9._/-]+$/, "branch name may contain only letters, digits, '.', '_', '-' and '/'")
  .refine(
    (n) =>
      !n.startsWith("/") &&
      !n.endsWith("/") &&
      !n.includes("//") &&
      !n.includes("..") &&
      !n.endsWith(".lock") &&
      !n.endsWith(".") &&
      n.split("/").every((seg) => !seg.startsWith(".") && !seg.startsWith("-")),
    "branch name must follow git ref rules: no leading/trailing '/', no '//', no '..', segments not starting with '.' or '-', not ending in '.lock' or '.'",
  )
  .describe('Branch name, e.g. "main" or "agent/pricing-update".');

/** The longest name of a document or a section. */
export const MAX_NAME_CHARS = 300;

export const documentNameSchema = z
  .string()
  .trim()
  .min(1, "name must not be empty")
  .max(MAX_NAME_CHARS, `name must be at most ${MAX_NAME_CHARS} characters`)
  .refine(noControlChars, "name must not contain control characters");

export const descriptionSchema = z.string().max(10_000, "description must be at most 10000 characters");

export const commitMessageSchema = z
  .string()
  .trim()
  .min(1, "commitMessage must not be empty when given")
  .max(MAX_COMMIT_MESSAGE_CHARS, `commitMessage must be at most ${MAX_COMMIT_MESSAGE_CHARS} characters`)
  .describe("Commit message; default: generated.");

/** Tag paths are read like document paths: a leading "/" is accepted and dropped ("/status/draft" is "status/draft"). */
export const tagPathSchema = z
  .string()
  .transform(normalizePath)
  .pipe(
    z
      .string()
      .min(1, "tag path must not be empty")
      .max(200, "tag path must be at most 200 characters")
      .regex(/^[\p{L}\p{N} _.-]+(\/[\p{L}\p{N} _.-]+)*$/u, "tag path is slash-separated segments of letters, digits, space, '_', '.', '-'"),
  )
  .describe('Tag path, e.g. "status/draft".');

/** The last path segment, used as the document name when none is given. */
export function nameFromPath(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/**
 * Shortens text for use inside a generated message and puts it in double
 * quotes, as text: quotes inside stay as they are (as git writes
 * `Revert "Revert "x""`), never JSON-escaped; line breaks and other control
 * characters become spaces.
 */
export function quoteForMessage(text: string, max = 60): string {
  const oneLine = text.replace(/[\s\p{Cc}]+/gu, " ").trim();
  return `"${oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine}"`;
}

/** A short commit id: the first 7 to 32 hex digits of a commit id (its hyphens optional), as git takes them. */
export const SHORT_COMMIT_ID = /^[0-9a-f](?:-?[0-9a-f]){6,31}$/i;
