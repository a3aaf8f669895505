/**
 * Workspace administration for owners and admins: the workspace's name,
 * members and their roles, removal, and invite links. Not an MCP tool (agents do not manage people);
 * the web app reaches it through the bridge, scripts through tRPC
 * (`workspace`), and the CLI through server/actions/invites.ts.
 *
 * The rules (who may change whom, the last owner) are in
 * server/policies/workspace.ts; this module loads the facts, asks, and writes.
 */
import { z } from "zod";
import type { Role } from "@/db/schema";
import { hashSecretToken, newSecretToken } from "@/server/auth/secret-tokens";
import { DomainError, notFound } from "@/server/core/errors";

import {
  assignableRoles,
  canManageMembers,
  canRenameWorkspace,
  changeRoleRefusal,
  inviteRefusal,
  managerRefusal,
  removeRefusal,
  renameRefusal,
} from "@/server/policies/workspace";
import { findUserByEmail } from "@/server/store/accounts";
import { getInvite, type InviteRow, insertInvite, listPendingInvites, markInviteRevoked } from "@/server/store/invites";
import { deleteMembership, getMember, getWorkspaceName, lockOwners, setMemberRole } from "@/server/store/members";
import { renameWorkspace } from "@/server/store/workspaces";
import type { Tx } from "@/server/store/db";
import { accessChangeRefusal } from "@/server/policies/access";
import { refuse, refuseAgents } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { pageOfMembers } from "./members";
import { cursorSchema, defineTool, pageLimitSchema, type ToolResults, uuidSchema } from "./tool";

export const DEFAULT_INVITE_DAYS = 7;
export const MAX_WORKSPACE_NAME_CHARS = 80;
export const MAX_INVITE_DAYS = 365;

/**
 * Who acts, on what database, when — and, because these actions hand out
 * links, the public base URL the caller reached Quire at.
 */
export interface WorkspaceContext extends Pick<ActionContext, "db" | "actor" | "clock"> {
  baseUrl: string;
}

const roleSchema = z.enum(["owner", "admin", "member", "guest"]);
const inviteRoleSchema = z.enum(["admin", "member", "guest"]);

export const workspaceNameSchema = z
  .string()
  .trim()
  .min(1, "the workspace name must not be empty")
  .max(MAX_WORKSPACE_NAME_CHARS, `the workspace name must be at most ${MAX_WORKSPACE_NAME_CHARS} characters`)
  .refine((name) => !/[\u0000-\u001f\u007f]/.test(name), "the workspace name must not contain control characters (such as line breaks)");

export const workspaceInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z
      .literal("get")
      .describe(
        "The workspace's id and name, what the caller may change, and the public base URL Quire's links start with; open to every member.",
      ),
  }),
  z.strictObject({
    action: z.literal("rename").describe("Rename the workspace (owners and admins)."),
    name: workspaceNameSchema.describe(
      `The new name, shown in every member's header: 1-${MAX_WORKSPACE_NAME_CHARS} characters once surrounding spaces are trimmed.`,
    ),
  }),
  z.strictObject({
    action: z.literal("list_members").describe("Members with roles and join dates, by name; open to every member."),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({
    action: z.literal("change_role").describe("Give a member another role (owners: anyone; admins: members and guests only)."),
    userId: uuidSchema.describe("The member whose role changes."),
    role: roleSchema.describe("The new role: owner | admin | member | guest."),
  }),
  z.strictObject({
    action: z.literal("remove_member").describe("End a membership; what they wrote stays in history under their name."),
    userId: uuidSchema.describe("The member to remove."),
  }),
  z.strictObject({
    action: z.literal("create_invite").describe("Create an invite link; its token is returned once and stored only as a hash."),
    role: inviteRoleSchema.describe("Role the invitee joins with: admin | member | guest (admins cannot invite admins)."),
    email: z
      .string()
      .trim()
      .toLowerCase()
      .email("must be an email address")
      .max(320)
      .optional()
      .describe("When given, only an account with this email can accept the invite."),
    expiresInDays: z
      .number()
      .int()
      .min(1)
      .max(MAX_INVITE_DAYS)
      .optional()
      .describe(`Days until the link stops working, 1-${MAX_INVITE_DAYS} (default ${DEFAULT_INVITE_DAYS}).`),
  }),
  z.strictObject({
    action: z.literal("list_invites").describe("Invites not yet accepted, revoked or expired, newest first."),
  }),
  z.strictObject({
    action: z.literal("revoke_invite").describe("Stop an invite link from working."),
    inviteId: uuidSchema.describe("The invite, from list_invites."),
  }),
]);

