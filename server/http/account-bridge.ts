/**
 * The bridge methods that act for a signed-in person in the web app: tools,
 * workspace administration, their own API tokens, and accepting invites.
 */
import type { Database } from "@/db/client";
import { apiTokensTool } from "@/server/actions/api-tokens";
import { type ToolName, type ToolOutput, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { webhooksTool } from "@/server/actions/webhooks";
import { workspaceTool } from "@/server/actions/workspace";
import type { OutboundSettings } from "@/server/outbound/addresses";
import { actorForUser } from "@/server/access/actor";
import { acceptInvite, acceptInviteAsNewUser, inviteInfo } from "@/server/actions/invites";
import type { QuireBridge } from "@/server/bridge";
import { DomainError } from "@/server/core/errors";
import type { FileLinks } from "@/server/storage/links";
import type { LiveDrafts } from "@/server/collab/live-drafts";

type AccountMethods = Pick<
  QuireBridge,
  "callTool" | "workspace" | "apiTokens" | "webhooks" | "inviteInfo" | "acceptInvite" | "acceptInviteAsNewUser"
>;

export function accountBridge(options: {
  db: Database;
  clock: () => Date;
  files: FileLinks;
  live: LiveDrafts;
  outbound: OutboundSettings;
  /** The base of links handed out for the request being handled (see publicBaseUrl). */
  baseUrl: () => string;
}): AccountMethods {
  const { db, clock, files, live, outbound } = options;
  async function webActor(userId: string) {
    const actor = await actorForUser(db, userId, "person");
    if (!actor) throw new DomainError("UNAUTHENTICATED", "Your account is not a member of this workspace.");
    return actor;
  }
  return {
    async callTool(tool, userId, input) {
      const actor = await webActor(userId);
      return runTool(toolsByName[tool as ToolName], { db, actor, clock, files, live }, input) as Promise<
        ToolOutput<typeof tool, typeof input>
      >;
    },
    async workspace(userId, input) {
      const actor = await webActor(userId);
      return runTool(workspaceTool, { db, actor, clock, baseUrl: options.baseUrl() }, input);
    },
    async apiTokens(userId, input) {
      return runTool(apiTokensTool, { db, actor: await webActor(userId), clock }, input);
    },
    async webhooks(userId, input) {
      return runTool(webhooksTool, { db, actor: await webActor(userId), clock, outbound }, input);
    },
    inviteInfo: (token, userId) => inviteInfo(db, token, clock(), userId),
    async acceptInvite(token, userId) {
      const { role } = await acceptInvite(db, token, userId, clock());
      return { role };
    },
    acceptInviteAsNewUser: (token, input) => acceptInviteAsNewUser(db, token, input, clock()),
  };
}
