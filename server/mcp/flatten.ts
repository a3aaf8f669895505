/**
 * One flattener for the MCP face. A tool's input is a union of objects on
 * `action`, and its result differs per action too; agents' clients reject a
 * top-level oneOf, so both are shown as one object: every field once, with
 * what each action says about it and (where actions give it different types)
 * a union of those types.
 *
 * - `flatInputSchema`: the object McpServer registers as a tool's input.
 *   McpServer parses arguments with it before the handler runs, and the
 *   handler then runs the strict per-action parse (runTool) whose errors are
 *   VALIDATION_FAILED with field-level issues. So this object accepts any
 *   value in every field (a type error must reach the strict parse, not
 *   become the SDK's own error text, and a value must reach it untransformed)
 *   and carries each field's JSON Schema, derived from the zod types, as
 *   metadata: tools/list shows the types, the parse judges nothing.
 * - `mergeActionOutputs`: the tool's outputSchema, a real zod object (McpServer
 *   and the SDK client validate every result with it), typed so that
 *   `z.infer` is exactly the merge of the actions' result types.
 */
import { z } from "zod";

/** The description of a result field its name says all about (`named`). */
export const NAMED = "What its name says.";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[]; description?: string };

/** The SDK renders tools/list with draft-07 (zod-json-schema-compat); fields derived here use the same target. */
const toJson = (schema: z.ZodType, io: "input" | "output"): JsonSchema =>
  z.toJSONSchema(schema, { io, target: "draft-07", unrepresentable: "any" }) as JsonSchema;

/** One type a field takes across actions: its zod schema and its JSON Schema without the description. */
interface Variant {
  schema: z.ZodType;
  json: JsonSchema;
}

/** A field of a flattened object: its types, what each action says about it, and which actions require it. */
interface FlatField {
  variants: Variant[];
  descriptions: Array<{ action: string; description: string | undefined }>;
  requiredBy: string[];
  presentIn: string[];
}

const unwrapOptional = (schema: z.ZodType): z.ZodType =>
  schema instanceof z.ZodOptional ? unwrapOptional(schema.unwrap() as z.ZodType) : schema;

/** Every field of the given objects (one per action), with its distinct types judged by their JSON Schema. */
function fieldsAcrossActions(options: ReadonlyArray<{ action: string; object: z.ZodObject }>, io: "input" | "output") {
  const fields = new Map<string, FlatField>();
  /** Whether every action refuses fields it does not name. */
  let closed = true;
  for (const { action, object } of options) {
    const json = toJson(object, io);
    closed &&= json.additionalProperties === false;
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      if (name === "action") continue;
      const { description, ...shape } = property;
      const field = fields.get(name) ?? { variants: [], descriptions: [], requiredBy: [], presentIn: [] };
      fields.set(name, field);
      field.descriptions.push({ action, description });
      field.presentIn.push(action);
      if (json.required?.includes(name)) field.requiredBy.push(action);
      const key = JSON.stringify(shape);
      if (!field.variants.some((variant) => JSON.stringify(variant.json) === key)) {
        field.variants.push({ schema: unwrapOptional(object.shape[name] as z.ZodType), json: shape });
      }
    }
  }
  return { fields, closed };
}

/**
 * The description of a field across actions: the one text when all actions
 * agree, else each text once with the actions it belongs to, so no action's
 * meaning of the field is lost. The text most actions share (more than any
 * other, and at least two) comes first without its list of actions: it is
 * what the field means wherever no other text names the action.
 */
function mergedDescription(byAction: FlatField["descriptions"]): string | undefined {
  const actionsByText = new Map<string, string[]>();
  for (const { action, description } of byAction) {
    if (description) actionsByText.set(description, [...(actionsByText.get(description) ?? []), action]);
  }
  if (actionsByText.size <= 1) return [...actionsByText.keys()][0];
  const [first, second] = [...actionsByText].sort(([, a], [, b]) => b.length - a.length);
  const usual = first![1].length >= 2 && first![1].length > second![1].length ? first![0] : undefined;
  const byActions = [...actionsByText]
    .filter(([text]) => text !== usual && text !== NAMED)
    .map(([text, actions]) => `${actions.join(", ")}: ${text}`);
  // Where the name says the rest, only what some actions add is said.
  return [...(usual && usual !== NAMED ? [usual] : []), ...byActions].join(" — ");
}

const joinSentences = (...parts: Array<string | undefined>): string | undefined => parts.filter(Boolean).join(" ") || undefined;

