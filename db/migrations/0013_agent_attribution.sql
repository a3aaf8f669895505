-- Agents named in history (issue 26): the agent (API token or OAuth client: kind, id, name) that made a commit, opened a
-- merge request, wrote a comment or reply, or gave a review, beside the person it acted for. Null for a person's own
-- action and for every row made before this was recorded (existing history stays as it is).
ALTER TABLE "commits" ADD COLUMN "agent" jsonb;
--> statement-breakpoint
ALTER TABLE "merge_requests" ADD COLUMN "agent" jsonb;
--> statement-breakpoint
ALTER TABLE "merge_request_reviewers" ADD COLUMN "agent" jsonb;
--> statement-breakpoint
ALTER TABLE "comments" ADD COLUMN "agent" jsonb;
--> statement-breakpoint
ALTER TABLE "comment_replies" ADD COLUMN "agent" jsonb;
