/** What every action receives: the database, who is acting, and the time. No transport in sight. */
import type { Database } from "@/db/client";
import type { Actor } from "@/server/access/actor";
import type { FileLinks } from "@/server/storage/links";

export type { Actor };

export interface ActionContext {
  db: Database;
  actor: Actor;
  clock: () => Date;
  /** Signs upload and download links for uploaded files (no HTTP knowledge needed). */
  files: FileLinks;
}
