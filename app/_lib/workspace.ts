/**
 * The signed-in user's workspace for server components: its name (for the
 * header), what they may change, and the public base URL Quire's links
 * start with. Loaded once per request.
 *
 * The base URL is decided in one place, on the server (server/http/server.ts:
 * QUIRE_PUBLIC_URL when set, else the origin the request came to); the app
 * only tells it which origin that was.
 */
import { headers } from "next/headers";
import { cache } from "react";
import type { WorkspaceResults } from "@/server/actions/workspace";
import { getBridge } from "@/server/bridge";
import { attempt, type Outcome } from "./quire";

export type WorkspaceInfo = WorkspaceResults["get"];

/**
 * The origin the browser used to reach this page (scheme and host, from Host
 * or X-Forwarded-Host and X-Forwarded-Proto), or undefined when the headers
 * do not name one.
 */
export async function requestOrigin(): Promise<string | undefined> {
  const h = await headers();
  const host = (h.get("x-forwarded-host") ?? h.get("host"))?.split(",")[0]?.trim();
  if (!host || !/^[a-z0-9.\-:[\]]+$/i.test(host)) return undefined;
  const forwarded = h.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const proto = forwarded === "https" || forwarded === "http" ? forwarded : h.get("origin")?.startsWith("https:") ? "https" : "http";
  return `${proto}://${host}`;
}

/** The workspace as `userId` sees it; an Outcome, so a page can render without it. */
export const loadWorkspace = cache(async (userId: string): Promise<Outcome<WorkspaceInfo>> => {
  const origin = await requestOrigin();
  return attempt(() => getBridge().workspace(userId, { action: "get" }, origin));
});
