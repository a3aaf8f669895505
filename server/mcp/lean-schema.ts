/**
 * Tool schemas as tools/list sends them: the JSON Schema zod derives, made
 * lean without changing what it accepts (every agent session pays for
 * tools/list in tokens before its first call):
 *
 * - a choice between objects (`oneOf`/`anyOf` whose every branch is an
 *   object, such as the content block variants or the kinds of conflict
 *   resolution) is written as one object: each field once, required where
 *   every branch requires it, a discriminator's constants as one enum. It
 *   accepts more than the branches did; nothing is lost for validation,
 *   because Quire validates every call with its own zod schemas (the strict
 *   per-action parse) and every result against them, and a client checking a
 *   result against the looser schema still accepts every true result. The
 *   same content blocks appear in six schemas, and this is what keeps them
 *   small in each;
 * - `type` arrays (zod's nullable fields, `["string","null"]`) become `anyOf`
 *   branches of one type each: clients that map tool schemas onto a
 *   single-type dialect (the OpenAPI subset of Gemini's function
 *   declarations) reject the array form (the Inspector's `--strict` warns);
 * - `additionalProperties: {}` (zod's "any value") is written `true`, which
 *   the Inspector does not count as an untyped schema;
 * - keywords that repeat what another keyword already says are dropped: the
 *   uuid regex zod writes next to `format: "uuid"`, and the ±2^53-1 bounds it
 *   writes on every integer (a JSON number cannot be more precise anyway);
 * - a subschema that occurs more than once (the content blocks of several
 *   fields, a view shared by several results) is written once under `$defs`
 *   and referenced as `#/$defs/<name>`, a local reference every client
 *   resolves (the Inspector's portability rules flag only remote ones),
 *   wherever that saves bytes. As a shape, each use keeps its own
 *   description next to the reference; whole, description and all, a field
 *   several objects of one schema share (above all the result fields their
 *   names say all about, flatten.ts `named`) is written and described once.
 *   An entry is named after what it is, shortly where it is referenced most
 *   (`strOrNull`, `uuid`, `n` and `nOrNull` for the named fields), else after
 *   the property it was first found under;
 * - a choice whose branch is itself a choice (a field one action returns
 *   nullable and another not) is one choice, each branch once;
 * - `minLength: 1` next to a pattern no empty string matches says nothing
 *   the pattern does not;
 * - `$schema` is not sent: MCP takes a schema without it as JSON Schema
 *   2020-12, and nothing here reads differently there (`$defs` is 2020-12's
 *   own keyword);
 * - an empty `required` list, `additionalProperties: true` (JSON Schema's
 *   default) and `propertyNames: {type: "string"}` (every JSON key is one)
 *   say nothing and are dropped; so are the descriptions of a choice's
 *   branches when the choice has its own (a result field several actions
 *   return: its description already says what each means), and a
 *   described choice of string enums and constants is one enum (in a result
 *   with `null` among its values where null is a branch);
 * - a field marked `shownElsewhere` (server/core/schema-listing.ts) is sent
 *   as an array of objects whose description names the tool that shows
 *   their fields: the content blocks and merge resolutions are listed in
 *   full once, not again in every tool that takes or returns them; one
 *   marked `shownElsewhereExcept` lists only the fields the other schema
 *   does not give (a listed changeset's items); one marked `passedBack` (a
 *   cursor, a contentHash, an existing branch's name, a commit reference) is
 *   a plain string, and one marked `patternSaidInWords` has no pattern.
 *
 * Results (`use: "output"`) are only ever checked by a client's validator,
 * never mapped onto a function-calling dialect, so they lose more:
 * `additionalProperties: false` below the result's own object (a result
 * never has fields its schema does not name, and a looser check still
 * accepts every true result), a
 * `required` list naming every property of its object (in a result a nested
 * object's fields are all present unless its schema lists which are; null
 * where they are nullable), `type` beside `enum` or `const`, and below the
 * result's own object the `type` its other keywords imply (fields or a
 * record's values: an object; items: an array), which only ever loosens the
 * check.
 */

