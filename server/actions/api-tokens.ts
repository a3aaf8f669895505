/**
 * A user's own API tokens: list, create, revoke. Not an MCP tool; the web
 * app's settings page reaches it through the bridge and scripts through tRPC
 * (`apiTokens`). Creating or revoking a token needs a browser session: a
 * token acts as an agent and cannot change access.
 */
import { z } from "zod";
import { issueApiTokenForUser } from "@/server/auth/accounts";
import { type ApiTokenView, presentApiToken } from "@/server/auth/api-tokens";
import { DomainError, isDomainError, notFound } from "@/server/core/errors";
import { accessChangeRefusal } from "@/server/policies/access";
import { getApiToken, listApiTokens, revokeApiToken } from "@/server/store/api-tokens";
import type { ActionContext } from "./context";
import { parseInput, uuidSchema } from "./tool";

export const MAX_TOKEN_DAYS = 3_650;

type TokensContext = Pick<ActionContext, "db" | "actor" | "clock">;

/**
 * Minting or revoking tokens changes access: a person does it (Settings → API
 * tokens, or `npx quire token`), never a token, so a leaked one cannot entrench itself.
 */
function refuseAgents(ctx: TokensContext): void {
  const refusal = accessChangeRefusal(ctx.actor.principal);
  if (refusal) throw new DomainError(refusal.code, refusal.message);
}

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
]);

export type ApiTokensInput = z.input<typeof apiTokensInput>;
type ParsedInput = z.infer<typeof apiTokensInput>;

export interface ApiTokensResults {
  list: { tokens: ApiTokenView[] };
  /** `token` is shown once. */
  create: { token: string; tokenInfo: ApiTokenView };
  revoke: { tokenInfo: ApiTokenView; alreadyRevoked: boolean };
}

export type ApiTokensOutput<I> = I extends { action: infer A extends keyof ApiTokensResults } ? ApiTokensResults[A] : never;

async function run(ctx: TokensContext, input: ParsedInput): Promise<ApiTokensResults[keyof ApiTokensResults]> {
  const now = ctx.clock();
  const userId = ctx.actor.userId;
  switch (input.action) {
    case "list":
      return { tokens: (await listApiTokens(ctx.db, userId)).map((row) => presentApiToken(row, now)) };
    case "create": {
      refuseAgents(ctx);
      const expiresAt = input.expiresInDays ? new Date(now.getTime() + input.expiresInDays * 86_400_000) : undefined;
      const issued = await issueApiTokenForUser(ctx.db, { userId, label: input.label, expiresAt }, now);
      const row = await getApiToken(ctx.db, issued.tokenId, userId);
      return { token: issued.token, tokenInfo: presentApiToken(row!, now) };
    }
    case "revoke": {
      refuseAgents(ctx);
      // Another user's token reads exactly like a missing one.
      const owned = await getApiToken(ctx.db, input.tokenId, userId);
      if (!owned) throw notFound("API token", input.tokenId, "List your tokens to find valid ids.");
      const revoked = (await revokeApiToken(ctx.db, owned.id, now))!;
      return { tokenInfo: presentApiToken(revoked.token, now), alreadyRevoked: !revoked.changed };
    }
  }
}

/** Validates and runs one action on the caller's own tokens; failures are DomainErrors. */
export async function runApiTokensAction<const I extends ApiTokensInput>(ctx: TokensContext, raw: I): Promise<ApiTokensOutput<I>>;
export async function runApiTokensAction(ctx: TokensContext, raw: unknown): Promise<unknown>;
export async function runApiTokensAction(ctx: TokensContext, raw: unknown): Promise<unknown> {
  const input = parseInput(apiTokensInput, raw);
  try {
    return await run(ctx, input);
  } catch (error) {
    if (isDomainError(error)) throw error;
    console.error(`[quire] apiTokens ${input.action} failed`, error);
    throw new DomainError("INTERNAL", "Quire hit an internal error; nothing was changed. Retry, and report it if it persists.");
  }
}
