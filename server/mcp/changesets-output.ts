/**
 * What the `changesets` tool returns. An item's merge request and its analysis
 * are what `merge_requests` get and analyze return: their schemas are that
 * tool's to give, and here are objects that say so (tools/list would carry
 * them twice otherwise).
 */
import { z } from "zod";
import { asReturnedBy, mergeActionOutputs } from "./flatten";

const status = z.enum(["open", "merged", "closed"]);

const summary = {
  changesetId: z.string().describe("The changeset."),
  title: z.string().describe("The changeset's title."),
  description: z.string().nullable().describe("Or null."),
  sourceBranch: z.string().describe("Branch merged from."),
  targetBranch: z.string().describe("Branch merged into."),
  status: status.describe("merged, closed: final."),
  authorId: z.string().describe("Who created it."),
  createdAt: z.string().describe("Created."),
  updatedAt: z.string().describe("Last change."),
  mergedAt: z.string().nullable().describe("When merged, or null."),
  mergedBy: z.string().nullable().describe("Merged by, or null."),
  closedAt: z.string().nullable().describe("When closed, or null."),
};

const hiddenItems = z.number().describe("Hidden items.");

export function changesetsOutput() {
  const view = z.object({
    ...summary,
    items: z
      .array(
        z.object({
          documentId: z.string(),
          path: z.string(),
          name: z.string(),
          mergeRequest: asReturnedBy("merge_requests get"),
        }),
      )
      .describe("Visible items."),
    hiddenItems,
    itemsNeedingApprovals: z.array(z.string()).describe("Items short of requiredApprovals."),
  });
  const reviewed = view.extend({ reviewedItems: z.array(z.string()).describe("Documents reviewed.") });
  return mergeActionOutputs({
    create: view,
    get: view,
    add_items: view,
    remove_items: view,
    close: view,
    approve: reviewed,
    request_changes: reviewed,
    list: z.object({
      changesets: z
        .array(
          z.object({
            ...summary,
            items: z.array(z.object({ documentId: z.string(), path: z.string(), mergeRequestStatus: status })),
            hiddenItems,
            itemCounts: z.object({ open: z.number(), merged: z.number(), closed: z.number() }).describe("Visible items by request status."),
          }),
        )
        .describe("Newest first."),
      nextCursor: z.string().nullable().describe("`cursor` for the next page; null at the end."),
    }),
    analyze: z.object({
      changesetId: z.string(),
      status,
      analyses: z
        .array(
          z.object({
            documentId: z.string(),
            path: z.string(),
            name: z.string(),
            mergeRequestId: z.string(),
            mergeRequestStatus: status,
            analysis: asReturnedBy("merge_requests analyze").nullable().describe("As merge_requests analyze returns it, or null."),
          }),
        )
        .describe("Per item you may see."),
      hiddenItems,
      totals: z
        .object({
          items: z.number().describe("Every item, hidden ones included."),
          openItems: z.number(),
          fastForwardItems: z.number(),
          itemsWithConflicts: z.number(),
          conflicts: z.number().describe("Conflicts over visible items."),
          sectionsChanged: z.number(),
        })
        .describe("Counts over the items."),
    }),
    execute: z.object({
      ...summary,
      merged: z
        .array(
          z.object({
            documentId: z.string(),
            path: z.string(),
            mergeRequestId: z.string(),
            status: z.literal("merged"),
            targetBranch: z.string(),
            mergeCommitId: z.string().describe("The new target head."),
            fastForward: z.boolean(),
            message: z.string(),
            warnings: z.array(z.string()),
          }),
        )
        .describe("Items merged."),
    }),
  });
}
