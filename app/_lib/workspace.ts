/**
 * The signed-in user's workspace for server components: its name (for the
 * header), what they may change, and the public base URL Quire's links
 * start with. Loaded once per request.
 *
 * The base URL is decided in one place, on the server (server/http/server.ts:
 * QUIRE_PUBLIC_URL when set, else the origin the page's request was sent to,
 * which the server reads from the request itself).
 */
import { cache } from "react";
import type { WorkspaceResults } from "@/server/actions/workspace";
import { getBridge } from "@/server/bridge";
import { attempt, type Outcome } from "./quire";

export type WorkspaceInfo = WorkspaceResults["get"];

/** The workspace as `userId` sees it; an Outcome, so a page can render without it. */
export const loadWorkspace = cache(
  async (userId: string): Promise<Outcome<WorkspaceInfo>> => attempt(() => getBridge().workspace(userId, { action: "get" })),
);
