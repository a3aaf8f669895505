/**
 * How a field is shown to MCP clients in tools/list, where every byte is paid
 * in tokens by every agent session: a shape one tool's schema lists in full
 * (the content blocks, in `sections`) is not listed again in every tool that
 * takes or returns it, and an argument's limits are not listed where they
 * tell an agent nothing. The zod schema itself still validates (every call
 * goes through the strict per-action parse); only the listing
 * (server/mcp/lean-schema.ts) reads the mark.
 */
import { z } from "zod";

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

/**
 * `schema`, validating as it does, listed as a plain string: a value an agent
 * only passes back as Quire gave it (a page's cursor, a contentHash, an
 * existing branch's name, a commit id or prefix from `log`). Its limits and
 * pattern refuse nothing Quire gives out.
 */
export const passedBack = <T extends z.ZodType>(schema: T): T => schema.meta({ [LISTED_AS]: { type: "string" } }) as T;

/**
 * `schema`, validating as it does, listed without its pattern: a syntax its
 * description already gives by name and example ("Media type, e.g.
 * image/png", "Base64 bytes", "Hex colour, e.g. #3366ff").
 */
export const patternSaidInWords = <T extends z.ZodType>(schema: T): T => {
  const {
    $schema: _dialect,
    pattern: _pattern,
    description: _description,
    ...listed
  } = z.toJSONSchema(schema, { io: "input", target: "draft-07" });
  return schema.meta({ [LISTED_AS]: listed }) as T;
};

/**
 * `schema`, validating as it does, listed as `own`: only the fields another
 * schema does not already give (`description` says which gives the rest), in
 * objects that admit the rest (loose objects). A list's items whose fields
 * are mostly one item's, as another action returns it, are so listed.
 */
export const shownElsewhereExcept = <T extends z.ZodType>(schema: T, description: string, own: z.ZodType): T => {
  const { $schema: _dialect, ...listed } = z.toJSONSchema(own, { io: "output", target: "draft-07" });
  return schema.meta({ [LISTED_AS]: listed, description }) as T;
};