import { LISTED_AS } from "@/server/core/schema-listing";
import { NAMED } from "./flatten";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonSchema = { [key: string]: Json };

/** Which side of a tool a schema describes: its arguments or its result. */
export type SchemaUse = "input" | "output";

const isObject = (value: Json | undefined): value is JsonSchema => typeof value === "object" && value !== null && !Array.isArray(value);

/** The integer bounds zod writes on every `.int()` (Number.MAX_SAFE_INTEGER): they constrain nothing a JSON number could carry. */
const SAFE_INTEGER_BOUND = Number.MAX_SAFE_INTEGER;

/** The schema with every choice between objects as one object, and without the keywords another keyword already implies. */
function withoutRedundantKeywords(node: Json, use: SchemaUse): Json {
  if (Array.isArray(node)) return node.map((child) => withoutRedundantKeywords(child, use));
  if (!isObject(node)) return node;
  const listed = node[LISTED_AS];
  if (isObject(listed))
    return withoutRedundantKeywords(node.description === undefined ? listed : { ...listed, description: node.description }, use);
  const lean: JsonSchema = {};
  const { type, ...untyped } = node;
  if (Array.isArray(type)) {
    // Keywords of one type stay with its branch (a string's maxLength with the string); annotations stay outside.
    const { description, ...constraints } = untyped;
    const branches = type.map((one) => withoutRedundantKeywords(one === "null" ? { type: one } : { type: one, ...constraints }, use));
    return description === undefined ? { anyOf: branches } : { anyOf: branches, description };
  }
  const leanChild = (child: Json) => withoutRedundantKeywords(child, use);
  const object = asOneObject(node);
  const names = isObject(object.properties) ? Object.keys(object.properties) : [];
  for (const [key, value] of Object.entries(object)) {
    if (key === "$schema") continue;
    if (key === "required" && Array.isArray(value) && value.length === 0) continue;
    if (use === "output" && isRedundantInResult(key, value, object, names)) continue;
    if (key === "pattern" && node.format === "uuid") continue;
    // A pattern no empty string matches already says minLength 1.
    if (key === "minLength" && value === 1 && typeof node.pattern === "string" && !new RegExp(node.pattern, "u").test("")) continue;
    if ((key === "maximum" && value === SAFE_INTEGER_BOUND) || (key === "minimum" && value === -SAFE_INTEGER_BOUND)) continue;
    // zod writes "any value" as `{}`, and `true` is what JSON Schema assumes anyway: either way, nothing to send.
    if (key === "additionalProperties" && (value === true || (isObject(value) && Object.keys(value).length === 0))) continue;
    // Every key of a JSON object is a string: `propertyNames: {type: "string"}` (zod's records) constrains nothing.
    if (key === "propertyNames" && isObject(value) && Object.keys(value).length === 1 && value.type === "string") continue;
    // A choice under a description of its own (a result field several actions return): the branches need none.
    if (key === "anyOf" && Array.isArray(value) && typeof object.description === "string") {
      const branches = value.map((branch) => (isObject(branch) ? shapeOf(branch) : branch));
      const merged = oneEnum(branches, use);
      if (merged) Object.assign(lean, merged);
      else lean[key] = oneChoice(leanChild(branches) as Json[]);
      continue;
    }
    // A choice of choices is one choice (a field one action returns nullable and another not): each branch once.
    if (key === "anyOf" && Array.isArray(value)) {
      lean[key] = oneChoice(leanChild(value) as Json[]);
      continue;
    }
    // Inside `properties` (and `$defs`) keys are names, not keywords: only their values are schemas.
    lean[key] = key === "properties" || key === "$defs" ? mapValues(value, leanChild) : leanChild(value);
  }
  return lean;
}

/** The branches of a choice with every branch that is itself only a choice opened up, and each distinct branch once. */
function oneChoice(branches: Json[]): Json[] {
  const opened = branches.flatMap((branch) =>
    isObject(branch) && Array.isArray(branch.anyOf) && Object.keys(branch).length === 1 ? branch.anyOf : [branch],
  );
  return [...new Map(opened.map((branch) => [JSON.stringify(branch), branch])).values()];
}

