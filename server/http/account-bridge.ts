/**
 * The bridge methods behind the web app's settings and invite pages:
 * workspace administration, the user's API tokens, and accepting invites.
 */
import type { Database } from "@/db/client";
import { runApiTokensAction } from "@/server/actions/api-tokens";
import { runWorkspaceAction } from "@/server/actions/workspace";
import { actorForUser } from "@/server/auth/accounts";
import { acceptInvite, acceptInviteAsNewUser, inviteInfo } from "@/server/auth/invites";
import type { QuireBridge } from "@/server/bridge";
import { DomainError } from "@/server/core/errors";

type AccountMethods = Pick<QuireBridge, "workspace" | "apiTokens" | "inviteInfo" | "acceptInvite" | "acceptInviteAsNewUser">;

export function accountBridge(options: {
  db: Database;
  clock: () => Date;
  /** The base of links handed out, given the browser's origin when known. */
  baseUrl: (origin: string | undefined) => string;
}): AccountMethods {
  const { db, clock } = options;
  async function webActor(userId: string) {
    const actor = await actorForUser(db, userId, "person");
    if (!actor) throw new DomainError("UNAUTHENTICATED", "Your account is not a member of this workspace.");
    return actor;
  }
  return {
    async workspace(userId, input, origin) {
      const actor = await webActor(userId);
      return runWorkspaceAction({ db, actor, clock, baseUrl: options.baseUrl(origin) }, input as unknown) as never;
    },
    async apiTokens(userId, input) {
      return runApiTokensAction({ db, actor: await webActor(userId), clock }, input as unknown) as never;
    },
    inviteInfo: (token, userId) => inviteInfo(db, token, clock(), userId),
    async acceptInvite(token, userId) {
      const { role } = await acceptInvite(db, token, userId, clock());
      return { role };
    },
    acceptInviteAsNewUser: (token, input) => acceptInviteAsNewUser(db, token, input, clock()),
  };
}
