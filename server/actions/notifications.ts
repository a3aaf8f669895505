/**
 * The `notifications` tool: the caller's own inbox (what needs them: reviews requested, verdicts on their merge
 * requests, mentions, replies, stale approvals, updated requests they review) and their email setting. Nobody
 * reads or marks another person's items; an API token reads its owner's, as the agent it is (capped by aiAccess).
 *
 * Whether an item may be shown is decided now, by server/access, for the caller: an item whose document, section
 * or merge request the caller may not see (now) is left out of every list and count, and of every email.
 */
import { z } from "zod";
import type { Database } from "@/db/client";
import { EMAIL_SETTINGS, type EmailSetting, type NotificationKind } from "@/db/schema";
import { DomainError, isDomainError } from "@/server/core/errors";
import { CommitGraph } from "@/server/store/commits";
import type { Tx } from "@/server/store/db";
import { findBranch } from "@/server/store/documents";
import {
  getEmailSetting,
  type InboxRow,
  listInbox,
  markNotificationsRead,
  ownNotificationIds,
  setEmailSetting,
} from "@/server/store/notifications";
import { loadSections, loadTree } from "@/server/store/objects";
import { type DocumentAccess, openDocument, sectionRules } from "@/server/access/documents";
import type { Actor, ActionContext } from "./context";
import { cursorSchema, decodeCursor, defineTool, encodeCursor, type ToolResults, uuidSchema, visiblePage } from "./tool";

const MAX_INBOX_PAGE = 100;
/** The unread count stops here ("99+" is what a badge shows anyway). */
export const UNREAD_COUNT_CAP = 100;

export const notificationsInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("list"),
    unreadOnly: z.boolean().optional().describe("Only unread."),
    limit: z.number().int().min(1).max(MAX_INBOX_PAGE).optional().describe("Page size (default 20)."),
    cursor: cursorSchema,
  }),
  z.strictObject({
    action: z.literal("mark_read"),
    notificationIds: z.array(uuidSchema).min(1).max(MAX_INBOX_PAGE).describe("Items to mark read."),
  }),
  z.strictObject({ action: z.literal("mark_all_read") }),
  z.strictObject({ action: z.literal("get_settings") }),
  z.strictObject({
    action: z.literal("set_settings"),
    email: z.enum(EMAIL_SETTINGS).describe("Email for unread items; direct: review requests and mentions."),
  }),
]);

type NotificationsInput = z.infer<typeof notificationsInput>;
type ActionInput<A extends NotificationsInput["action"]> = Extract<NotificationsInput, { action: A }>;

/** The kinds an email setting of `direct` sends: addressed to you by name. */
export const DIRECT_KINDS: ReadonlySet<NotificationKind> = new Set(["review_requested", "mention"]);

export interface NotificationView {
  notificationId: string;
  kind: NotificationKind;
  title: string;
  /** Path on this Quire site (start it with the site's URL): the merge request, or the section on its branch. */
  link: string;
  actorId: string | null;
  actorName: string | null;
  documentId: string;
  mergeRequestId: string | null;
  createdAt: string;
  read: boolean;
}

/** Where an item takes its reader: the merge request, else the section on its branch. */
export function notificationLink(row: Pick<InboxRow, "mergeRequestId" | "documentId" | "branchName" | "sectionId">): string {
  if (row.mergeRequestId) return `/merge-requests/${row.mergeRequestId}`;
  const branch = row.branchName ? `?branch=${encodeURIComponent(row.branchName)}` : "";
  return `/documents/${row.documentId}${branch}${row.sectionId ? `#section-${row.sectionId}` : ""}`;
}

export function notificationView(row: InboxRow): NotificationView {
  return {
    notificationId: row.id,
    kind: row.kind,
    title: row.title,
    link: notificationLink(row),
    actorId: row.actorId,
    actorName: row.actorName,
    documentId: row.documentId,
    mergeRequestId: row.mergeRequestId,
    createdAt: row.createdAt.toISOString(),
    read: row.readAt !== null,
  };
}

/**
 * Whether `actor` may see an item's place now: its document (a merge request is seen with its document), and its
 * section on its branch (on the default branch once that branch is gone). Answers are remembered for one call.
 */
