/** What every action receives: the database, who is acting, and the time. No transport in sight. */
import type { Database } from "@/db/client";
import type { Role } from "@/db/schema";
import type { Principal } from "@/server/policies/access";
import type { FileLinks } from "@/server/storage/links";

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

export interface ActionContext {
  db: Database;
  actor: Actor;
  clock: () => Date;
  /** Signs upload and download links for uploaded files (no HTTP knowledge needed). */
  files: FileLinks;
}