export type WorkspaceInput = z.input<typeof workspaceInput>;
type ParsedInput = z.infer<typeof workspaceInput>;
type ActionInput<A extends ParsedInput["action"]> = Extract<ParsedInput, { action: A }>;

export interface WorkspaceMemberView {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: string;
}

export interface InviteView {
  inviteId: string;
  role: Role;
  email: string | null;
  createdBy: string;
  createdByName: string | null;
  createdAt: string;
  expiresAt: string | null;
  status: "pending" | "accepted" | "revoked" | "expired";
}

export interface WorkspaceView {
  workspaceId: string;
  name: string;
}

/** Invite tokens are bearer secrets like API tokens: 256 random bits, stored as a sha256 hash. */
export const hashInviteToken = hashSecretToken;

export const inviteUrl = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/+$/, "")}/invite/${token}`;

export function inviteStatusOf(row: InviteRow, now: Date): InviteView["status"] {
  if (row.acceptedAt) return "accepted";
  if (row.revokedAt) return "revoked";
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return "expired";
  return "pending";
}

function presentInvite(row: InviteRow, createdByName: string | null, now: Date): InviteView {
  return {
    inviteId: row.id,
    role: row.role,
    email: row.email,
    createdBy: row.createdBy,
    createdByName,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    status: inviteStatusOf(row, now),
  };
}

const memberNotFound = (userId: string) => notFound("Member", userId, "List the members to find valid ids.");

const workspaceGone = () => new DomainError("UNAUTHENTICATED", "Your account is no longer a member of this workspace.");

async function getWorkspace(ctx: WorkspaceContext) {
  const { userId, role, workspaceId } = ctx.actor;
  const name = await getWorkspaceName(ctx.db, workspaceId);
  if (name === undefined) throw workspaceGone();
  return {
    workspace: { workspaceId, name },
    viewer: { userId, role, canRename: canRenameWorkspace(role), canManage: canManageMembers(role) },
    publicUrl: ctx.baseUrl.replace(/\/+$/, ""),
  };
}

function rename(ctx: WorkspaceContext, input: ActionInput<"rename">) {
  refuseAgents(ctx.actor);
  refuse(renameRefusal(ctx.actor.role));
  return ctx.db.transaction(async (tx) => {
    // The role as of now: it may have changed since the request was authenticated.
    const actor = await getMember(tx, ctx.actor.workspaceId, ctx.actor.userId, { forUpdate: true });
    if (!actor) throw workspaceGone();
    refuse(renameRefusal(actor.role));
    const renamed = await renameWorkspace(tx, ctx.actor.workspaceId, input.name);
    if (!renamed) throw workspaceGone();
    return {
      workspace: { workspaceId: ctx.actor.workspaceId, name: input.name },
      previousName: renamed.previousName,
      changed: renamed.previousName !== input.name,
    };
  });
}

async function listMembersAction(ctx: WorkspaceContext, input: ActionInput<"list_members">) {
  const { rows, nextCursor } = await pageOfMembers(ctx, { limit: input.limit, cursor: input.cursor });
  const { role, userId } = ctx.actor;
  const inPerson = accessChangeRefusal(ctx.actor.principal) === null;
  return {
    members: rows.map((r) => ({ userId: r.userId, name: r.name, email: r.email, role: r.role, joinedAt: r.joinedAt.toISOString() })),
    nextCursor,
    // An agent (API token) manages no one, whatever its person's role.
    viewer: inPerson
      ? { userId, role, canManage: canManageMembers(role), assignableRoles: assignableRoles(role) }
      : { userId, role, canManage: false, assignableRoles: [] },
  };
}

/**
 * Locks the owners' memberships, then reads the caller's and the target's
 * roles as of now (they may have changed since the request was authenticated).
 */
async function lockMembers(tx: Tx, ctx: WorkspaceContext, targetUserId: string) {
  const owners = await lockOwners(tx, ctx.actor.workspaceId);
  const actor = await getMember(tx, ctx.actor.workspaceId, ctx.actor.userId);
  const target = await getMember(tx, ctx.actor.workspaceId, targetUserId, { forUpdate: true });
  if (!actor) throw new DomainError("UNAUTHENTICATED", "Your account is no longer a member of this workspace.");
  if (!target) throw memberNotFound(targetUserId);
  return { owners, actor, target };
}

function changeRole(ctx: WorkspaceContext, input: ActionInput<"change_role">) {
  refuseAgents(ctx.actor);
  refuse(managerRefusal(ctx.actor.role));
  return ctx.db.transaction(async (tx) => {
    const { owners, actor, target } = await lockMembers(tx, ctx, input.userId);
    const changed = target.role !== input.role;
    // Keeping a role takes no owner away, so only a real change counts the owners.
    const ownerCount = changed ? owners.length : Number.POSITIVE_INFINITY;
    refuse(changeRoleRefusal({ actor: actor.role, target: target.role, newRole: input.role, ownerCount }));
    if (changed) await setMemberRole(tx, ctx.actor.workspaceId, target.userId, input.role);
    return {
      member: { userId: target.userId, name: target.name, email: target.email, role: input.role, joinedAt: target.joinedAt.toISOString() },
      previousRole: target.role,
      changed,
    };
  });
}

function removeMember(ctx: WorkspaceContext, input: ActionInput<"remove_member">) {
  refuseAgents(ctx.actor);
  refuse(managerRefusal(ctx.actor.role));
  return ctx.db.transaction(async (tx) => {
    const { owners, actor, target } = await lockMembers(tx, ctx, input.userId);
    refuse(removeRefusal({ actor: actor.role, target: target.role, ownerCount: owners.length }));
    await deleteMembership(tx, ctx.actor.workspaceId, target.userId);
    return { userId: target.userId, removed: true as const };
  });
}

async function createInvite(ctx: WorkspaceContext, input: ActionInput<"create_invite">) {
  refuseAgents(ctx.actor);
  refuse(inviteRefusal({ actor: ctx.actor.role, inviteRole: input.role }));
  if (input.email) {
    const existing = await findUserByEmail(ctx.db, input.email);
    if (existing && (await getMember(ctx.db, ctx.actor.workspaceId, existing.id))) {
      throw new DomainError("ALREADY_MEMBER", `${input.email} is already a member of this workspace; change their role instead.`, {
        userId: existing.id,
      });
    }
  }
  const now = ctx.clock();
  const days = input.expiresInDays ?? DEFAULT_INVITE_DAYS;
  const token = newSecretToken();
  const row = await insertInvite(ctx.db, {
    workspaceId: ctx.actor.workspaceId,
    tokenHash: hashInviteToken(token),
    role: input.role,
    email: input.email ?? null,
    createdBy: ctx.actor.userId,
    now,
    expiresAt: new Date(now.getTime() + days * 86_400_000),
  });
  const creator = await getMember(ctx.db, ctx.actor.workspaceId, ctx.actor.userId);
  return { invite: presentInvite(row, creator?.name ?? null, now), token, url: inviteUrl(ctx.baseUrl, token) };
}

async function listInvites(ctx: WorkspaceContext) {
  refuse(managerRefusal(ctx.actor.role));
  const now = ctx.clock();
  const rows = await listPendingInvites(ctx.db, ctx.actor.workspaceId, now);
  return { invites: rows.map((r) => presentInvite(r, r.createdByName, now)) };
}

function revokeInvite(ctx: WorkspaceContext, input: ActionInput<"revoke_invite">) {
  refuseAgents(ctx.actor);
  refuse(managerRefusal(ctx.actor.role));
  return ctx.db.transaction(async (tx) => {
    const now = ctx.clock();
    const row = await getInvite(tx, ctx.actor.workspaceId, input.inviteId, { forUpdate: true });
    if (!row) throw notFound("Invite", input.inviteId, "List the pending invites to find valid ids.");
    if (row.acceptedAt) {
      throw new DomainError("INVITE_USED", "This invite was already accepted, so there is nothing to revoke; remove the member instead.", {
        inviteId: row.id,
      });
    }
    if (!row.revokedAt) await markInviteRevoked(tx, row.id, now);
    return { invite: presentInvite({ ...row, revokedAt: row.revokedAt ?? now }, null, now) };
  });
}

export const workspaceTool = defineTool({
  name: "workspace",
  description: [
    "Workspace administration: its name, members and roles, and invite links. Not an MCP tool: agents do not manage people.",
    "- get -> {workspace, viewer: {userId, role, canRename, canManage}, publicUrl}: publicUrl is QUIRE_PUBLIC_URL when set, else the address the caller reached Quire at, with no trailing slash.",
    "- rename {name}; list_members {limit?, cursor?} -> {members, nextCursor, viewer: what the caller may offer}; change_role {userId, role}; remove_member {userId}.",
    "- create_invite {role, email?, expiresInDays?} -> {invite, token, url}: the token and url are shown once, only the token's hash is kept. list_invites; revoke_invite {inviteId}.",
  ].join("\n"),
  input: workspaceInput,
  readOnly: false,
  handlers: {
    get: getWorkspace,
    rename,
    list_members: listMembersAction,
    change_role: changeRole,
    remove_member: removeMember,
    create_invite: createInvite,
    list_invites: listInvites,
    revoke_invite: revokeInvite,
  },
});

export type WorkspaceResults = ToolResults<typeof workspaceTool>;
