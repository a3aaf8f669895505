/** How permissions read on the sharing page and the document page. */
import type { Permission } from "@/server/core/document-model";

export type Level = Permission;

export const LEVEL_LABELS: Record<Level, string> = { edit: "Can edit", read: "Can read", none: "No access" };
