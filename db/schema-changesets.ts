/**
 * Changesets (db/migrations/0011_changesets.sql): one review and one atomic
 * merge for a change that spans documents. Each item is a merge request of
 * its own (analysis, reviews and approvals are the request's); the changeset
 * only groups them under one source and one target branch name.
 */
import { index, pgTable, primaryKey, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { documents, mergeRequests, users, workspaces } from "./schema";

export const changesets = pgTable(
  "changesets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    title: text("title").notNull(),
    description: text("description"),
    sourceBranch: text("source_branch").notNull(),
    targetBranch: text("target_branch").notNull(),
    status: text("status", { enum: ["open", "merged", "closed"] })
      .notNull()
      .default("open"),
    authorId: uuid("author_id")
      .notNull()
      .references(() => users.id),
    createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    mergedAt: timestamp("merged_at", { withTimezone: true, mode: "date" }),
    mergedBy: uuid("merged_by").references(() => users.id),
    closedAt: timestamp("closed_at", { withTimezone: true, mode: "date" }),
    closedBy: uuid("closed_by").references(() => users.id),
  },
  (t) => [index("changesets_workspace_idx").on(t.workspaceId, t.createdAt)],
);

/** One document of a changeset and the merge request that carries it (one per document). */
export const changesetItems = pgTable(
  "changeset_items",
  {
    changesetId: uuid("changeset_id")
      .notNull()
      .references(() => changesets.id),
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    mergeRequestId: uuid("merge_request_id")
      .notNull()
      .references(() => mergeRequests.id),
    addedAt: timestamp("added_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.changesetId, t.documentId] }),
    index("changeset_items_merge_request_idx").on(t.mergeRequestId),
    index("changeset_items_document_idx").on(t.documentId),
  ],
);

export type ChangesetStatus = (typeof changesets.$inferSelect)["status"];
