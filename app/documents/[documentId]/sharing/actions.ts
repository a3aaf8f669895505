"use server";

/**
 * Server actions behind the "Share & permissions" page. Each runs as the
 * signed-in user through the bridge, which checks again that this user may
 * manage the document (its creator, workspace owners and admins); the page
 * hiding its controls from others is a courtesy, not the check. Next refuses
 * a server action whose Origin does not match the Host.
 */
import type { Permission } from "@/server/core/document-model";
import { runAsUser, type ActionResult } from "@/app/_lib/action-result";
import { getBridge } from "@/server/bridge";

export type SharingResult<T = undefined> = ActionResult<T>;

type Level = Permission;

const LEVELS: readonly string[] = ["edit", "read", "none"];
const text = (value: unknown): string => (typeof value === "string" ? value : "");
const level = (value: unknown): Level | undefined => (LEVELS.includes(text(value)) ? (text(value) as Level) : undefined);

const asManager = <T>(run: (userId: string) => Promise<T>) => runAsUser("sharing", run);

const invalid = (message: string) => ({ ok: false as const, code: "VALIDATION_FAILED", message });

/** Saves the team default and the AI limit. */
export async function saveDocumentPermissions(
  documentId: unknown,
  input: { defaultPermission?: unknown; aiAccess?: unknown },
): Promise<SharingResult<{ defaultPermission: Level; aiAccess: Level }>> {
  const defaultPermission = level(input.defaultPermission);
  const aiAccess = level(input.aiAccess);
  if (!defaultPermission || !aiAccess) return invalid("Choose edit, read or none for both settings.");
  return asManager(async (me) => {
    const saved = await getBridge().callTool("documents", me, {
      action: "set_permissions",
      documentId: text(documentId),
      defaultPermission,
      aiAccess,
    });
    return { defaultPermission: saved.defaultPermission, aiAccess: saved.aiAccess };
  });
}

/** Gives one member a permission on the document, or (permission null) removes their grant. */
export async function setUserPermission(documentId: unknown, userId: unknown, permission: unknown): Promise<SharingResult> {
  const chosen = permission === null ? null : level(permission);
  if (chosen === undefined) return invalid("Choose edit, read or none.");
  if (!text(userId)) return invalid("Choose a person first.");
  return asManager(async (me) => {
    await getBridge().callTool("documents", me, {
      action: "set_permissions",
      documentId: text(documentId),
      grants: [{ userId: text(userId), permission: chosen }],
    });
    return undefined;
  });
}

export interface CreatedShareLink {
  /** The full link: QUIRE_PUBLIC_URL (else the origin the browser used) and the link's path. */
  url: string;
  permission: "read" | "edit";
  expiresAt: string | null;
}

export async function createDocumentShareLink(
  documentId: unknown,
  input: { permission?: unknown; expiresInDays?: unknown },
): Promise<SharingResult<CreatedShareLink>> {
  const permission = text(input.permission);
  if (permission !== "read" && permission !== "edit") return invalid("Choose what the link allows: read or edit.");
  const rawDays = text(input.expiresInDays).trim();
  const days = rawDays === "" ? undefined : Number(rawDays);
  if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > 3650)) {
    return invalid("Expiry must be a whole number of days from 1 to 3650, or empty for a link that does not expire.");
  }
  return asManager(async (me) => {
    const created = await getBridge().callTool("documents", me, {
      action: "create_share_link",
      documentId: text(documentId),
      permission,
      ...(days !== undefined ? { expiresInDays: days } : {}),
    });
    // The link's base is decided by the server, in one place: QUIRE_PUBLIC_URL, else this request's origin.
    const { publicUrl } = await getBridge().workspace(me, { action: "get" });
    return {
      url: `${publicUrl}${created.path}`,
      permission: created.permission,
      expiresAt: created.expiresAt,
    };
  });
}

export async function revokeDocumentShareLink(documentId: unknown, shareLinkId: unknown): Promise<SharingResult> {
  return asManager(async (me) => {
    await getBridge().callTool("documents", me, {
      action: "revoke_share_link",
      documentId: text(documentId),
      shareLinkId: text(shareLinkId),
    });
    return undefined;
  });
}
