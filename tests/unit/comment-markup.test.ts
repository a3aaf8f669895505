/**
 * Comment markup has one grammar: the server's balance check and the app's
 * highlighting read tags with the same tokenizer, so text the server stores is
 * shown with exactly the ranges the server accepted.
 */
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { markCommentRanges } from "@/app/documents/[documentId]/comment-markup";
import {
  commentTagTokens,
  commentTagWithin,
  newCommentMarkup,
  newCommentTags,
  occurrenceAt,
  quoteIndex,
} from "@/server/core/comment-markup";

const MENTION = "0b7c5a2e-8f1d-4c3a-9e6b-2d4f6a8c0e1b";
const OPEN = "\uE000";
const CLOSE = "\uE001";

describe("commentTagTokens", () => {
  test("finds existing and new tags, opening and closing, with their offsets", () => {
    const text = `a <svc:comment id="c1">b</svc:comment> <svc:comment-new body="x &gt; y">c</svc:comment-new>`;
    const tokens = commentTagTokens(text);
    expect(tokens.map((t) => [t.raw, t.closing])).toEqual([
      ['<svc:comment id="c1">', false],
      ["</svc:comment>", true],
      ['<svc:comment-new body="x &gt; y">', false],
      ["</svc:comment-new>", true],
    ]);
    for (const token of tokens) expect(text.slice(token.index, token.index + token.raw.length)).toBe(token.raw);
  });

  test("does not mistake other tags that share the prefix", () => {
    expect(commentTagTokens("<svc:commentary>x</svc:commentary> <svc:comments/>")).toEqual([]);
  });
});

describe("server and app agree", () => {
  test("a stray closing tag is refused by the server and not highlighted by the app", () => {
    const text = "plain </svc:comment-new> text";
    expect(() => newCommentTags(text, "content[0].text")).toThrow(/VALIDATION_FAILED|balanced|unbalanced|close/i);
    expect(markCommentRanges(text)).toBe("plain  text");
  });

  test("a malformed opening tag the server counts is one the app sees too", () => {
    // Attributes with single quotes are not the stored form, but both sides see an opening tag.
    const text = "<svc:comment-new body='x'>hi";
    expect(() => newCommentTags(text, "content[0].text")).toThrow();
    expect(markCommentRanges(text)).toBe("hi");
  });

  test("every text the server accepts is highlighted exactly where its tags were", () => {
    const word = fc.stringMatching(/^[a-z ]{0,8}$/);
    const body = fc.stringMatching(/^[a-z]{1,8}$/);
    const span = fc
      .tuple(body, word)
      .map(([body, inner]) => `<svc:comment-new body="${body}" mentions="${MENTION}">${inner}</svc:comment-new>`);
    const existing = word.map((inner) => `<svc:comment id="c">${inner}</svc:comment>`);
    const text = fc.array(fc.oneof(word, span, existing), { maxLength: 8 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, (markdown) => {
        newCommentTags(markdown, "content[0].text");
        const marked = markCommentRanges(markdown);
        const opened = commentTagTokens(markdown).filter((t) => !t.closing).length;
        expect([...marked].filter((c) => c === OPEN).length).toBe(opened);
        expect([...marked].filter((c) => c === CLOSE).length).toBe(opened);
        expect(marked.replace(/[\uE000\uE001]/g, "")).toBe(markdown.replace(/<[^>]*>/g, ""));
      }),
    );
  });
});

describe("newCommentMarkup", () => {
  test("writes tags that read back as the same body, mentions and author, for any body", () => {
    const mention = "0b7d3a52-1f7e-4d8e-9a51-5a3f9c2f4d10";
    const author = "5d0c8f5e-8a43-4c1e-9d7b-1f2e3a4b5c6d";
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 80 }).filter((b) => b.trim() !== "" && !/[\u0000]/.test(b)),
        fc.boolean(),
        fc.boolean(),
        (body, mentioned, authored) => {
          const { open, close } = newCommentMarkup(body, mentioned ? [mention] : [], authored ? author : undefined);
          const [tag] = newCommentTags(`before ${open}commented${close} after`, "test");
          expect(tag).toEqual({
            body: body.trim(),
            mentions: mentioned ? [mention] : [],
            author: authored ? author : null,
            open,
            text: "commented",
          });
        },
      ),
    );
  });

  test("an author that is not a user id is refused", () => {
    expect(() => newCommentTags('<svc:comment-new body="b" author="someone">t</svc:comment-new>', "test")).toThrow(/author/);
  });
});

describe("commentTagWithin", () => {
  const text = 'a <svc:comment id="c1">bc</svc:comment> d';
  const open = text.indexOf("<svc:comment");
  const close = text.indexOf("</svc:comment>");
  test("finds a tag inside or across the range, and none outside it", () => {
    expect(commentTagWithin(text, 0, 1)).toBe(false);
    expect(commentTagWithin(text, 0, open + 1)).toBe(true);
    expect(commentTagWithin(text, close - 1, close + 2)).toBe(true);
    expect(commentTagWithin(text, text.length - 1, text.length)).toBe(false);
  });
  test("a range inside a comment's text would nest in it: refused too (the grammar pairs a tag with the first closing one)", () => {
    expect(commentTagWithin(text, open + '<svc:comment id="c1">'.length, close)).toBe(true);
    expect(commentTagWithin(text, close + "</svc:comment>".length, text.length)).toBe(false);
  });
});

describe("quoteIndex and occurrenceAt", () => {
  test("a selection is found again by its text and which occurrence it is, overlapping ones counted", () => {
    const text = "aaa b aaa";
    for (const [from, to] of [
      [0, 2],
      [1, 3],
      [6, 8],
      [7, 9],
      [4, 5],
    ] as const) {
      expect(quoteIndex(text, text.slice(from, to), occurrenceAt(text, from, to))).toBe(from);
    }
    expect(quoteIndex(text, "aa", 4)).toBeNull();
    expect(quoteIndex(text, "zz", 0)).toBeNull();
  });
});
