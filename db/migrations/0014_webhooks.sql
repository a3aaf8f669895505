-- Reserved for a change in progress (0014_webhooks); replaced by its real statements.
SELECT 1;
