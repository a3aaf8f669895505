/**
 * How a field is shown to MCP clients in tools/list, where every byte is paid
 * in tokens by every agent session: a shape one tool's schema lists in full
 * (the content blocks, in `sections`) is not listed again in every tool that
 * takes or returns it. The zod schema itself still validates; only the
 * listing (server/mcp/lean-schema.ts) reads the mark.
 */
import type { z } from "zod";

/** The meta key (zod `.meta()`, emitted into the JSON Schema) under which a field carries the schema tools/list shows for it. */
export const LISTED_AS = "x-listed-as";

/** An array of objects, as tools/list shows a field marked `shownElsewhere`. */
const arrayOfObjects = { type: "array", items: { type: "object" } };

/**
 * `schema`, validating as it does, listed as an array of objects whose
 * fields another tool's schema gives: `description` says which.
 */
export const shownElsewhere = <T extends z.ZodType>(schema: T, description: string): T =>
  schema.meta({ [LISTED_AS]: arrayOfObjects, description }) as T;
