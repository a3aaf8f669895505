/**
 * Comment markup inside text blocks (spec §2.3):
 *   existing: <svc:comment id="ID">commented text</svc:comment>
 *   new:      <svc:comment-new body="…" mentions="UUID,UUID" author="UUID">commented text</svc:comment-new>
 * Attribute values use HTML entity escaping for quotes, ampersands and angle brackets.
 *
 * The one grammar for this markup: the server validates and stores it with
 * these functions, and the web app renders it with the same tokenizer
 * (`commentTagTokens`), so what one accepts the other shows.
 */
import { z } from "zod";
import { DomainError } from "./errors";

export interface ExistingCommentTag {
  id: string;
  /** The whole element as written, which an edit must keep intact. */
  raw: string;
  /** The commented text between the tags. */
  text: string;
}

export interface NewCommentTag {
  body: string;
  mentions: string[];
  /**
   * Who wrote the comment, when the markup names them: a comment typed into a
   * live draft carries its typist (checked when it arrives), so whoever
   * commits the draft does not become its author.
   */
  author: string | null;
  /** The opening tag as written. */
  open: string;
  text: string;
}

const EXISTING = /<svc:comment\s+id="([^"]*)"\s*>([\s\S]*?)<\/svc:comment>/g;
const NEW = /<svc:comment-new((?:\s+[\w-]+="[^"]*")*)\s*>([\s\S]*?)<\/svc:comment-new>/g;
const ATTRIBUTE = /([\w-]+)="([^"]*)"/g;
/** Any opening or closing comment tag, well formed or not (attribute values never hold a raw `>`). */
const ANY_TAG = /<svc:comment(?:-new)?(?=[\s>/])[^>]*>|<\/svc:comment(?:-new)?\s*>/g;

export interface CommentTagToken {
  /** Where the tag starts in the text. */
  index: number;
  /** The tag as written. */
  raw: string;
  closing: boolean;
}

/** Every comment tag in the text, in order: the tokenizer both the server's checks and the app's rendering use. */
export function commentTagTokens(text: string): CommentTagToken[] {
  return [...text.matchAll(ANY_TAG)].map((m) => ({ index: m.index, raw: m[0], closing: m[0].startsWith("</") }));
}

