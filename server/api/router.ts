/**
 * The tRPC face. Each tool is one procedure taking the tool's own parameter
 * object; validation and errors go through the same runTool path MCP uses.
 *
 * Subscriptions (over SSE) are what the browser follows live instead of
 * polling: each yields the current state at once and again whenever an
 * event may have changed it (a head move, a draft change, a thread's reply
 * or resolution, an access change), read through the same action as the
 * query that shows it once, so its access and hiding are that action's.
 */
import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { z } from "zod";
import type { Actor, ActionContext } from "@/server/actions/context";
import { apiTokensTool } from "@/server/actions/api-tokens";
import { webhooksTool } from "@/server/actions/webhooks";
import { branchHeads, branchHeadsInput, branchInput, commentThreads } from "@/server/actions/live-views";
import { tools } from "@/server/actions/registry";
import { type AnyTool, countUnderWay, parseInput, runTool, type ToolContext, type ToolResult } from "@/server/actions/tool";
import { workspaceTool } from "@/server/actions/workspace";
import { DomainError, ERROR_FACES, type ErrorCode, type ErrorPayload, isDomainError } from "@/server/core/errors";
import { requestTooLarge } from "@/server/core/limits";
import { onAccessChanged } from "@/server/store/access-cache";
import { onThreadsChanged } from "@/server/store/comments";
import { onHeadMoved } from "@/server/store/head-moves";
import { onInboxChanged } from "@/server/store/notifications";

