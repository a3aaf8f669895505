"use server";

/**
 * Server actions behind the settings pages. Each acts as the signed-in user
 * through the bridge; the server decides what that user may do. Next checks
 * that a server action's Origin matches the Host, so other sites cannot post
 * here with the visitor's session.
 */
import type { Role } from "@/db/schema";
import { runAsUser, type ActionResult } from "@/app/_lib/action-result";
import { getBridge } from "@/server/bridge";

export type { ActionResult };

const asUser = <T>(run: (userId: string) => Promise<T>) => runAsUser("settings", run);

const text = (value: unknown): string => (typeof value === "string" ? value : "");
const optionalDays = (value: unknown): number | undefined => {
  const raw = text(value).trim();
  return raw === "" ? undefined : Number(raw);
};

export async function renameWorkspace(name: unknown): Promise<ActionResult<{ name: string }>> {
  return asUser(async (me) => {
    const renamed = await getBridge().workspace(me, { action: "rename", name: text(name) });
    return { name: renamed.workspace.name };
  });
}

export async function changeMemberRole(userId: unknown, role: unknown): Promise<ActionResult> {
  return asUser(async (me) => {
    await getBridge().workspace(me, { action: "change_role", userId: text(userId), role: text(role) as Role });
    return undefined;
  });
}

export async function removeMember(userId: unknown): Promise<ActionResult> {
  return asUser(async (me) => {
    await getBridge().workspace(me, { action: "remove_member", userId: text(userId) });
    return undefined;
  });
}

export async function createInvite(input: {
  role?: unknown;
  email?: unknown;
  expiresInDays?: unknown;
}): Promise<ActionResult<{ url: string; role: string; email: string | null; expiresAt: string | null }>> {
  return asUser(async (me) => {
    const email = text(input.email).trim();
    const created = await getBridge().workspace(me, {
      action: "create_invite",
      role: text(input.role) as "member",
      ...(email ? { email } : {}),
      ...(optionalDays(input.expiresInDays) !== undefined ? { expiresInDays: optionalDays(input.expiresInDays) } : {}),
    });
    return { url: created.url, role: created.invite.role, email: created.invite.email, expiresAt: created.invite.expiresAt };
  });
}

export async function revokeInvite(inviteId: unknown): Promise<ActionResult> {
  return asUser(async (me) => {
    await getBridge().workspace(me, { action: "revoke_invite", inviteId: text(inviteId) });
    return undefined;
  });
}

export async function createApiToken(input: {
  label?: unknown;
  expiresInDays?: unknown;
}): Promise<ActionResult<{ token: string; label: string | null; expiresAt: string | null }>> {
  return asUser(async (me) => {
    const days = optionalDays(input.expiresInDays);
    const created = await getBridge().apiTokens(me, {
      action: "create",
      label: text(input.label),
      ...(days !== undefined ? { expiresInDays: days } : {}),
    });
    return { token: created.token, label: created.tokenInfo.label, expiresAt: created.tokenInfo.expiresAt };
  });
}

export async function revokeApiToken(tokenId: unknown): Promise<ActionResult> {
  return asUser(async (me) => {
    await getBridge().apiTokens(me, { action: "revoke", tokenId: text(tokenId) });
    return undefined;
  });
}
