/**
 * The `members` tool: the people of the caller's workspace, to find the user
 * ids that reviewers and mentions need. Listing or searching; never writes.
 */
import { z } from "zod";
import type { Role } from "@/db/schema";
import { findMembers, listMembers, type MemberRow } from "@/server/store/members";
import type { ActionContext } from "./context";
import { cursorSchema, DEFAULT_PAGE_SIZE, decodeCursor, defineTool, encodeCursor, pageLimitSchema, uuidSchema } from "./tool";

/** The most people one `get` looks up: a page's worth. */
export const MAX_MEMBERS_GOT = 200;

export const membersInput = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("list"),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({
    action: z.literal("search"),
    query: z.string().trim().min(1, "query must not be empty").max(200).describe("Start of a name, of a word of it, or of an email."),
    limit: pageLimitSchema,
    cursor: cursorSchema,
  }),
  z.strictObject({
    action: z.literal("get"),
    userIds: z.array(uuidSchema).min(1).max(MAX_MEMBERS_GOT).describe("Ids to look up; anyone outside your workspace is left out."),
  }),
]);

type MembersInput = z.infer<typeof membersInput>;

export interface MemberView {
  userId: string;
  name: string;
  email: string;
  role: Role;
}

export interface MemberList {
  members: MemberView[];
  nextCursor: string | null;
}

const memberCursor = z.object({ sortName: z.string(), userId: uuidSchema });

/** One page of members (all, or those matching `query`), with the cursor to the next. */
export async function pageOfMembers(
  ctx: Pick<ActionContext, "db" | "actor">,
  input: { query?: string; limit?: number; cursor?: string },
): Promise<{ rows: MemberRow[]; nextCursor: string | null }> {
  const limit = input.limit ?? DEFAULT_PAGE_SIZE;
  const after = input.cursor ? decodeCursor(input.cursor, memberCursor) : undefined;
  const rows = await listMembers(ctx.db, { workspaceId: ctx.actor.workspaceId, query: input.query, after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rows: page,
    nextCursor: rows.length > limit && last ? encodeCursor({ sortName: last.sortName, userId: last.userId }) : null,
  };
}

const memberView = (r: MemberRow): MemberView => ({ userId: r.userId, name: r.name, email: r.email, role: r.role });

async function listMembersPage(ctx: ActionContext, input: Exclude<MembersInput, { action: "get" }>): Promise<MemberList> {
  const { rows, nextCursor } = await pageOfMembers(ctx, {
    query: input.action === "search" ? input.query : undefined,
    limit: input.limit,
    cursor: input.cursor,
  });
  return { members: rows.map(memberView), nextCursor };
}

async function getMembers(ctx: ActionContext, input: Extract<MembersInput, { action: "get" }>): Promise<MemberList> {
  const rows = await findMembers(ctx.db, { workspaceId: ctx.actor.workspaceId, userIds: [...new Set(input.userIds)] });
  return { members: rows.map(memberView), nextCursor: null };
}

export const membersTool = defineTool({
  name: "members",
  description: ["Your workspace's people, for the user ids other tools take (reviewerIds, mentions)."].join(" "),
  input: membersInput,
  readOnly: true,
  handlers: { list: listMembersPage, search: listMembersPage, get: getMembers },
});
