/** Which link targets the editor's live preview offers to open (app/documents/[documentId]/live/preview/links.ts). */
import { describe, expect, it } from "vitest";
import { safeHref } from "@/app/documents/[documentId]/live/preview/links";

describe("safeHref", () => {
  it("opens web and mail addresses and paths on this site", () => {
    expect(safeHref("https://example.test/handbook")).toBe("https://example.test/handbook");
    expect(safeHref(" http://example.test ")).toBe("http://example.test");
    expect(safeHref("mailto:ada@example.test")).toBe("mailto:ada@example.test");
    expect(safeHref("/documents/abc#section-1")).toBe("/documents/abc#section-1");
    expect(safeHref("#section-1")).toBe("#section-1");
  });

  it("offers nothing else: scripts, data, other hosts by a protocol-relative path, words", () => {
    expect(safeHref("javascript:alert(1)")).toBeNull();
    expect(safeHref("JavaScript:alert(1)")).toBeNull();
    expect(safeHref("data:text/html,<b>x</b>")).toBeNull();
    expect(safeHref("//evil.test/x")).toBeNull();
    expect(safeHref("handbook")).toBeNull();
  });
});
