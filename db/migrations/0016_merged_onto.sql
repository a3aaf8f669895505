-- Where a merge request's target branch stood before its merge (issue 25): a merge commit's first parent, or the head a
-- fast-forward started from, so a merged request's changes can be shown for fast-forwards too. Null while a request is
-- open, and for every request merged before this was recorded (their page keeps its note and link to the history).
ALTER TABLE "merge_requests" ADD COLUMN "merged_onto_commit_id" uuid;--> statement-breakpoint
ALTER TABLE "merge_requests" ADD CONSTRAINT "merge_requests_merged_onto_commit_id_commits_id_fk" FOREIGN KEY ("merged_onto_commit_id") REFERENCES "public"."commits"("id") ON DELETE no action ON UPDATE no action;