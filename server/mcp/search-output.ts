/** What the `search` tool returns, as the outputSchema MCP advertises (merged into output-schemas.ts). */
import { z } from "zod";

const kind = z.enum(["document", "section", "comment", "merge_request"]);

export const searchOutput = z.object({
  total: z.number().describe("Matches over all pages."),
  totalIsLowerBound: z.boolean().describe("Too many matches to rank all: narrow the query."),
  hits: z
    .array(
      z.object({
        kind,
        documentId: z.string(),
        documentName: z.string(),
        path: z.string(),
        branchName: z.string().describe("Branch (merge request: target)."),
        sectionId: z.string().nullable().describe("The section."),
        sectionName: z.string().nullable(),
        commentId: z.string().nullable().describe("The thread."),
        mergeRequestId: z.string().nullable().describe("The merge request."),
        title: z.string().nullable().describe("Merge request title."),
        snippet: z.array(z.object({ text: z.string(), highlighted: z.boolean() })).describe("Text around the match."),
        rank: z.number().describe("Relevance; higher first."),
      }),
    )
    .describe("The page of hits, best first."),
  nextCursor: z.string().nullable().describe("Give as `cursor` (same query) for the next page; null at the end."),
  correctedTo: z.array(z.string()).nullable().describe("Words searched instead, or null."),
});