/**
 * A choice between string enums and constants (actions returning a status,
 * one of them always the same; a resolution that is a side or `merged`) as
 * one enum, which accepts the same values; in a result, a null branch too (a
 * nullable permission) goes into the enum as `null`. An argument's enum keeps
 * its `type`, which single-type dialects need. Undefined for any other choice.
 */
function oneEnum(branches: Json[], use: SchemaUse): JsonSchema | undefined {
  const values: Array<string | null> = [];
  for (const branch of branches) {
    if (!isObject(branch) || !Object.keys(branch).every((key) => key === "enum" || key === "const" || key === "type")) return undefined;
    if (use === "output" && branch.type === "null" && Object.keys(branch).length === 1) {
      values.push(null);
      continue;
    }
    if (branch.type !== undefined && branch.type !== "string") return undefined;
    const listed = Array.isArray(branch.enum) ? branch.enum : [branch.const];
    if (!listed.every((value) => typeof value === "string")) return undefined;
    values.push(...(listed as string[]));
  }
  const choice = [...new Set(values)];
  return use === "output" ? { enum: choice } : { type: "string", enum: choice };
}

/** Keywords a result's schema can do without (see the file comment); `names` are the object's properties. */
function isRedundantInResult(key: string, value: Json, node: JsonSchema, names: string[]): boolean {
  if (key === "additionalProperties") return value === false;
  if (key === "properties") return names.length === 0;
  if (key === "type") return "enum" in node || "const" in node || impliedType(node) === value;
  if (key !== "required" || !Array.isArray(value)) return false;
  return value.length === names.length && names.every((name) => value.includes(name));
}

/** The type a result's subschema implies by its other keywords: fields (or a record's values) for an object, items for an array. */
function impliedType(node: JsonSchema): string | undefined {
  const properties = isObject(node.properties) && Object.keys(node.properties).length > 0;
  if (properties || (isObject(node.additionalProperties) && Object.keys(node.additionalProperties).length > 0)) return "object";
  return node.items === undefined ? undefined : "array";
}

const mapValues = (value: Json, map: (node: Json) => Json): Json =>
  isObject(value) ? Object.fromEntries(Object.entries(value).map(([name, child]) => [name, map(child)])) : value;

const isObjectSchema = (node: Json): node is JsonSchema => isObject(node) && node.type === "object" && isObject(node.properties);

/** The object branches of a choice, nested choices opened up; undefined when some branch is not an object. */
function objectBranches(node: JsonSchema): JsonSchema[] | undefined {
  const choice = Array.isArray(node.oneOf) ? node.oneOf : Array.isArray(node.anyOf) ? node.anyOf : undefined;
  if (!choice) return isObjectSchema(node) ? [node] : undefined;
  const branches: JsonSchema[] = [];
  for (const branch of choice) {
    const inner = isObject(branch) ? objectBranches(branch) : undefined;
    if (!inner) return undefined;
    branches.push(...inner);
  }
  return branches;
}

/** One field's schemas across branches, as one: the same schema, one enum of string constants, or a choice of the distinct ones. */
function mergedField(uses: JsonSchema[]): JsonSchema {
  const descriptions = [...new Set(uses.map((use) => use.description).filter((text): text is string => typeof text === "string"))];
  const shapes = [...new Map(uses.map((use) => [JSON.stringify(shapeOf(use)), shapeOf(use)])).values()];
  const constants = shapes.every(
    (shape) => typeof shape.const === "string" && Object.keys(shape).every((key) => key === "const" || key === "type"),
  );
  const shape =
    shapes.length === 1 ? shapes[0]! : constants ? { type: "string", enum: shapes.map((one) => one.const as string) } : { anyOf: shapes };
  return descriptions.length === 0 ? shape : { ...shape, description: descriptions.join(" ") };
}

