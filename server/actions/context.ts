/** What every action receives: the database, who is acting, the time, and the services it may call. No transport in sight. */
import type { Database } from "@/db/client";
import type { Actor } from "@/server/access/actor";
import type { LiveDrafts } from "@/server/collab/live-drafts";
import type { OutboundSettings } from "@/server/outbound/addresses";
import type { FileLinks } from "@/server/storage/links";

export type { Actor };

export interface ActionContext {
  db: Database;
  actor: Actor;
  clock: () => Date;
  /** Signs upload and download links for uploaded files (no HTTP knowledge needed). */
  files: FileLinks;
  /** The branches' live drafts: through the server's rooms, or storage alone where the process has none (storageOnlyLiveDrafts). */
  live: LiveDrafts;
  /** What outbound requests may reach (config.outbound); absent: public https addresses only. */
  outbound?: OutboundSettings;
}
