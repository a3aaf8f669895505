/**
 * The full-text search index (db/migrations/0009_search.sql). Rows are derived
 * state: `quire search reindex` rebuilds them from the branch heads, and the
 * search indexer (server/store/search-index.ts) keeps them at the heads.
 * Comment threads and merge requests need no rows here: expression indexes on
 * their own tables keep them searchable in the transaction that changes them.
 */
import { customType, index, integer, pgTable, primaryKey, text, uuid, boolean } from "drizzle-orm/pg-core";

/** PostgreSQL's tsvector; written and read only in SQL (to_tsvector, @@), never as a value in TypeScript. */
const tsvector = customType<{ data: string }>({ dataType: () => "tsvector" });

/** A document as it is at one branch head: what its name, path and description match. */
export const searchHeads = pgTable(
  "search_heads",
  {
    documentId: uuid("document_id").notNull(),
    branchName: text("branch_name").notNull(),
    workspaceId: uuid("workspace_id").notNull(),
    /** Whether this is the document's default branch (searched unless another branch is asked for). */
    isDefault: boolean("is_default").notNull(),
    /** The head this row (and the branch's search_sections rows) were indexed at. */
    commitId: uuid("commit_id").notNull(),
    path: text("path").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    deleted: boolean("deleted").notNull(),
    tagIds: uuid("tag_ids").array().notNull(),
    search: tsvector("search").notNull(),
  },
  (t) => [
    primaryKey({ name: "search_heads_pk", columns: [t.documentId, t.branchName] }),
    index("search_heads_search_idx").using("gin", t.search),
  ],
);

/** One section at one branch head: its name and its text as words (markdown and comment markup stripped). */
export const searchSections = pgTable(
  "search_sections",
  {
    documentId: uuid("document_id").notNull(),
    branchName: text("branch_name").notNull(),
    sectionId: uuid("section_id").notNull(),
    workspaceId: uuid("workspace_id").notNull(),
    isDefault: boolean("is_default").notNull(),
    /** The section version indexed: a row is rewritten only when the head holds another version. */
    blobHash: text("blob_hash").notNull(),
    /** The section's place in the document, for ordering equal ranks. */
    position: integer("position").notNull(),
    name: text("name").notNull(),
    body: text("body").notNull(),
    /** The version's own access overrides, which the caller's section rules judge (server/access). */
    defaultPermission: text("default_permission", { enum: ["edit", "read", "none"] }),
    aiAccess: text("ai_access", { enum: ["edit", "read", "none"] }),
    /** Comments anchored in this version's text: a thread is found where its anchor is. */
    commentIds: uuid("comment_ids").array().notNull(),
    search: tsvector("search").notNull(),
  },
  (t) => [
    primaryKey({ name: "search_sections_pk", columns: [t.documentId, t.branchName, t.sectionId] }),
    index("search_sections_search_idx").using("gin", t.search),
  ],
);

/** Every word (lexeme) the index holds, for suggesting what a mistyped word meant (pg_trgm similarity). */
export const searchWords = pgTable("search_words", { word: text("word").primaryKey() });
