/**
 * The tRPC face. Each tool is one procedure taking the tool's own parameter
 * object; validation and errors go through the same runTool path MCP uses.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { Actor } from "@/server/actions/context";
import type { ToolInput, ToolName, ToolOutput } from "@/server/actions/registry";
import { runTool } from "@/server/actions/run";
import { type ApiTokensInput, type ApiTokensOutput, runApiTokensAction } from "@/server/actions/api-tokens";
import { runWorkspaceAction, type WorkspaceInput, type WorkspaceOutput } from "@/server/actions/workspace";
import { type DomainError, ERROR_FACES, type ErrorCode, type ErrorPayload, isDomainError } from "@/server/core/errors";
import { requestTooLarge } from "@/server/core/limits";
import type { Database } from "@/db/client";
import type { FileLinks } from "@/server/storage/links";

export interface TrpcContext {
  db: Database;
  /** Null when the request carried no valid session or token. */
  actor: Actor | null;
  clock: () => Date;
  files: FileLinks;
  /** Public base URL for links handed out (invites): config.publicBaseUrl's answer. */
  baseUrl: string;
}

/** tRPC's name for each of our codes, from the one table (this only compiles while its names are tRPC's). */
const trpcCodeOf = (code: ErrorCode): TRPC_ERROR_CODE_KEY => ERROR_FACES[code].trpc;

/**
 * What tRPC's own refusals (before any action ran: an unreadable or oversized
 * body, an unknown procedure) mean in our codes, so every error a client sees
 * carries one of them.
 */
const FROM_TRPC_CODES: Partial<Record<TRPC_ERROR_CODE_KEY, ErrorCode>> = {
  PARSE_ERROR: "VALIDATION_FAILED",
  BAD_REQUEST: "VALIDATION_FAILED",
  UNAUTHORIZED: "UNAUTHENTICATED",
  FORBIDDEN: "PERMISSION_DENIED",
  NOT_FOUND: "NOT_FOUND",
  METHOD_NOT_SUPPORTED: "VALIDATION_FAILED",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  UNSUPPORTED_MEDIA_TYPE: "UNSUPPORTED_MEDIA_TYPE",
};

function errorPayloadFor(error: TRPCError): ErrorPayload {
  if (isDomainError(error.cause)) return error.cause.toPayload();
  if (error.code === "PAYLOAD_TOO_LARGE") return requestTooLarge().toPayload();
  const code = FROM_TRPC_CODES[error.code];
  return code ? { code, message: error.message } : { code: "INTERNAL", message: "Internal error." };
}

const t = initTRPC.context<TrpcContext>().create({
  errorFormatter({ shape, error }) {
    return { ...shape, data: { ...shape.data, stack: undefined, error: errorPayloadFor(error) } };
  },
});

const authenticated = t.procedure.use(({ ctx, next }) => {
  if (!ctx.actor) {
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in, or send Authorization: Bearer <API token>." });
  }
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});

/** The tRPC error for a DomainError (which stays in `cause`, for the formatter). */
export const toTrpcError = (error: DomainError): TRPCError =>
  new TRPCError({ code: trpcCodeOf(error.code), message: error.message, cause: error });

/** Runs an action with DomainErrors mapped to tRPC codes (the DomainError stays in `cause` for the formatter). */
async function callAction<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isDomainError(error)) throw toTrpcError(error);
    throw error;
  }
}

/**
 * The procedure for one tool. The input passes through untouched so runTool
 * validates it once, with the tool's own schema, exactly as MCP does.
 */
function toolProcedure<T extends ToolName>() {
  return authenticated.input((raw: unknown) => raw as ToolInput<T>).output((value: unknown) => value as ToolOutput<T>);
}
// The result's type comes from `.output()`; runTool itself returns unknown.
const toolMutation = <T extends ToolName>(name: T) =>
  toolProcedure<T>().mutation(({ ctx, input }) => callAction(() => runTool(name, ctx, input)) as never);
const toolQuery = <T extends ToolName>(name: T) =>
  toolProcedure<T>().query(({ ctx, input }) => callAction(() => runTool(name, ctx, input)) as never);

export const appRouter = t.router({
  documents: toolMutation("documents"),
  read: toolQuery("read"),
  mergeRequests: toolMutation("merge_requests"),
  sections: toolMutation("sections"),
  uploadUrl: toolMutation("upload_url"),
  members: toolQuery("members"),
  /** Workspace administration (members, roles, invites); not an MCP tool. */
  workspace: authenticated
    .input((raw: unknown) => raw as WorkspaceInput)
    .mutation(({ ctx, input }) => callAction(() => runWorkspaceAction(ctx, input as unknown) as Promise<WorkspaceOutput<WorkspaceInput>>)),
  /** The caller's own API tokens; not an MCP tool. */
  apiTokens: authenticated
    .input((raw: unknown) => raw as ApiTokensInput)
    .mutation(({ ctx, input }) => callAction(() => runApiTokensAction(ctx, input as unknown) as Promise<ApiTokensOutput<ApiTokensInput>>)),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);
