/** What the `search` tool returns, as the outputSchema MCP advertises (merged into output-schemas.ts). */
import { z } from "zod";
import { named } from "./flatten";

const kind = z.enum(["document", "section", "comment", "merge_request"]);

export const searchOutput = z.object({
  total: z.number().describe("Matches over all pages."),
  totalIsLowerBound: z.boolean().describe("Too many matches to rank all: narrow the query."),
  hits: z
    .array(
      z.object({
        kind: named(kind),
        documentId: named(z.string()),
        documentName: named(z.string()),
        path: named(z.string()),
        branchName: z.string().describe("Branch (merge request: target)."),
        sectionId: named(z.string().nullable()),
        sectionName: named(z.string().nullable()),
        commentId: z.string().nullable().describe("The thread."),
        mergeRequestId: named(z.string().nullable()),
        title: z.string().nullable().describe("Merge request title."),
        snippet: z
          .array(z.object({ text: named(z.string()), highlighted: z.boolean().describe("Part of the match.") }))
          .describe("Text around the match."),
        rank: z.number().describe("Relevance; higher first."),
      }),
    )
    .describe("The page of hits, best first."),
  nextCursor: z.string().nullable().describe("Give as `cursor` (same query) for the next page; null at the end."),
  correctedTo: z.array(z.string()).nullable().describe("Words searched instead, or null."),
});
