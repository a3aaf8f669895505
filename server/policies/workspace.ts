/**
 * Who may manage the workspace's people, decided in one place over facts
 * already loaded. Owners manage everyone; admins manage members and guests;
 * members and guests manage no one. A workspace always keeps an owner.
 *
 * Each rule returns null when allowed, else the refusal (code and a message
 * that says what to do instead).
 */
import type { Role } from "@/db/schema";
import type { ErrorCode } from "@/server/core/errors";

export type Refusal = { code: ErrorCode; message: string } | null;

export const ROLES: readonly Role[] = ["owner", "admin", "member", "guest"];

export const canManageMembers = (role: Role): boolean => role === "owner" || role === "admin";

/** The roles this actor may hand out (to an existing member or through an invite; owner only for members). */
export function assignableRoles(actor: Role): Role[] {
  if (actor === "owner") return ["owner", "admin", "member", "guest"];
  if (actor === "admin") return ["member", "guest"];
  return [];
}

/** Whether the actor may change or remove a member who holds `target`. */
export function canManageRole(actor: Role, target: Role): boolean {
  if (actor === "owner") return true;
  if (actor === "admin") return target === "member" || target === "guest";
  return false;
}

const notAManager: Refusal = {
  code: "PERMISSION_DENIED",
  message: "Only workspace owners and admins can manage members and invites. Ask an owner or admin.",
};

export function changeRoleRefusal(facts: { actor: Role; target: Role; newRole: Role; ownerCount: number }): Refusal {
  if (!canManageMembers(facts.actor)) return notAManager;
  if (!canManageRole(facts.actor, facts.target)) {
    return {
      code: "PERMISSION_DENIED",
      message: `Admins can change the roles of members and guests only; ask an owner to change an ${facts.target}'s role.`,
    };
  }
  if (!assignableRoles(facts.actor).includes(facts.newRole)) {
    return {
      code: "PERMISSION_DENIED",
      message: `Admins can make people members or guests only; ask an owner to make someone ${facts.newRole === "admin" ? "an admin" : "an owner"}.`,
    };
  }
  if (facts.target === "owner" && facts.newRole !== "owner" && facts.ownerCount <= 1) {
    return { code: "LAST_OWNER", message: "This is the workspace's only owner. Make someone else an owner first, then change this role." };
  }
  return null;
}

export function removeRefusal(facts: { actor: Role; target: Role; ownerCount: number }): Refusal {
  if (!canManageMembers(facts.actor)) return notAManager;
  if (!canManageRole(facts.actor, facts.target)) {
    return { code: "PERMISSION_DENIED", message: `Admins can remove members and guests only; ask an owner to remove an ${facts.target}.` };
  }
  if (facts.target === "owner" && facts.ownerCount <= 1) {
    return { code: "LAST_OWNER", message: "This is the workspace's only owner and cannot be removed. Make someone else an owner first." };
  }
  return null;
}

export function inviteRefusal(facts: { actor: Role; inviteRole: Role }): Refusal {
  if (!canManageMembers(facts.actor)) return notAManager;
  if (facts.actor === "admin" && facts.inviteRole === "admin") {
    return {
      code: "PERMISSION_DENIED",
      message: "Admins cannot invite admins; invite a member (an owner can promote them later) or ask an owner.",
    };
  }
  return null;
}

/** Owners and admins may rename the workspace. */
export const canRenameWorkspace = (role: Role): boolean => role === "owner" || role === "admin";

export function renameRefusal(actor: Role): Refusal {
  return canRenameWorkspace(actor)
    ? null
    : { code: "PERMISSION_DENIED", message: "Only workspace owners and admins can rename the workspace. Ask an owner or admin." };
}

/** Refuses anyone who is not an owner or admin. */
export function managerRefusal(actor: Role): Refusal {
  return canManageMembers(actor) ? null : notAManager;
}
