-- Reserved for a change in progress (0013_agent_attribution); replaced by its real statements.
SELECT 1;
