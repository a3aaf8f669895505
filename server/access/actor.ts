/** Who is acting: what authentication establishes, and what every action and policy receives. */
import type { Role } from "@/db/schema";
import type { Principal } from "@/server/policies/access";

export interface Actor {
  userId: string;
  workspaceId: string;
  role: Role;
  /**
   * Decided by the credential, never by the face: a browser session (or the
   * CLI) is the person; an API token is an agent on MCP and tRPC alike.
   */
  principal: Principal;
}
