/** Who is acting: what authentication establishes, and what every action and policy receives. */
import type { Database } from "@/db/client";
import type { AgentIdentity, Role } from "@/db/schema";
import { UNNAMED_API_TOKEN } from "@/server/core/agents";
import { API_TOKEN_PREFIX, hashApiToken } from "@/server/auth/accounts";
import { hasSecretTokenShape, hashSecretToken } from "@/server/auth/secret-tokens";
import type { Principal } from "@/server/policies/access";
import { OAUTH_ACCESS_TOKEN_PREFIX } from "@/server/auth/oauth";
import { getMembership, useApiToken } from "@/server/store/accounts";
import { useAccessToken } from "@/server/store/oauth";

export type { AgentIdentity };

export interface Actor {
  userId: string;
  workspaceId: string;
  role: Role;
  /**
   * Decided by the credential, never by the face: a browser session (or the
   * CLI) is the person; an API token is an agent on MCP and tRPC alike.
   */
  principal: Principal;
  /** The agent acting for the person (an API token, an OAuth client); null for the person themselves. */
  agent: AgentIdentity | null;
  /**
   * The most the credential itself allows, below whatever the person may:
   * `read` for an OAuth token of scope `read` (it reads, never writes).
   * Absent: no such cap (an agent is still capped by aiAccess).
   */
  cap?: "read";
}

/**
 * The actor a user acts as: their membership in the workspace, or null for a
 * user who belongs nowhere. `principal` is the credential's: "person" for a
 * browser session or the CLI.
 */
export async function actorForUser(db: Database, userId: string, principal: Actor["principal"]): Promise<Actor | null> {
  const membership = await getMembership(db, userId);
  if (!membership) return null;
  return { userId, workspaceId: membership.workspaceId, role: membership.role, principal, agent: null };
}

/**
 * The actor behind a bearer token, or null when the token is unknown, revoked
 * or expired (or not of a token's shape: refused before any lookup). An API
 * token is an agent's credential on every face.
 */
export async function actorForApiToken(db: Database, token: string, now: Date): Promise<Actor | null> {
  if (!hasSecretTokenShape(token, API_TOKEN_PREFIX)) return null;
  const used = await useApiToken(db, hashApiToken(token), now);
  if (!used?.membership) return null;
  return {
    userId: used.userId,
    ...used.membership,
    principal: "agent",
    agent: { kind: "api_token", id: used.tokenId, name: used.label ?? UNNAMED_API_TOKEN },
  };
}

/**
 * The actor behind an OAuth access token, or null when the token is unknown,
 * expired, of a revoked grant, or issued for another resource than
 * `resource` (RFC 8707: the audience is checked on every request). An OAuth
 * client is an agent, as an API token is; scope `read` caps it to reading.
 */
export async function actorForOAuthToken(db: Database, token: string, resource: string, now: Date): Promise<Actor | null> {
  if (!hasSecretTokenShape(token, OAUTH_ACCESS_TOKEN_PREFIX)) return null;
  const used = await useAccessToken(db, hashSecretToken(token), now);
  if (!used?.membership || used.resource !== resource) return null;
  return {
    userId: used.userId,
    ...used.membership,
    principal: "agent",
    agent: { kind: "oauth_client", id: used.clientRowId, name: used.clientName },
    ...(used.scope === "read" ? { cap: "read" as const } : {}),
  };
}
