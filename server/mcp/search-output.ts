/** What the `search` tool returns, as the outputSchema MCP advertises (merged into output-schemas.ts). */
import { z } from "zod";

const kind = z.enum(["document", "section", "comment", "merge_request"]);

export const searchOutput = z.object({
  total: z.number().describe("Every match you may see, over all pages (a lower bound when totalIsLowerBound)."),
  totalIsLowerBound: z
    .boolean()
    .describe("True when the query matched so many items that only the first ones found were ranked and counted: narrow it."),
  hits: z
    .array(
      z.object({
        kind,
        documentId: z.string(),
        documentName: z.string(),
        path: z.string(),
        branchName: z.string().describe("The branch the hit is on (a merge request: its target)."),
        sectionId: z.string().nullable().describe("The section (section and comment hits)."),
        sectionName: z.string().nullable(),
        commentId: z.string().nullable().describe("The comment thread (comment hits)."),
        mergeRequestId: z.string().nullable().describe("The merge request (merge_request hits)."),
        title: z.string().nullable().describe("The merge request's title (merge_request hits)."),
        snippet: z
          .array(z.object({ text: z.string(), highlighted: z.boolean() }))
          .describe("The hit's text around the match; highlighted parts are the words that matched."),
        rank: z.number().describe("Relevance; higher first."),
      }),
    )
    .describe("The page of hits, best first."),
  nextCursor: z.string().nullable().describe("Pass as `cursor` (with the same query) for the next page; null on the last page."),
  correctedTo: z
    .array(z.string())
    .nullable()
    .describe("When the query as typed found nothing: the indexed words searched instead; else null."),
});
