/**
 * The tRPC face. Each tool is one procedure taking the tool's own parameter
 * object; validation and errors go through the same runTool path MCP uses.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { Actor, ActionContext } from "@/server/actions/context";
import type { ToolInput, ToolName, ToolOutput } from "@/server/actions/registry";
import { runTool } from "@/server/actions/run";
import { type ApiTokensInput, type ApiTokensOutput, runApiTokensAction } from "@/server/actions/api-tokens";
import { runWorkspaceAction, type WorkspaceInput, type WorkspaceOutput } from "@/server/actions/workspace";
import { type ErrorCode, type ErrorPayload, isDomainError } from "@/server/core/errors";
import type { Database } from "@/db/client";
import type { FileLinks } from "@/server/storage/links";

export interface TrpcContext {
  db: Database;
  /** Null when the request carried no valid session or token. */
  actor: Actor | null;
  clock: () => Date;
  files: FileLinks;
  /** Public base URL for links handed out (invites); default QUIRE_PUBLIC_URL, else http://localhost:$PORT. */
  baseUrl?: string;
}

const TRPC_CODES: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  VALIDATION_FAILED: "BAD_REQUEST",
  UNAUTHENTICATED: "UNAUTHORIZED",
  PERMISSION_DENIED: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  PATH_TAKEN: "CONFLICT",
  BRANCH_EXISTS: "CONFLICT",
  BRANCH_MOVED: "CONFLICT",
  DEFAULT_BRANCH_PROTECTED: "PRECONDITION_FAILED",
  DOCUMENT_DELETED: "PRECONDITION_FAILED",
  TAG_EXISTS: "CONFLICT",
  CONTENT_HASH_MISMATCH: "CONFLICT",
  DUPLICATE_HEADING: "BAD_REQUEST",
  COMMENT_TAGS_REMOVED: "BAD_REQUEST",
  MERGE_REQUEST_EXISTS: "CONFLICT",
  MERGE_REQUEST_NOT_OPEN: "PRECONDITION_FAILED",
  NOTHING_TO_MERGE: "PRECONDITION_FAILED",
  UNRESOLVED_CONFLICTS: "CONFLICT",
  COMMIT_MESSAGE_TOO_LONG: "BAD_REQUEST",
  ALREADY_INITIALIZED: "CONFLICT",
  EMAIL_TAKEN: "CONFLICT",
  SIGNATURE_INVALID: "FORBIDDEN",
  LINK_EXPIRED: "FORBIDDEN",
  UPLOAD_ALREADY_USED: "CONFLICT",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
  LAST_OWNER: "PRECONDITION_FAILED",
  ALREADY_MEMBER: "CONFLICT",
  INVITE_EXPIRED: "PRECONDITION_FAILED",
  INVITE_REVOKED: "PRECONDITION_FAILED",
  INVITE_USED: "CONFLICT",
  INVITE_EMAIL_MISMATCH: "FORBIDDEN",
  CSRF_REJECTED: "FORBIDDEN",
  INTERNAL: "INTERNAL_SERVER_ERROR",
};

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    const domain: ErrorPayload | undefined = isDomainError(error.cause) ? error.cause.toPayload() : undefined;
    return { ...shape, data: { ...shape.data, stack: undefined, error: domain ?? { code: "INTERNAL", message: shape.message } } };
  },
});

const authenticated = t.procedure.use(({ ctx, next }) => {
  if (!ctx.actor) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in, or send Authorization: Bearer <API token>." });
  }
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});

/** A procedure for one tool: the input passes through untouched so runTool validates it once, with the tool's schema. */
function toolProcedure<T extends ToolName>(name: T) {
  return authenticated
    .input((raw: unknown) => raw as ToolInput<T>)
    .output((value: unknown) => value as ToolOutput<T>);
}

async function callTool(name: ToolName, ctx: ActionContext, input: unknown) {
  try {
    return await runTool(name, ctx, input);
  } catch (error) {
    if (isDomainError(error)) throw new TRPCError({ code: TRPC_CODES[error.code], message: error.message, cause: error });
    throw error;
  }
}

/** Runs a non-tool action module (workspace administration, API tokens) with the same error mapping. */
async function callAction<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isDomainError(error)) throw new TRPCError({ code: TRPC_CODES[error.code], message: error.message, cause: error });
    throw error;
  }
}

const defaultBaseUrl = () => process.env.QUIRE_PUBLIC_URL ?? `http://localhost:${process.env.PORT ?? 3000}`;

export const appRouter = t.router({
  documents: toolProcedure("documents").mutation(({ ctx, input }) => callTool("documents", ctx, input) as Promise<ToolOutput<"documents">>),
  read: toolProcedure("read").query(({ ctx, input }) => callTool("read", ctx, input) as Promise<ToolOutput<"read">>),
  mergeRequests: toolProcedure("merge_requests").mutation(
    ({ ctx, input }) => callTool("merge_requests", ctx, input) as Promise<ToolOutput<"merge_requests">>,
  ),
  sections: toolProcedure("sections").mutation(({ ctx, input }) => callTool("sections", ctx, input) as Promise<ToolOutput<"sections">>),
  uploadUrl: toolProcedure("upload_url").mutation(
    ({ ctx, input }) => callTool("upload_url", ctx, input) as Promise<ToolOutput<"upload_url">>,
  ),
  members: toolProcedure("members").query(({ ctx, input }) => callTool("members", ctx, input) as Promise<ToolOutput<"members">>),
  /** Workspace administration (members, roles, invites); not an MCP tool. */
  workspace: authenticated
    .input((raw: unknown) => raw as WorkspaceInput)
    .mutation(({ ctx, input }) =>
      callAction(
        () =>
          runWorkspaceAction({ ...ctx, baseUrl: ctx.baseUrl ?? defaultBaseUrl() }, input as unknown) as Promise<WorkspaceOutput<WorkspaceInput>>,
      ),
    ),
  /** The caller's own API tokens; not an MCP tool. */
  apiTokens: authenticated
    .input((raw: unknown) => raw as ApiTokensInput)
    .mutation(({ ctx, input }) => callAction(() => runApiTokensAction(ctx, input as unknown) as Promise<ApiTokensOutput<ApiTokensInput>>)),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);
