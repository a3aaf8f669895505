/**
 * Agents named in history (issue 26): a commit, merge request, comment, reply
 * or approval made with an API token or an OAuth client records the agent
 * beside the person it acts for. The name is copied, not joined, so history
 * keeps naming the agent after its token is revoked or its client removed;
 * rows made before this was recorded, and by a person themselves, hold null.
 */
import { jsonb } from "drizzle-orm/pg-core";

export const AGENT_KINDS = ["api_token", "oauth_client"] as const;

/** The agent behind an action: an API token (named by its label) or an OAuth client (by its client name). */
export interface AgentIdentity {
  kind: (typeof AGENT_KINDS)[number];
  /** The token's or the client's id. */
  id: string;
  name: string;
}

/** The `agent` column of a table whose rows record who made them. */
export const agentColumn = () => jsonb("agent").$type<AgentIdentity>();
