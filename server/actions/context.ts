/** What every action receives: the database, who is acting, and the time. No transport in sight. */
import type { Database } from "@/db/client";
import type { Role } from "@/db/schema";
import type { FileLinks } from "@/server/storage/links";

export interface Actor {
  userId: string;
  workspaceId: string;
  role: Role;
  /** Which face the call came through; every MCP call is an AI call. */
  via: "web" | "mcp" | "cli";
}

export interface ActionContext {
  db: Database;
  actor: Actor;
  clock: () => Date;
  /** Signs upload and download links for uploaded files (no HTTP knowledge needed). */
  files: FileLinks;
}
