-- Full-text search (issue 24), hand-written. Branch heads are indexed into search_heads (a document's name, path and
-- description at each head) and search_sections (each section's name and words at each head), kept by the search
-- indexer (server/store/search-index.ts). Comment threads and merge requests are searched in their own tables
-- through expression indexes, so they are always in step with the transaction that changed them.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE TABLE "search_heads" (
	"document_id" uuid NOT NULL,
	"branch_name" text NOT NULL,
	"workspace_id" uuid NOT NULL,
	"is_default" boolean NOT NULL,
	"commit_id" uuid NOT NULL,
	"path" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"deleted" boolean NOT NULL,
	"tag_ids" uuid[] NOT NULL,
	"search" tsvector NOT NULL,
	CONSTRAINT "search_heads_pk" PRIMARY KEY ("document_id", "branch_name")
);
--> statement-breakpoint
CREATE INDEX "search_heads_search_idx" ON "search_heads" USING gin ("search");
--> statement-breakpoint
CREATE TABLE "search_sections" (
	"document_id" uuid NOT NULL,
	"branch_name" text NOT NULL,
	"section_id" uuid NOT NULL,
	"workspace_id" uuid NOT NULL,
	"is_default" boolean NOT NULL,
	"blob_hash" text NOT NULL,
	"position" integer NOT NULL,
	"name" text NOT NULL,
	"body" text NOT NULL,
	"default_permission" text,
	"ai_access" text,
	"comment_ids" uuid[] NOT NULL,
	"search" tsvector NOT NULL,
	CONSTRAINT "search_sections_pk" PRIMARY KEY ("document_id", "branch_name", "section_id"),
	CONSTRAINT "search_sections_head_fk" FOREIGN KEY ("document_id", "branch_name") REFERENCES "search_heads"("document_id", "branch_name") ON DELETE CASCADE
);
--> statement-breakpoint
CREATE INDEX "search_sections_search_idx" ON "search_sections" USING gin ("search");
--> statement-breakpoint
CREATE TABLE "search_words" (
	"word" text PRIMARY KEY NOT NULL
);
--> statement-breakpoint
CREATE INDEX "search_words_trgm_idx" ON "search_words" USING gin ("word" gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX "comments_search_idx" ON "comments" USING gin (to_tsvector('english', "body"));
--> statement-breakpoint
CREATE INDEX "comment_replies_search_idx" ON "comment_replies" USING gin (to_tsvector('english', "body"));
--> statement-breakpoint
CREATE INDEX "merge_requests_search_idx" ON "merge_requests" USING gin (to_tsvector('english', "title" || ' ' || coalesce("description", '')));