/** A choice between objects as one object (see the file comment); any other schema as it is. */
function asOneObject(node: JsonSchema): JsonSchema {
  const branches = objectBranches(node);
  if (!branches || branches.length < 2) return node;
  const uses = new Map<string, JsonSchema[]>();
  for (const branch of branches) {
    for (const [name, property] of Object.entries(branch.properties as JsonSchema)) {
      uses.set(name, [...(uses.get(name) ?? []), property as JsonSchema]);
    }
  }
  const requiredBy = (name: string) => branches.every((branch) => Array.isArray(branch.required) && branch.required.includes(name));
  const merged: JsonSchema = {
    type: "object",
    properties: Object.fromEntries([...uses].map(([name, schemas]) => [name, mergedField(schemas)])),
    required: [...uses.keys()].filter(requiredBy),
  };
  if (branches.every((branch) => branch.additionalProperties === false)) merged.additionalProperties = false;
  const { oneOf: _one, anyOf: _any, ...rest } = node;
  return { ...rest, ...merged };
}

/** A subschema without its description: what two uses of the same shape have in common. */
function shapeOf(node: JsonSchema): JsonSchema {
  const { description: _own, ...shape } = node;
  return shape;
}

/** zod's nullable string, the shape repeated most, as `leanSchema` writes it. */
const NULLABLE_STRING = JSON.stringify({ anyOf: [{ type: "string" }, { type: "null" }] });

/** The property a subschema at `path` describes (or the last name on the path). */
const propertyAt = (path: string[]) => [...path].reverse().find((step) => !/^\d+$/.test(step) && !KEYWORDS_IN_PATHS.has(step));

/** What kind of value a shape takes, for naming a `$defs` entry: "" for a plain string. */
function kindOf(shape: JsonSchema): string {
  const json = JSON.stringify(shape);
  if (json === NULLABLE_STRING || json === JSON.stringify({ $ref: "#/$defs/strOrNull" })) return "OrNull";
  if (shape.type === "string" && shape.format === "uuid" && Object.keys(shape).length === 2) return "Uuid";
  if (shape.type === "string" && Object.keys(shape).length === 1) return "";
  if (shape.type === "number" || shape.type === "integer") return "Num";
  if (shape.type === "boolean") return "Bool";
  return "Other";
}

/**
 * What a `$defs` entry is called (every reference repeats the name, so the
 * most used are short): `strOrNull` for the nullable string, `uuid` for a
 * uuid; a field its name says all about (flatten.ts `named`), written whole,
 * `n` and its kind (`n`, `nOrNull`, `nNum`); else the property it was first
 * found under.
 */
