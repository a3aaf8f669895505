/**
 * A tool is one zod input schema plus its handlers: one handler per action
 * for a schema that is a union on `action`, or one handler for a tool without
 * actions. Each action's result type is inferred from its handler, and one
 * runner (`runTool`) validates and runs every tool on every face (MCP, tRPC,
 * the web app's bridge, the CLI).
 */
import { z } from "zod";
import { DomainError, isDomainError, validationError } from "@/server/core/errors";
import { isUnstorable } from "@/server/core/limits";
import { passedBack } from "@/server/core/schema-listing";

/** A handler as the tool sees it; each module types its own context and input. */
type Handler = (ctx: never, input: never) => Promise<unknown>;

type ActionName<S extends z.ZodType> = z.output<S> extends { action: string } ? z.output<S>["action"] : never;

/** Exactly one handler per action of the schema, each taking that action's parsed input. */
type HandlersFor<S extends z.ZodType> = {
  [A in ActionName<S>]: (ctx: never, input: Extract<z.output<S>, { action: A }>) => Promise<unknown>;
};

interface ToolBase<S extends z.ZodType> {
  name: string;
  description: string;
  input: S;
  /** Whether no action of the tool changes state (MCP annotation; tRPC query vs mutation). */
  readOnly: boolean;
}

export interface ActionsTool<S extends z.ZodType = z.ZodType, H extends Record<string, Handler> = Record<string, Handler>>
  extends ToolBase<S> {
  handlers: H;
}

export interface SingleTool<S extends z.ZodType = z.ZodType, F extends Handler = Handler> extends ToolBase<S> {
  handle: F;
}

export type AnyTool = ActionsTool | SingleTool;

/** The context a handler takes: for several handlers, what satisfies them all. */
type ContextOf<F> = F extends (ctx: infer C, input: never) => unknown ? C : never;

export type ToolContext<T extends AnyTool> =
  T extends ActionsTool<z.ZodType, infer H> ? ContextOf<H[keyof H]> : T extends SingleTool<z.ZodType, infer F> ? ContextOf<F> : never;

/** What each action of a tool returns, by action name. */
export type ToolResults<T extends ActionsTool> = { [A in keyof T["handlers"]]: Awaited<ReturnType<T["handlers"][A]>> };

/** The result of running `tool` with input `I`: per action for a tool with actions. */
export type ToolResult<T extends AnyTool, I> = T extends ActionsTool
  ? I extends { action: infer A extends keyof T["handlers"] }
    ? ToolResults<T>[A]
    : never
  : T extends SingleTool<z.ZodType, infer F>
    ? Awaited<ReturnType<F>>
    : never;

export function defineTool<S extends z.ZodType, const H extends HandlersFor<S>>(
  definition: ToolBase<S> & { handlers: H },
): ActionsTool<S, H>;
export function defineTool<S extends z.ZodType, F extends (ctx: never, input: z.output<S>) => Promise<unknown>>(
  definition: ToolBase<S> & { handle: F },
): SingleTool<S, F>;
export function defineTool(definition: AnyTool): AnyTool {
  return definition;
}

/**
 * Work under way, per database (the contexts' `db`): tool runs and a
 * subscription's reads. A server's close waits for what is under way on its
 * database, since such work can outlive the request that started it (a page
 * render whose socket closed, a subscription's read after its client went).
 * Kept on globalThis: the Next.js bundle holds its own copy of this module,
 * and the runs its pages start (through the bridge's database) count too.
 */
const RUNS_KEY = Symbol.for("quire.workUnderWay");
type RunsByDatabase = WeakMap<object, Set<Promise<unknown>>>;
const holder = globalThis as { [RUNS_KEY]?: RunsByDatabase };
holder[RUNS_KEY] ??= new WeakMap();
const runsUnderWay: RunsByDatabase = holder[RUNS_KEY];

/** The work under way on a database now. */
export function workUnderWay(db: object): ReadonlySet<Promise<unknown>> {
  return runsUnderWay.get(db) ?? new Set();
}

/** Counts `work` as under way on `db` until it settles; returns it. */
export function countUnderWay<T>(db: object, work: Promise<T>): Promise<T> {
  const runs = runsUnderWay.get(db) ?? new Set<Promise<unknown>>();
  runsUnderWay.set(db, runs);
  runs.add(work);
  const settled = () => {
    runs.delete(work);
  };
  work.then(settled, settled);
  return work;
}

/**
 * Validates raw input and runs the tool's handler for it: the one way any
 * face runs a tool. Invalid input never reaches a handler; a failure that is
 * not a DomainError is logged and reported as INTERNAL.
 */