/** An action's context, with the caller not yet known (null when the request carried no valid session or token). */
export interface TrpcContext extends Omit<ActionContext, "actor"> {
  actor: Actor | null;
  /**
   * The caller as the request's credential makes them now (the session or token checked again; null when it no
   * longer holds): a subscription outlives its request, and reads each state it sends as this caller.
   */
  callerNow: () => Promise<Actor | null>;
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

/**
 * Yields `read()` now and again after each wake-up `subscribe` gives, until
 * the client goes (`signal`). Subscribed before the first read, so no change
 * falls between the read and the listening; wake-ups during a read make one
 * more read, not one each (a batch of head moves, a burst of draft changes);
 * a state equal to the last one sent is not sent again. Each read is made as
 * the caller is now (`callerNow`: a revoked token, an ended session or
 * membership is UNAUTHENTICATED); one that fails (that, or access gone:
 * NOT_FOUND) ends the subscription with that error.
 */
async function* follow<T>(
  ctx: TrpcContext,
  signal: AbortSignal | undefined,
  subscribe: (wake: () => void) => Array<() => void>,
  read: (ctx: ActionContext) => Promise<T>,
): AsyncGenerator<T> {
  let dirty = true;
  let wakeUp: (() => void) | null = null;
  const wake = () => {
    dirty = true;
    wakeUp?.();
  };
  const unsubscribes = subscribe(wake);
  signal?.addEventListener("abort", wake);
  try {
    let last: string | undefined;
    while (!signal?.aborted) {
      if (!dirty) await new Promise<void>((resolve) => (wakeUp = resolve));
      wakeUp = null;
      if (signal?.aborted) return;
      dirty = false;
      // Counted as under way from the caller's check on: the server's close waits for a read its client left behind.
      const state = await countUnderWay(
        ctx.db,
        callAction(async () => {
          const actor = await ctx.callerNow();
          if (!actor)
            throw new DomainError("UNAUTHENTICATED", "Your session or token no longer holds (or you left the workspace). Sign in again.");
          return read({ ...ctx, actor });
        }),
      );
      if (signal?.aborted) return;
      const json = JSON.stringify(state);
      if (json !== last) {
        last = json;
        yield state;
      }
    }
  } finally {
    signal?.removeEventListener("abort", wake);
    for (const unsubscribe of unsubscribes) unsubscribe();
  }
}

/** A subscription's input, checked by the action module's schema (VALIDATION_FAILED with field issues, as for tools). */
const liveInput = <T>(schema: z.ZodType<T>) => authenticated.input((raw: unknown) => parseInput(schema, raw));

/** Wakes on every head move of the document and every access change (hiding at the default branch reaches every branch). */
const onDocumentChanges = (documentId: string, wake: () => void) => [
  onHeadMoved((move) => {
    if (move.documentId === documentId) wake();
  }),
  onAccessChanged(wake),
];

export const appRouter = t.router({
  documents: toolMutation(tools.documents),
  read: toolQuery(tools.read),
  mergeRequests: toolMutation(tools.merge_requests),
  sections: toolMutation(tools.sections),
  uploadUrl: toolMutation(tools.upload_url),
  members: toolQuery(tools.members),
  comments: toolMutation(tools.comments),
  changesets: toolMutation(tools.changesets),
  search: toolQuery(tools.search),
  notifications: toolMutation(tools.notifications),
  /** Workspace administration (members, roles, invites); not an MCP tool. */
  workspace: toolMutation(workspaceTool),
  /** The caller's own API tokens; not an MCP tool. */
  apiTokens: toolMutation(apiTokensTool),
  /** The workspace's webhooks (admins, signed in); not an MCP tool. */
  webhooks: toolMutation(webhooksTool),
  /** `documents` `draft_status`, again on every head move, draft change (who edits, who is connected) and access change. */
  draftStatus: liveInput(branchInput).subscription(({ ctx, input, signal }) =>
    follow(
      ctx,
      signal,
      (wake) => [
        ...onDocumentChanges(input.documentId, wake),
        ctx.live.onDraftChanged((key) => {
          if (key.documentId === input.documentId && key.branchName === input.branchName) wake();
        }),
      ],
      (now) => runTool(tools.documents, now, { action: "draft_status", ...input }),
    ),
  ),
  /** The heads of the named branches, again whenever one of them moves (here, or in another process through Redis). */
  branchHeads: liveInput(branchHeadsInput).subscription(({ ctx, input, signal }) =>
    follow(
      ctx,
      signal,
      (wake) => [
        onHeadMoved((move) => {
          if (move.documentId === input.documentId && input.branchNames.includes(move.branchName)) wake();
        }),
        // The live layer hears head moves made by other processes too (through Redis), and tells of them as draft changes.
        ctx.live.onDraftChanged((key) => {
          if (key.documentId === input.documentId && input.branchNames.includes(key.branchName)) wake();
        }),
        onAccessChanged(wake),
      ],
      (now) => branchHeads(now, input),
    ),
  ),
  /** The branch's comment threads as its draft holds them, again on replies and resolutions, head moves and draft changes. */
  commentThreads: liveInput(branchInput).subscription(({ ctx, input, signal }) =>
    follow(
      ctx,
      signal,
      (wake) => [
        ...onDocumentChanges(input.documentId, wake),
        onThreadsChanged((documentId) => {
          if (documentId === input.documentId) wake();
        }),
        ctx.live.onDraftChanged((key) => {
          if (key.documentId === input.documentId && key.branchName === input.branchName) wake();
        }),
      ],
      (now) => commentThreads(now, input),
    ),
  ),
  /** The caller's unread count and newest items, again whenever their inbox changes (here, or in another process through Redis) and on access changes. */
  inbox: authenticated.subscription(({ ctx, signal }) =>
    follow(
      ctx,
      signal,
      (wake) => [
        onInboxChanged((userId) => {
          if (userId === ctx.actor.userId) wake();
        }),
        onAccessChanged(wake),
      ],
      async (now) => {
        const { notifications, unreadCount } = await runTool(tools.notifications, now, { action: "list", limit: 5 });
        return { unreadCount, newest: notifications };
      },
    ),
  ),
});

export type AppRouter = typeof appRouter;
export const createCaller = t.createCallerFactory(appRouter);
