/**
 * What the `changesets` tool returns. An item's merge request and its analysis
 * are what `merge_requests` get and analyze return: their schemas are that
 * tool's to give, and here are objects that say so (tools/list would carry
 * them twice otherwise).
 */
import { z } from "zod";
import { shownElsewhereExcept } from "@/server/core/schema-listing";
import { asReturnedBy, mergeActionOutputs, named } from "./flatten";

const status = z.enum(["open", "merged", "closed"]);
/** Fields their names say all about (flatten.ts `named`). */
const str = () => named(z.string());
const strOrNull = () => named(z.string().nullable());
const count = () => named(z.number());

const summary = {
  changesetId: str(),
  title: str(),
  description: strOrNull(),
  sourceBranch: str(),
  targetBranch: str(),
  status: status.describe("merged, closed: final."),
  authorId: str(),
  createdAt: str(),
  updatedAt: str(),
  mergedAt: strOrNull(),
  mergedBy: strOrNull(),
  closedAt: strOrNull(),
};

const hiddenItems = count();
/** A listed changeset's items and their count by status (in place of `get`'s items, with their merge requests). */
const listItems = z.array(z.object({ documentId: str(), path: str(), mergeRequestStatus: named(status) })).describe("Visible items.");
const itemCounts = z.object({ open: count(), merged: count(), closed: count() }).describe("Visible items by request status.");

export function changesetsOutput() {
  const view = z.object({
    ...summary,
    items: z
      .array(
        z.object({
          documentId: str(),
          path: str(),
          name: str(),
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
      changesets: shownElsewhereExcept(
        z.array(z.object({ ...summary, items: listItems, hiddenItems, itemCounts })),
        "Newest first; other fields as `get` returns them.",
        z.array(z.looseObject({ items: listItems, itemCounts })),
      ),
      nextCursor: named(z.string().nullable()),
    }),
    analyze: z.object({
      changesetId: str(),
      status: status.describe("merged, closed: final."),
      analyses: z
        .array(
          z.object({
            documentId: str(),
            path: str(),
            name: str(),
            mergeRequestId: str(),
            mergeRequestStatus: named(status),
            analysis: asReturnedBy("merge_requests analyze").nullable().describe("As merge_requests analyze returns it, or null."),
          }),
        )
        .describe("Per item you may see."),
      hiddenItems,
      totals: z
        .object({
          items: z.number().describe("Every item, hidden ones included."),
          openItems: count(),
          fastForwardItems: count(),
          itemsWithConflicts: count(),
          conflicts: z.number().describe("Conflicts over visible items."),
          sectionsChanged: count(),
        })
        .describe("Counts over the items."),
    }),
    execute: z.object({
      ...summary,
      merged: z
        .array(
          z.object({
            documentId: str(),
            path: str(),
            mergeRequestId: str(),
            status: named(z.literal("merged")),
            targetBranch: str(),
            mergeCommitId: z.string().describe("The new target head."),
            fastForward: named(z.boolean()),
            message: str(),
            warnings: z.array(z.string()).describe("Resolutions not needed."),
          }),
        )
        .describe("Items merged."),
    }),
  });
}
