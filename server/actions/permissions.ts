/** The `documents` actions on who may do what with a document: the team default, the AI limit, per-user grants. */
import { z } from "zod";
import { PERMISSIONS } from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import { listGrants, setDocumentPermissions, setGrant } from "@/server/store/access";
import { nonMembers } from "@/server/store/accounts";
import type { Tx } from "@/server/store/db";
import { getDocument } from "@/server/store/documents";
import { userNames } from "@/server/store/users";
import { openDocument } from "@/server/access/documents";
import type { ActionContext } from "./context";
import { documentIdField } from "./document-fields";
import { uuidSchema } from "./tool";

const getPermissionsInput = z.strictObject({
  action: z.literal("get_permissions"),
  documentId: documentIdField,
});

const setPermissionsInput = z.strictObject({
  action: z.literal("set_permissions"),
  documentId: documentIdField,
  defaultPermission: z.enum(PERMISSIONS).optional().describe("Members' permission unless granted otherwise."),
  aiAccess: z.enum(PERMISSIONS).optional().describe("The most agents may do."),
  grants: z
    .array(
      z.strictObject({
        userId: uuidSchema.describe("A workspace member."),
        permission: z.enum(PERMISSIONS).nullable().describe("null removes the grant."),
      }),
    )
    .max(500)
    .optional()
    .describe("Per-user grants."),
});

/** The input schemas of these actions, in the order agents read them. */
export const permissionActionInputs = [getPermissionsInput, setPermissionsInput] as const;

async function permissionsView(tx: Tx, workspaceId: string, documentId: string) {
  const document = await getDocument(tx, workspaceId, documentId);
  const grants = await listGrants(tx, documentId);
  const names = await userNames(
    tx,
    grants.map((g) => g.userId),
  );
  return {
    documentId,
    defaultPermission: document.defaultPermission,
    aiAccess: document.aiAccess,
    grants: grants.map((g) => ({ userId: g.userId, name: names.get(g.userId) ?? null, permission: g.permission })),
  };
}

async function getPermissions(ctx: ActionContext, input: z.output<typeof getPermissionsInput>) {
  await openDocument(ctx.db, ctx.actor, input.documentId, "manage");
  return permissionsView(ctx.db, ctx.actor.workspaceId, input.documentId);
}

function setPermissions(ctx: ActionContext, input: z.output<typeof setPermissionsInput>) {
  return ctx.db.transaction(async (tx) => {
    await openDocument(tx, ctx.actor, input.documentId, "manage");
    const grants = input.grants ?? [];
    const strangers = await nonMembers(
      tx,
      ctx.actor.workspaceId,
      grants.map((g) => g.userId),
    );
    if (strangers.length > 0) {
      throw new DomainError(
        "VALIDATION_FAILED",
        `grants name users who are not workspace members: ${strangers.join(", ")}. Find members with the \`members\` tool.`,
        {
          issues: [{ path: "grants", message: "not a workspace member" }],
          userIds: strangers,
        },
      );
    }
    await setDocumentPermissions(tx, input.documentId, { defaultPermission: input.defaultPermission, aiAccess: input.aiAccess });
    for (const grant of grants) {
      await setGrant(tx, {
        documentId: input.documentId,
        userId: grant.userId,
        permission: grant.permission,
        grantedBy: ctx.actor.userId,
        now: ctx.clock(),
      });
    }
    return permissionsView(tx, ctx.actor.workspaceId, input.documentId);
  });
}

export const permissionHandlers = { get_permissions: getPermissions, set_permissions: setPermissions };
