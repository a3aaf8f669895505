-- Reserved for a change in progress (0015_live_comments); replaced by its real statements.
SELECT 1;