export function visibilityFor(tx: Tx | Database, actor: Actor): (row: InboxRow) => Promise<boolean> {
  const documents = new Map<string, Promise<DocumentAccess | null>>();
  const sections = new Map<string, Promise<boolean>>();
  const accessTo = (documentId: string) => {
    let access = documents.get(documentId);
    if (!access) {
      access = openDocument(tx, actor, documentId, "read").catch((error: unknown) => {
        if (isDomainError(error) && error.code === "NOT_FOUND") return null;
        throw error;
      });
      documents.set(documentId, access);
    }
    return access;
  };
  const sectionVisible = async (access: DocumentAccess, branchName: string | null, sectionId: string): Promise<boolean> => {
    const branch =
      (branchName ? await findBranch(tx, access.document.id, branchName) : undefined) ??
      (await findBranch(tx, access.document.id, access.document.defaultBranch));
    if (!branch) return false;
    const commit = await new CommitGraph(tx, access.document.id).get(branch.headCommitId);
    const entry = (await loadTree(tx, commit.treeHash)).sections.find((e) => e.sectionId === sectionId);
    if (!entry) return false;
    const version = (await loadSections(tx, [entry.blobHash])).get(entry.blobHash)!;
    const rules = await sectionRules(tx, access, branch.name);
    return rules.permission(sectionId, version) !== "none";
  };
  return async (row) => {
    const access = await accessTo(row.documentId);
    if (!access) return false;
    if (row.mergeRequestId || !row.sectionId) return true;
    const key = `${row.documentId}\n${row.branchName ?? ""}\n${row.sectionId}`;
    let visible = sections.get(key);
    if (!visible) {
      visible = sectionVisible(access, row.branchName, row.sectionId);
      sections.set(key, visible);
    }
    return visible;
  };
}

/** How many of the caller's unread items they may see, up to UNREAD_COUNT_CAP. */
export async function unreadCount(
  tx: Tx | Database,
  actor: Actor,
  visible: (row: InboxRow) => Promise<boolean> = visibilityFor(tx, actor),
): Promise<number> {
  const page = await visiblePage({
    limit: UNREAD_COUNT_CAP,
    start: undefined as { createdAt: Date; id: string } | undefined,
    fetch: (before, batchSize) => listInbox(tx, actor.userId, { unreadOnly: true, before, limit: batchSize }),
    visible,
    position: (row) => ({ createdAt: row.createdAt, id: row.id }),
  });
  return page.rows.length;
}

const cursorShape = z.object({ createdAt: z.iso.datetime(), id: uuidSchema });

async function list(ctx: ActionContext, input: ActionInput<"list">) {
  const start = input.cursor ? decodeCursor(input.cursor, cursorShape) : undefined;
  const visible = visibilityFor(ctx.db, ctx.actor);
  const page = await visiblePage({
    limit: input.limit ?? 20,
    start,
    fetch: (after, batchSize) =>
      listInbox(ctx.db, ctx.actor.userId, {
        unreadOnly: input.unreadOnly ?? false,
        before: after ? { createdAt: new Date(after.createdAt), id: after.id } : undefined,
        limit: batchSize,
      }),
    visible,
    position: (row) => ({ createdAt: row.createdAt.toISOString(), id: row.id }),
  });
  return {
    notifications: page.rows.map(notificationView),
    // The same answers for both: a document's access is asked once per call.
    unreadCount: await unreadCount(ctx.db, ctx.actor, visible),
    nextCursor: page.next ? encodeCursor(page.next) : null,
  };
}

async function markRead(ctx: ActionContext, input: ActionInput<"mark_read">) {
  return ctx.db.transaction(async (tx) => {
    const ids = [...new Set(input.notificationIds)];
    const own = await ownNotificationIds(tx, ctx.actor.userId, ids);
    const strangers = ids.filter((id) => !own.has(id));
    if (strangers.length > 0) {
      // Another person's item reads as one that does not exist.
      throw new DomainError(
        "NOT_FOUND",
        `Notification ${strangers.join(", ")} not found. Use \`notifications\` \`list\` for your items; nothing was marked.`,
        {
          notificationIds: strangers,
        },
      );
    }
    const marked = await markNotificationsRead(tx, ctx.actor.userId, ids, ctx.clock());
    return { marked: marked.length };
  });
}

async function markAllRead(ctx: ActionContext) {
  return ctx.db.transaction(async (tx) => ({ marked: (await markNotificationsRead(tx, ctx.actor.userId, "all", ctx.clock())).length }));
}

async function getSettings(ctx: ActionContext) {
  return { email: await getEmailSetting(ctx.db, ctx.actor.userId) };
}

/**
 * Where a person is reached is theirs to decide in person: an API token (an agent) reads the setting but may not
 * change it, as it may not change access or tokens — an agent silencing its owner's email would hide from them what
 * it was asked to do.
 */
async function setSettings(ctx: ActionContext, input: ActionInput<"set_settings">) {
  if (ctx.actor.principal === "agent") {
    throw new DomainError(
      "PERMISSION_DENIED",
      "An API token acts as an agent, and may read but not change its owner's email setting. Sign in and change it on the settings page.",
    );
  }
  await setEmailSetting(ctx.db, ctx.actor.userId, input.email);
  return { email: input.email as EmailSetting };
}

export const notificationsTool = defineTool({
  name: "notifications",
  description: [
    "Your inbox, newest first: review requests, reviews and outcomes of your merge requests, mentions, replies, stale approvals.",
    "Settings: signed in only.",
  ].join(" "),
  input: notificationsInput,
  readOnly: false,
  handlers: { list, mark_read: markRead, mark_all_read: markAllRead, get_settings: getSettings, set_settings: setSettings },
});

export type NotificationsResults = ToolResults<typeof notificationsTool>;
