/**
 * A section's placeholder before its editor mounts (preview/placeholder.tsx): the live preview's look (marks hidden,
 * headings sized, widgets drawn) with no caret in the text, and the placeholder cache answering exactly as drawing anew.
 */
import { describe, expect, test } from "vitest";
import { drawnPlaceholder, PLACEHOLDER_CHARS_KEPT, placeholderLines } from "@/app/documents/[documentId]/live/preview/placeholder";

const TEXTS = [
  "# Onboarding\n\nWelcome to **Acme**, read the [handbook](https://example.test/handbook) first.",
  "| Name | Role |\n|:-:|---|\n| Ada | **Engineer** |\n\n![Team](https://example.test/t.png)\n\n> Ask anyone.",
  "- [ ] laptop\n- badge `b`\n  - nested\n\nRead [the guide][g].\n\n[g]: https://example.test/g",
  'Kept <svc:comment id="c1">in mind</svc:comment> and ~~struck~~ _soft_.',
  "",
];

describe("the placeholder", () => {
  test("draws the live preview: marks hidden, headings sized, links, tables, images, lists, definitions small", () => {
    const preview = placeholderLines(TEXTS[0]!, "preview", new Set());
    expect(preview).toContain('<div class="cm-line cm-lp-heading cm-lp-h1"><span class="cm-md-heading">Onboarding</span></div>');
    expect(preview).toContain('<span class="cm-md-strong">Acme</span>');
    expect(preview).not.toContain("**");
    expect(preview).not.toContain("](");
    expect(preview).toContain('<a class="cm-lp-link-open" href="https://example.test/handbook"');
    const blocks = placeholderLines(TEXTS[1]!, "preview", new Set());
    expect(blocks).toContain('<th class="cm-lp-align-center">Name</th>');
    expect(blocks).toContain('<img src="https://example.test/t.png" alt="Team" referrerpolicy="no-referrer" loading="lazy">');
    expect(blocks).toContain('<div class="cm-line cm-lp-quote"><span class="cm-md-quote">Ask anyone.</span></div>');
    const lists = placeholderLines(TEXTS[2]!, "preview", new Set());
    expect(lists).toContain('<input type="checkbox" class="cm-lp-task" aria-label="Open task">');
    expect(lists).toContain('<span class="cm-lp-bullet">◦</span>');
    expect(lists).toContain('<div class="cm-line cm-lp-link-definition">');
    const comment = placeholderLines(TEXTS[3]!, "preview", new Set(["c1"]));
    expect(comment).not.toContain("svc:comment");
    expect(comment).toContain('class="cm-comment-mark cm-comment-mark-resolved"');
    // The source shows the marks, as the editor does.
    expect(placeholderLines(TEXTS[0]!, "source", new Set())).toContain("**");
  });

  test("the writer's text is text: markup in it is escaped, never drawn", () => {
    const drawn = placeholderLines('<img src=x onerror="alert(1)"> & [a](https://example.test/?q="x") <b>', "preview", new Set());
    expect(drawn).not.toContain("<img src=x");
    expect(drawn).not.toContain("<b>");
    expect(drawn).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; ");
    expect(drawn).not.toMatch(/href="[^"]*"x/);
  });

  test("the cache answers exactly as drawing anew, for every mode and resolved set, and keeps its drawing", () => {
    for (const text of TEXTS) {
      for (const mode of ["preview", "source"] as const) {
        for (const resolved of [new Set<string>(), new Set(["c1"]), new Set(["other"])]) {
          const cached = drawnPlaceholder(text, mode, resolved);
          expect(cached).toBe(placeholderLines(text, mode, resolved));
          expect(drawnPlaceholder(text, mode, new Set(resolved))).toBe(cached);
        }
      }
    }
    // A comment resolved since is drawn anew, muted.
    const open = drawnPlaceholder(TEXTS[3]!, "preview", new Set());
    const resolved = drawnPlaceholder(TEXTS[3]!, "preview", new Set(["c1"]));
    expect(open).not.toContain("cm-comment-mark-resolved");
    expect(resolved).toContain("cm-comment-mark-resolved");
  });

  test("a text too long to keep among others is drawn each time, as drawing anew", () => {
    const long = `**bold** ${"word ".repeat(PLACEHOLDER_CHARS_KEPT / 64)}`;
    const first = drawnPlaceholder(long, "preview", new Set());
    expect(first).toBe(placeholderLines(long, "preview", new Set()));
    expect(drawnPlaceholder(long, "preview", new Set())).toBe(first);
  });
});