/** Which actions require a field, in the fewer words: the actions that do, or (most do) the ones that do not. */
function requiredNote(requiredBy: string[], actions: string[]): string | undefined {
  if (requiredBy.length === 0) return undefined;
  if (requiredBy.length === actions.length) return "Required.";
  const others = actions.filter((action) => !requiredBy.includes(action));
  return others.length < requiredBy.length ? `Required except for: ${others.join(", ")}.` : `Required for: ${requiredBy.join(", ")}.`;
}

/** A field that accepts any value and shows `json` in tools/list. */
const describedOnly = (json: JsonSchema) => z.unknown().optional().meta(json);

/**
 * The object McpServer registers as a tool's input (see the file comment):
 * `action` is the enum of actions, every other field is optional and says
 * which actions require it; nothing is judged at parse time.
 */
export function flatInputSchema(input: z.ZodType): z.ZodObject {
  if (input instanceof z.ZodObject) {
    // One action: its own fields as they are.
    const json = toJson(input, "input");
    const shape = Object.fromEntries(Object.entries(json.properties ?? {}).map(([name, property]) => [name, describedOnly(property)]));
    return z.looseObject(shape).meta({ required: json.required ?? [], additionalProperties: json.additionalProperties ?? true });
  }
  if (!(input instanceof z.ZodDiscriminatedUnion)) throw new Error("A tool's input is an object or a union of objects on `action`.");
  const options = (input.options as z.ZodObject[]).map((object) => ({ action: String(object.shape.action!.value), object }));
  const actions = options.map((option) => option.action);
  const shape: Record<string, z.ZodType> = {
    action: describedOnly({ type: "string", enum: actions, description: "The operation." }),
  };
  const { fields, closed } = fieldsAcrossActions(options, "input");
  for (const [name, field] of fields) {
    const note = requiredNote(field.requiredBy, actions);
    const description = joinSentences(mergedDescription(field.descriptions), note);
    // Where actions give a field different types, each stays valid (anyOf), never just the first.
    const json = field.variants.length === 1 ? field.variants[0]!.json : { anyOf: field.variants.map((variant) => variant.json) };
    shape[name] = describedOnly(description ? { ...json, description } : json);
  }
  return z.looseObject(shape).meta({ required: ["action"], additionalProperties: !closed });
}

/** The shapes of the actions' results, by action. */
type ActionShapes = Record<string, z.ZodRawShape>;
type AnyActionShape<S extends ActionShapes> = S[keyof S];
type KeyOfAny<U> = U extends unknown ? keyof U : never;
type FieldOutput<U, K extends PropertyKey> = U extends unknown ? (K extends keyof U ? z.output<U[K] & z.ZodType> : never) : never;
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** What the merged object holds: a field every action returns is required, any other optional; each field's type is the union of the actions' types. */
export type MergedOutput<S extends ActionShapes> = Simplify<
  { [K in keyof AnyActionShape<S>]: FieldOutput<AnyActionShape<S>, K> } & {
    [K in Exclude<KeyOfAny<AnyActionShape<S>>, keyof AnyActionShape<S>>]?: FieldOutput<AnyActionShape<S>, K>;
  }
>;

/**
 * A tool's outputSchema from its actions' result objects: every field once,
 * optional unless every action returns it, a union where actions return
 * different types.
 */
export function mergeActionOutputs<S extends ActionShapes>(byAction: { [A in keyof S]: z.ZodObject<S[A]> }): z.ZodType<MergedOutput<S>> {
  const options = Object.entries(byAction).map(([action, object]) => ({ action, object: object as z.ZodObject }));
  const shape: Record<string, z.ZodType> = {};
  for (const [name, field] of fieldsAcrossActions(options, "output").fields) {
    const schemas = field.variants.map((variant) => variant.schema);
    const type = schemas.length === 1 ? schemas[0]! : z.union(schemas);
    // Which action returns what is the tool description's to say, once.
    const description = mergedDescription(field.descriptions);
    const described = description ? type.describe(description) : type;
    shape[name] = field.presentIn.length === options.length ? described : described.optional();
  }
  return z.object(shape) as unknown as z.ZodType<MergedOutput<S>>;
}

/**
 * An object whose fields another tool's outputSchema gives (`what`, e.g.
 * "merge_requests get"): one tool's schema is not sent again in another's.
 */
export const asReturnedBy = (what: string) => z.looseObject({}).describe(`As ${what} returns it.`);

/**
 * A result field its name says all about (`documentId`, `email`,
 * `createdAt`): every such field carries this one description, and tools/list
 * writes it once per tool (lean-schema.ts puts a field repeated whole under
 * `$defs`), not a few words restating each name.
 */
export const named = <T extends z.ZodType>(schema: T): T => schema.describe(NAMED) as T;
