CREATE TABLE "draft_sections" (
	"document_id" uuid NOT NULL,
	"branch_name" text NOT NULL,
	"section_id" uuid NOT NULL,
	"base_blob_hash" text,
	"state" "bytea" NOT NULL,
	"compacted_through" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "draft_sections_document_id_branch_name_section_id_pk" PRIMARY KEY("document_id","branch_name","section_id")
);
--> statement-breakpoint
CREATE TABLE "draft_updates" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"document_id" uuid NOT NULL,
	"branch_name" text NOT NULL,
	"section_id" uuid NOT NULL,
	"update" "bytea" NOT NULL,
	"author_id" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "drafts" (
	"document_id" uuid NOT NULL,
	"branch_name" text NOT NULL,
	"base_commit_id" uuid NOT NULL,
	"settled_through" bigint DEFAULT 0 NOT NULL,
	"editor_ids" uuid[] DEFAULT '{}'::uuid[] NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "drafts_document_id_branch_name_pk" PRIMARY KEY("document_id","branch_name")
);
--> statement-breakpoint
ALTER TABLE "drafts" ADD CONSTRAINT "drafts_document_id_documents_id_fk" FOREIGN KEY ("document_id") REFERENCES "public"."documents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "drafts" ADD CONSTRAINT "drafts_base_commit_id_commits_id_fk" FOREIGN KEY ("base_commit_id") REFERENCES "public"."commits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "draft_updates_section_idx" ON "draft_updates" USING btree ("document_id","branch_name","section_id","id");