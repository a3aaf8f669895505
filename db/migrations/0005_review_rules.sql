ALTER TABLE "documents" ADD COLUMN "required_approvals" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "merge_request_reviewers" ADD COLUMN "approved_source_head" uuid;--> statement-breakpoint
ALTER TABLE "merge_request_reviewers" ADD COLUMN "approved_target_head" uuid;--> statement-breakpoint
ALTER TABLE "merge_request_reviewers" ADD COLUMN "approved_sections" jsonb;