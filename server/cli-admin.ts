/**
 * The CLI's account commands beyond `user add` and `token create`:
 * `invite create`, `token list`, `token revoke`, `search reindex`. server/cli.ts parses the
 * arguments and hands them here.
 */
import type { DatabaseHandle } from "@/db/client";
import { type ApiTokenView, listApiTokensForEmail, revokeApiTokenById } from "@/server/auth/api-tokens";
import { createInviteFromCli } from "@/server/actions/invites";
import { reindexSearch } from "@/server/actions/search";
import { publicBaseUrl, type QuireConfig } from "@/server/config";

export const ADMIN_USAGE = `  invite create --role admin|member|guest [--email E] [--expires-in-days D]
                                    Create an invite link (default 7 days); base URL from QUIRE_PUBLIC_URL or http://localhost:$PORT
  token list --email E              List a user's API tokens (never the tokens themselves)
  token revoke --id ID              Revoke an API token; it stops working at once
  search reindex                    Rebuild the full-text search index from every branch head`;

export interface AdminArgs {
  email?: string;
  role?: string;
  id?: string;
  "expires-in-days"?: string;
}

type Open = () => Promise<{ config: QuireConfig; database: DatabaseHandle }>;

/** Runs the command if it is one of these; false when it is not. */
export async function runAdminCommand(
  command: string,
  subcommand: string | undefined,
  args: AdminArgs,
  open: Open,
  fail: (message: string) => never,
): Promise<boolean> {
  if (command === "invite" && subcommand === "create") {
    if (!args.role) fail("invite create needs --role admin|member|guest.");
    const days = args["expires-in-days"] !== undefined ? Number(args["expires-in-days"]) : undefined;
    if (days !== undefined && !(Number.isInteger(days) && days >= 1)) fail("--expires-in-days must be a whole number of days, at least 1.");
    const { config, database } = await open();
    try {
      const baseUrl = publicBaseUrl({ configured: config.publicUrl, ownUrl: `http://localhost:${config.port}` });
      const created = await createInviteFromCli(
        database.db,
        { role: args.role, email: args.email, expiresInDays: days },
        baseUrl,
        new Date(),
      );
      const who = created.invite.email ? ` for ${created.invite.email}` : "";
      console.log(`Invite${who} to join as ${created.invite.role}, expires ${created.invite.expiresAt}. The link is shown only once:`);
      console.log(created.url);
    } finally {
      await database.close();
    }
    return true;
  }

  if (command === "token" && subcommand === "list") {
    if (!args.email) fail("token list needs --email.");
    const { database } = await open();
    try {
      const tokens = await listApiTokensForEmail(database.db, args.email, new Date());
      if (tokens.length === 0) console.log(`${args.email} has no API tokens.`);
      else printTokens(tokens);
    } finally {
      await database.close();
    }
    return true;
  }

  if (command === "token" && subcommand === "revoke") {
    if (!args.id) fail("token revoke needs --id (from `quire token list --email E`).");
    const { database } = await open();
    try {
      const { token, alreadyRevoked } = await revokeApiTokenById(database.db, args.id, new Date());
      console.log(
        alreadyRevoked
          ? `Token ${token.tokenId} was already revoked at ${token.revokedAt}.`
          : `Revoked token ${token.tokenId}${token.label ? ` (${token.label})` : ""}.`,
      );
    } finally {
      await database.close();
    }
    return true;
  }

  if (command === "search" && subcommand === "reindex") {
    const { database } = await open();
    try {
      const started = Date.now();
      const rebuilt = await reindexSearch(database.db);
      console.log(
        `Search index rebuilt: ${rebuilt.branches} branch heads, ${rebuilt.sections} sections, in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
      );
    } finally {
      await database.close();
    }
    return true;
  }

  return false;
}

function printTokens(tokens: ApiTokenView[]): void {
  const rows = tokens.map((t) => [
    t.tokenId,
    t.label ?? "",
    t.createdAt,
    t.lastUsedAt ?? "never",
    t.expiresAt ?? "never",
    t.status === "revoked" ? `revoked ${t.revokedAt}` : t.status,
  ]);
  const header = ["ID", "LABEL", "CREATED", "LAST USED", "EXPIRES", "STATUS"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}
