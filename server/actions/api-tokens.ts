/**
 * A user's own API tokens (list, create, revoke) and the apps they connected
 * by OAuth (list, revoke). Not an MCP tool; the web
 * app's settings page reaches it through the bridge and scripts through tRPC
 * (`apiTokens`). Creating or revoking a token needs a browser session: a
 * token acts as an agent and cannot change access.
 */
import { z } from "zod";
import { issueApiTokenForUser } from "@/server/auth/accounts";
import { presentApiToken } from "@/server/auth/api-tokens";
import { notFound } from "@/server/core/errors";
import { getApiToken, listApiTokens, revokeApiToken } from "@/server/store/api-tokens";
import { type ConnectedAppRow, listLiveGrants, revokeGrant } from "@/server/store/oauth";
import { refuseAgents } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { defineTool, type ToolResults, uuidSchema } from "./tool";

export const MAX_TOKEN_DAYS = 3_650;

type TokensContext = Pick<ActionContext, "db" | "actor" | "clock">;

export const apiTokensInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("list").describe("Your tokens, newest first, with when each was last used; never the tokens themselves."),
  }),
  z.strictObject({
    action: z.literal("create").describe("Create a token; it is returned once and stored only as a hash."),
    label: z.string().trim().min(1, "label must not be empty").max(100).describe('What the token is for, e.g. "Claude on my laptop".'),
    expiresInDays: z
      .number()
      .int()
      .min(1)
      .max(MAX_TOKEN_DAYS)
      .optional()
      .describe(`Days until the token stops working, 1-${MAX_TOKEN_DAYS}; omitted: it works until revoked.`),
  }),
  z.strictObject({
    action: z.literal("revoke").describe("Stop one of your tokens from working, at once."),
    tokenId: uuidSchema.describe("The token's id, from list."),
  }),
  z.strictObject({
    action: z
      .literal("list_apps")
      .describe("Apps you connected by OAuth (MCP clients), newest first, with what each may do and when it was last used."),
  }),
  z.strictObject({
    action: z.literal("revoke_app").describe("Disconnect an app: every token it holds stops working, at once."),
    grantId: uuidSchema.describe("The connection's id, from list_apps."),
  }),
]);

export type ApiTokensInput = z.input<typeof apiTokensInput>;
type ActionInput<A extends z.output<typeof apiTokensInput>["action"]> = Extract<z.output<typeof apiTokensInput>, { action: A }>;

async function listTokens(ctx: TokensContext) {
  const now = ctx.clock();
  return { tokens: (await listApiTokens(ctx.db, ctx.actor.userId)).map((row) => presentApiToken(row, now)) };
}

async function createToken(ctx: TokensContext, input: ActionInput<"create">) {
  refuseAgents(ctx.actor);
  const now = ctx.clock();
  const userId = ctx.actor.userId;
  const expiresAt = input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : undefined;
  const issued = await issueApiTokenForUser(ctx.db, { userId, label: input.label, expiresAt }, now);
  const row = await getApiToken(ctx.db, issued.tokenId, userId);
  return { token: issued.token, tokenInfo: presentApiToken(row!, now) };
}

async function revokeToken(ctx: TokensContext, input: ActionInput<"revoke">) {
  refuseAgents(ctx.actor);
  const now = ctx.clock();
  // Another user's token reads exactly like a missing one.
  const owned = await getApiToken(ctx.db, input.tokenId, ctx.actor.userId);
  if (!owned) throw notFound("API token", input.tokenId, "List your tokens to find valid ids.");
  const revoked = (await revokeApiToken(ctx.db, owned.id, now))!;
  return { tokenInfo: presentApiToken(revoked.token, now), alreadyRevoked: !revoked.changed };
}

/** A connected app as the settings page lists it. */
function presentConnectedApp(row: ConnectedAppRow) {
  return {
    grantId: row.grantId,
    name: row.clientName,
    clientId: row.clientId,
    scope: row.scope,
    connectedAt: row.createdAt.toISOString(),
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  };
}

async function listApps(ctx: TokensContext) {
  return { apps: (await listLiveGrants(ctx.db, ctx.actor.userId)).map(presentConnectedApp) };
}

async function revokeApp(ctx: TokensContext, input: ActionInput<"revoke_app">) {
  refuseAgents(ctx.actor);
  // Another person's connection reads exactly like a missing one.
  const revoked = await revokeGrant(ctx.db, input.grantId, ctx.clock(), ctx.actor.userId);
  if (!revoked) throw notFound("Connected app", input.grantId, "List your connected apps to find valid ids.");
  return { grantId: input.grantId, revoked };
}

export const apiTokensTool = defineTool({
  name: "api_tokens",
  description:
    "Your own API tokens. list -> {tokens} (never the tokens themselves); create {label, expiresInDays?} -> {token, tokenInfo}: the token is shown once; revoke {tokenId} -> {tokenInfo, alreadyRevoked}; list_apps -> {apps} (OAuth connections); revoke_app {grantId} -> {grantId, revoked}. Creating and revoking need a browser session. Not an MCP tool.",
  input: apiTokensInput,
  readOnly: false,
  handlers: { list: listTokens, create: createToken, revoke: revokeToken, list_apps: listApps, revoke_app: revokeApp },
});

export type ApiTokensResults = ToolResults<typeof apiTokensTool>;