const ENTITIES: Record<string, string> = { "&quot;": '"', "&#39;": "'", "&apos;": "'", "&lt;": "<", "&gt;": ">", "&amp;": "&" };
const decodeEntities = (value: string) => value.replace(/&(?:quot|#39|apos|lt|gt|amp);/g, (e) => ENTITIES[e]!);

export const MAX_COMMENT_BODY_CHARS = 10_000;

/** A user id as PostgreSQL stores it: any 8-4-4-4-12 hex UUID. */
const USER_ID = z.guid();

export function existingCommentTags(text: string): ExistingCommentTag[] {
  return [...text.matchAll(EXISTING)].map((m) => ({ id: m[1]!, raw: m[0], text: m[2]! }));
}

const escapeAttribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The tags that make `text` a new comment: written here so they read back exactly as `newCommentTags` parses them. */
export function newCommentMarkup(body: string, mentions: readonly string[], authorId?: string): { open: string; close: string } {
  const mentioned = mentions.length > 0 ? ` mentions="${escapeAttribute(mentions.join(","))}"` : "";
  const author = authorId ? ` author="${escapeAttribute(authorId)}"` : "";
  return { open: `<svc:comment-new body="${escapeAttribute(body)}"${mentioned}${author}>`, close: "</svc:comment-new>" };
}

/**
 * Whether a new comment on [from, to] would overlap or nest in another: a comment tag lies in or across the range,
 * or the range is inside a comment's text (comments do not nest: the grammar pairs a tag with the first closing one).
 */
export function commentTagWithin(text: string, from: number, to: number): boolean {
  const tags = commentTagTokens(text);
  const openBefore = tags.filter((tag) => tag.index + tag.raw.length <= from).reduce((depth, tag) => depth + (tag.closing ? -1 : 1), 0);
  return openBefore > 0 || tags.some((tag) => tag.index < to && tag.index + tag.raw.length > from);
}

/**
 * Finds new-comment elements, checking each is well formed. `where` names the
 * block for error messages.
 */
export function newCommentTags(text: string, where: string): NewCommentTag[] {
  const tags: NewCommentTag[] = [];
  for (const match of text.matchAll(NEW)) {
    const attributes = new Map<string, string>();
    for (const a of match[1]!.matchAll(ATTRIBUTE)) attributes.set(a[1]!, decodeEntities(a[2]!));
    const unknown = [...attributes.keys()].filter((k) => k !== "body" && k !== "mentions" && k !== "author");
    const body = attributes.get("body")?.trim() ?? "";
    const author = attributes.get("author") ?? null;
    if (
      unknown.length > 0 ||
      body === "" ||
      body.length > MAX_COMMENT_BODY_CHARS ||
      (author !== null && !USER_ID.safeParse(author).success)
    ) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `${where}: <svc:comment-new> needs a non-empty body="…" (at most ${MAX_COMMENT_BODY_CHARS} characters), optionally mentions="<userId>,…" and author="<your userId>"; nothing else.`,
        { issues: [{ path: where, message: "malformed svc:comment-new" }] },
      );
    }
    const mentions = (attributes.get("mentions") ?? "").split(/[\s,]+/).filter((m) => m !== "");
    const malformed = mentions.filter((m) => !USER_ID.safeParse(m).success);
    if (malformed.length > 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `${where}: mentions="…" takes user ids (UUIDs) separated by commas; ${malformed
          .slice(0, 3)
          .map((m) => JSON.stringify(m))
          .join(
            ", ",
          )} ${malformed.length === 1 ? "is not one" : "are not"}. Find member ids with the \`members\` tool (action \`search\`).`,
        { issues: [{ path: where, message: "mentions must be user ids (UUIDs)" }] },
      );
    }
    tags.push({ body, mentions: [...new Set(mentions)], author, open: match[0].slice(0, match[0].indexOf(">") + 1), text: match[2]! });
  }
  const tokens = commentTagTokens(text);
  const closed = tokens.filter((t) => t.closing).length;
  const opened = tokens.length - closed;
  if (opened !== closed) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `${where}: comment markup is unbalanced (${opened} opening and ${closed} closing svc:comment tags). Each <svc:comment …> and <svc:comment-new …> needs its closing tag.`,
      { issues: [{ path: where, message: "unbalanced comment markup" }] },
    );
  }
  return tags;
}

/** The tags that anchor a stored comment around the text it is on. */
export function commentAnchorMarkup(commentId: string): { open: string; close: string } {
  return { open: `<svc:comment id="${escapeAttribute(commentId)}">`, close: "</svc:comment>" };
}

/** Rewrites the new-comment elements, in order, to existing-comment elements with the given ids. */
export function replaceNewCommentTags(text: string, ids: readonly string[]): string {
  let index = 0;
  return text.replace(NEW, (_whole, _attributes, inner: string) => {
    const { open, close } = commentAnchorMarkup(ids[index++]!);
    return `${open}${inner}${close}`;
  });
}

/**
 * Where the `occurrence`-th (from 0) `quote` starts in `text`, or null. Occurrences may overlap ("aa" twice in
 * "aaa"), so the one a selection picked is counted the same way it is found.
 */
export function quoteIndex(text: string, quote: string, occurrence: number): number | null {
  let at = -1;
  for (let seen = 0; seen <= occurrence; seen += 1) {
    at = text.indexOf(quote, at + 1);
    if (at < 0) return null;
  }
  return at;
}

/** Which occurrence (from 0) of `text.slice(from, to)` a selection at `from` is: what `quoteIndex` finds it by. */
export function occurrenceAt(text: string, from: number, to: number): number {
  const quote = text.slice(from, to);
  let count = 0;
  for (let at = text.indexOf(quote); at >= 0 && at < from; at = text.indexOf(quote, at + 1)) count += 1;
  return count;
}
