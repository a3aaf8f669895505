/**
 * The tRPC face. Each tool is one procedure taking the tool's own parameter
 * object; validation and errors go through the same runTool path MCP uses.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { Actor, ActionContext } from "@/server/actions/context";
import type { ToolInput, ToolName, ToolOutput } from "@/server/actions/registry";
import { runTool } from "@/server/actions/run";
import { type ErrorCode, type ErrorPayload, isDomainError } from "@/server/core/errors";
import type { Database } from "@/db/client";

export interface TrpcContext {
  db: Database;
  /** Null when the request carried no valid session or token. */
  actor: Actor | null;
  clock: () => Date;
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

export const appRouter = t.router({
  documents: toolProcedure("documents").mutation(({ ctx, input }) => callTool("documents", ctx, input) as Promise<ToolOutput<"documents">>),
  read: toolProcedure("read").query(({ ctx, input }) => callTool("read", ctx, input) as Promise<ToolOutput<"read">>),
  mergeRequests: toolProcedure("merge_requests").mutation(
    ({ ctx, input }) => callTool("merge_requests", ctx, input) as Promise<ToolOutput<"merge_requests">>,
  ),
  sections: toolProcedure("sections").mutation(({ ctx, input }) => callTool("sections", ctx, input) as Promise<ToolOutput<"sections">>),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);