export async function runTool<T extends AnyTool, const I extends z.input<T["input"]>>(
  tool: T,
  ctx: ToolContext<T>,
  raw: I,
): Promise<ToolResult<T, I>>;
export async function runTool<T extends AnyTool>(tool: T, ctx: ToolContext<T>, raw: unknown): Promise<unknown>;
export async function runTool(tool: AnyTool, ctx: unknown, raw: unknown): Promise<unknown> {
  const input = parseInput(tool.input, raw) as { action?: string };
  const handler = ("handle" in tool ? tool.handle : tool.handlers[input.action!]) as (ctx: unknown, input: unknown) => Promise<unknown>;
  const running = (async () => {
    try {
      return await handler(ctx, input);
    } catch (error) {
      if (isDomainError(error)) throw error;
      console.error(`[quire] ${tool.name}${input.action ? ` ${input.action}` : ""} failed`, error);
      throw new DomainError("INTERNAL", "Quire hit an internal error; nothing was changed. Retry, and report it if it persists.");
    }
  })();
  const db = (ctx as { db?: object }).db;
  return db ? countUnderWay(db, running) : running;
}

/** Deeper than any schema of ours goes; deeper input is refused before zod (which recurses) sees it. */
export const MAX_INPUT_DEPTH = 32;

type ShapeProblem = { path: string; message: string };

/**
 * The first reason raw input cannot be what any tool accepts, found without
 * recursion (so no nesting depth can overflow the stack): nesting deeper than
 * MAX_INPUT_DEPTH, or a string or key that could not be stored.
 */
function shapeProblem(raw: unknown): ShapeProblem | null {
  // Each pending value knows its parent, so a path is built only for the one problem reported.
  type Pending = { value: unknown; key: string; depth: number; parent: Pending | null };
  const pathOf = (at: Pending | null, key?: string): string => {
    const keys = key === undefined ? [] : [key];
    for (let node = at; node?.parent; node = node.parent) keys.unshift(node.key);
    return keys.join(".");
  };
  const pending: Pending[] = [{ value: raw, key: "", depth: 0, parent: null }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value } = next;
    if (typeof value === "string") {
      if (isUnstorable(value))
        return { path: pathOf(next), message: "contains a NUL character or an unpaired UTF-16 surrogate, which cannot be stored" };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (next.depth >= MAX_INPUT_DEPTH) return { path: pathOf(next), message: `nests deeper than ${MAX_INPUT_DEPTH} levels` };
    for (const key in value) {
      if (isUnstorable(key)) return { path: pathOf(next, key), message: "is a key with a NUL character or an unpaired UTF-16 surrogate" };
      pending.push({ value: (value as Record<string, unknown>)[key], key, depth: next.depth + 1, parent: next });
    }
  }
  return null;
}

/** Validates raw input against a schema; invalid input never reaches an action. Every runner parses through here. */
export function parseInput<Output>(schema: z.ZodType<Output>, raw: unknown): Output {
  const problem = shapeProblem(raw);
  if (problem) {
    throw new DomainError("VALIDATION_FAILED", `Invalid parameters: ${problem.path || "input"} ${problem.message}. Fix it and retry.`, {
      issues: [problem],
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw validationError(parsed.error);
  return parsed.data;
}

export const uuidSchema = z.string().uuid("must be a UUID");

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;
export const pageLimitSchema = z.number().int().min(1).max(MAX_PAGE_SIZE).optional().describe(`Page size (default ${DEFAULT_PAGE_SIZE}).`);
export const cursorSchema = passedBack(z.string().max(100_000)).optional().describe("A page's nextCursor.");

/** Opaque pagination cursors: base64url JSON, validated on the way back in. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export function decodeCursor<T>(cursor: string, schema: z.ZodType<T>): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new DomainError("VALIDATION_FAILED", "cursor is not valid: pass `nextCursor` exactly as a previous page returned it.", {
      issues: [{ path: "cursor", message: "not a cursor this list returned" }],
    });
  }
  return parsed.data;
}

/**
 * One page of rows the caller may see, from a keyset-ordered source where some
 * rows are filtered out after loading (by permission): keeps fetching batches
 * until the page is full or the source ends. `position` is the keyset
 * position of a row; the next page resumes after the last row returned.
 */
export async function visiblePage<Row, Position>(options: {
  limit: number;
  start: Position | undefined;
  fetch: (after: Position | undefined, batchSize: number) => Promise<Row[]>;
  visible: (row: Row) => boolean | Promise<boolean>;
  position: (row: Row) => Position;
}): Promise<{ rows: Row[]; next: Position | null }> {
  const rows: Row[] = [];
  let after = options.start;
  for (;;) {
    const batch = await options.fetch(after, options.limit + 1);
    for (const row of batch) {
      if (!(await options.visible(row))) continue;
      if (rows.length === options.limit) return { rows, next: options.position(rows[rows.length - 1]!) };
      rows.push(row);
    }
    const last = batch[batch.length - 1];
    if (batch.length <= options.limit || last === undefined) return { rows, next: null };
    after = options.position(last);
  }
}
