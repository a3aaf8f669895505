/**
 * The tRPC face. Each tool is one procedure taking the tool's own parameter
 * object; validation and errors go through the same runTool path MCP uses.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { Actor } from "@/server/actions/context";
import type { z } from "zod";
import { apiTokensTool } from "@/server/actions/api-tokens";
import { tools } from "@/server/actions/registry";
import { type AnyTool, runTool, type ToolContext, type ToolResult } from "@/server/actions/tool";
import { workspaceTool } from "@/server/actions/workspace";
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
 * validates it once, with the tool's own schema, exactly as MCP does; the
 * types tRPC clients see are the tool's own (its input, each action's result).
 */
function toolProcedure<T extends AnyTool>() {
  return authenticated.input((raw: unknown) => raw as z.input<T["input"]>);
}
/** Every context this router builds serves every tool (the CLI and bridge build narrower ones). */
const contextFor = <T extends AnyTool>(ctx: TrpcContext & { actor: Actor }) => ctx as ToolContext<T>;
const toolMutation = <T extends AnyTool>(tool: T) =>
  toolProcedure<T>().mutation(({ ctx, input }) =>
    callAction(() => runTool(tool, contextFor<T>(ctx), input) as Promise<ToolResult<T, z.input<T["input"]>>>),
  );
const toolQuery = <T extends AnyTool>(tool: T) =>
  toolProcedure<T>().query(({ ctx, input }) =>
    callAction(() => runTool(tool, contextFor<T>(ctx), input) as Promise<ToolResult<T, z.input<T["input"]>>>),
  );

export const appRouter = t.router({
  documents: toolMutation(tools.documents),
  read: toolQuery(tools.read),
  mergeRequests: toolMutation(tools.merge_requests),
  sections: toolMutation(tools.sections),
  uploadUrl: toolMutation(tools.upload_url),
  members: toolQuery(tools.members),
  comments: toolMutation(tools.comments),
  /** Workspace administration (members, roles, invites); not an MCP tool. */
  workspace: toolMutation(workspaceTool),
  /** The caller's own API tokens; not an MCP tool. */
  apiTokens: toolMutation(apiTokensTool),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);
