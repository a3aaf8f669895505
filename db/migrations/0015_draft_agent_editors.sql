-- Agents named in Co-authored-by lines of a live commit (issue 26): the agents (API token or OAuth client) that edited
-- a section of a draft since its last commit or discard, with the person each acted for.
CREATE TABLE "draft_agent_editors" (
	"document_id" uuid NOT NULL,
	"branch_name" text NOT NULL,
	"section_id" uuid NOT NULL,
	"user_id" uuid NOT NULL,
	"agent_key" text NOT NULL,
	"agent" jsonb NOT NULL,
	CONSTRAINT "draft_agent_editors_document_id_branch_name_section_id_user_id_agent_key_pk" PRIMARY KEY("document_id","branch_name","section_id","user_id","agent_key")
);
