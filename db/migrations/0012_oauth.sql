-- Reserved for a change in progress (0012_oauth); replaced by its real statements.
SELECT 1;