function nameFor(candidate: Candidate, taken: Set<string>): string {
  const key = JSON.stringify(candidate.schema);
  const base =
    key === NULLABLE_STRING && !candidate.described
      ? "strOrNull"
      : candidate.described && candidate.schema.description === NAMED
        ? `n${kindOf(shapeOf(candidate.schema))}`
        : !candidate.described && kindOf(candidate.schema) === "Uuid"
          ? "uuid"
          : (propertyAt(candidate.path) ?? "schema");
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}${n}`;
  return name;
}

const KEYWORDS_IN_PATHS = new Set(["properties", "items", "anyOf", "oneOf", "allOf", "additionalProperties", "$defs"]);

/**
 * A candidate for `$defs`: a subschema that occurs more than once, either as
 * a shape (its description left beside each reference: `described` false) or
 * whole, description and all (`described` true: a field several objects of
 * a result share, such as a document's id in each list item and on the
 * result itself, is then written and described once).
 */
interface Candidate {
  schema: JsonSchema;
  described: boolean;
  count: number;
  size: number;
  path: string[];
}

/**
 * Bytes that writing a candidate (`size` bytes of JSON) once as
 * `$defs.<name>` saves over `count` uses: each use's keywords (and, written
 * whole, its description) become `"$ref":"#/$defs/<name>"`, and the entry
 * costs its name and the schema.
 */
function hoistingSaves({ count, size }: Candidate, name: string): number {
  const perUse = size - 2 - `"$ref":"#/$defs/${name}"`.length;
  return count * perUse - (`"${name}":`.length + size + 1);
}

/** The key under which a candidate is counted: whole subschemas and shapes apart. */
const candidateKey = (schema: JsonSchema, described: boolean) => `${described ? "=" : "~"}${JSON.stringify(schema)}`;

/** Every subschema below the root, as a shape and (when described) whole, with how often each occurs and where it first does. */
function repeatedShapes(root: JsonSchema): Map<string, Candidate> {
  const candidates = new Map<string, Candidate>();
  const count = (schema: JsonSchema, described: boolean, path: string[]) => {
    const key = candidateKey(schema, described);
    const seen = candidates.get(key) ?? { schema, described, count: 0, size: JSON.stringify(schema).length, path };
    candidates.set(key, seen);
    seen.count += 1;
  };
  const visit = (node: Json, path: string[]) => {
    if (Array.isArray(node)) {
      for (const [index, child] of node.entries()) visit(child, [...path, String(index)]);
      return;
    }
    if (!isObject(node)) return;
    if (path.length > 0) {
      if (node.$ref === undefined) count(shapeOf(node), false, path);
      if (typeof node.description === "string") count(node, true, path);
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === "properties" || key === "$defs") {
        if (isObject(child)) for (const [name, property] of Object.entries(child)) visit(property, [...path, key, name]);
      } else if (isObject(child) || Array.isArray(child)) visit(child, [...path, key]);
    }
  };
  visit(root, []);
  return candidates;
}

/** Replaces every use of `candidate` under `node` by a reference to `ref`, keeping each use's description unless it is written whole. */
function referTo(node: Json, candidate: Candidate, ref: string): Json {
  if (Array.isArray(node)) return node.map((child) => referTo(child, candidate, ref));
  if (!isObject(node)) return node;
  const key = candidateKey(candidate.schema, candidate.described);
  if (candidate.described && candidateKey(node, true) === key) return { $ref: ref };
  if (!candidate.described && node.$ref === undefined && candidateKey(shapeOf(node), false) === key) {
    return node.description === undefined ? { $ref: ref } : { $ref: ref, description: node.description };
  }
  const replaced: JsonSchema = {};
  for (const [name, child] of Object.entries(node)) {
    replaced[name] =
      name === "properties" || name === "$defs"
        ? mapValues(child, (value) => referTo(value, candidate, ref))
        : referTo(child, candidate, ref);
  }
  return replaced;
}

/** Writes each repeated subschema once under `$defs`, the one that saves most first, until none saves anything. */
function hoistRepeatedShapes(schema: JsonSchema): JsonSchema {
  let root = schema;
  const taken = new Set<string>();
  for (;;) {
    let best: { candidate: Candidate; name: string; saving: number } | undefined;
    for (const candidate of repeatedShapes(root).values()) {
      if (candidate.count < 2) continue;
      const name = nameFor(candidate, taken);
      const saving = hoistingSaves(candidate, name);
      if (saving > 0 && (!best || saving > best.saving)) best = { candidate, name, saving };
    }
    if (!best) return root;
    const { name, candidate } = best;
    taken.add(name);
    const { $defs, ...rest } = referTo(root, candidate, `#/$defs/${name}`) as JsonSchema;
    root = { ...rest, $defs: { ...(isObject($defs) ? $defs : {}), [name]: candidate.schema } };
  }
}

/** The schema tools/list sends for a zod-derived JSON Schema of a tool's arguments or result (see the file comment). */
export function leanSchema(schema: JsonSchema, use: SchemaUse): JsonSchema {
  const { type: _implied, ...rest } = withoutRedundantKeywords(schema, use) as JsonSchema;
  // A tool's schema says it is an object, as MCP requires, even where its fields imply it.
  const lean: JsonSchema = schema.type === undefined ? rest : { type: schema.type, ...rest };
  // The result itself still refuses a field no action returns: the one place a client's check of a closed result catches a wrong tool's answer.
  if (schema.additionalProperties === false) lean.additionalProperties = false;
  return hoistRepeatedShapes(lean);
}
