/** How a search hit is shown and where it leads: shared by the search page and the quick-open palette. */
import type { SearchHit, SearchResult, SearchSnippetPart } from "@/server/actions/search";

export type { SearchHit, SearchResult } from "@/server/actions/search";

export const KIND_LABELS: Record<SearchHit["kind"], string> = {
  document: "Document",
  section: "Section",
  comment: "Comment",
  merge_request: "Merge request",
};

/** The page a hit opens: the exact section on its branch (the document page anchors each section as #section-<id>). */
/** "1 result", "12 results", or "1,000+ results" when the search counted only the first matches it found. */
export function resultCount(result: Pick<SearchResult, "total" | "totalIsLowerBound">): string {
  if (result.total === 1 && !result.totalIsLowerBound) return "1 result";
  return `${result.total.toLocaleString("en")}${result.totalIsLowerBound ? "+" : ""} results`;
}

export function hitHref(hit: SearchHit): string {
  if (hit.kind === "merge_request" && hit.mergeRequestId) return `/merge-requests/${encodeURIComponent(hit.mergeRequestId)}`;
  const page = `/documents/${encodeURIComponent(hit.documentId)}?branch=${encodeURIComponent(hit.branchName)}`;
  return hit.sectionId ? `${page}#section-${hit.sectionId}` : page;
}

/** The hit's title line: the section, the merge request's title, or the document. */
export function hitTitle(hit: SearchHit): string {
  if (hit.kind === "merge_request") return hit.title ?? hit.documentName;
  if (hit.sectionName !== null) return hit.sectionName;
  return hit.documentName;
}

/** A snippet as text with the matched words in <mark> elements (the parts are text, never HTML). */
export function Snippet({ parts }: { parts: readonly SearchSnippetPart[] }) {
  return (
    <>
      {parts.map((part, i) =>
        part.highlighted ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts never reorder
          <mark key={i}>{part.text}</mark>
        ) : (
          // biome-ignore lint/suspicious/noArrayIndexKey: the parts never reorder
          <span key={i}>{part.text}</span>
        ),
      )}
    </>
  );
}
