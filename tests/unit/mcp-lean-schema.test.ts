/** What tools/list sends: schemas made lean (server/mcp/lean-schema.ts) without changing what a true result or a valid call looks like. */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { passedBack, patternSaidInWords, shownElsewhere, shownElsewhereExcept } from "@/server/core/schema-listing";
import { NAMED, named } from "@/server/mcp/flatten";
import { type JsonSchema, leanSchema } from "@/server/mcp/lean-schema";
import type { JsonSchemaType } from "@modelcontextprotocol/sdk/validation/types.js";

const toJson = (schema: z.ZodType, io: "input" | "output") => z.toJSONSchema(schema, { io, target: "draft-07" }) as JsonSchema;

const result = z.strictObject({
  kind: z.enum(["a", "b"]).describe("The kind."),
  owner: z.strictObject({ userId: z.string(), name: z.string().nullable() }).describe("Who owns it."),
  note: z.string().nullable().describe("A note, or null."),
  other: z.string().nullable().describe("Another, or null."),
  // Enough nullable strings for writing the shape once to pay.
  ...Object.fromEntries(["n1", "n2", "n3", "n4", "n5"].map((name) => [name, z.string().nullable().describe(name)])),
  maybe: z.strictObject({ x: z.string(), y: z.string().optional() }).optional().describe("Sometimes."),
});

describe("leanSchema", () => {
  test("a result: no $schema, no type beside enum, nested objects without additionalProperties:false or a required list naming every field", () => {
    const lean = leanSchema(toJson(result, "output"), "output");
    expect(lean.$schema).toBeUndefined();
    expect(lean.additionalProperties).toBe(false);
    const properties = lean.properties as Record<string, JsonSchema>;
    expect(properties.kind).toEqual({ enum: ["a", "b"], description: "The kind." });
    expect(properties.owner!.required).toBeUndefined();
    expect(properties.owner!.additionalProperties).toBeUndefined();
    // A nested object with an optional field keeps the list of those it always has.
    expect(properties.maybe!.required).toEqual(["x"]);
    // The nullable string is written once, under a name that says what it is.
    expect(properties.note).toEqual({ $ref: "#/$defs/strOrNull", description: "A note, or null." });
  });

  test("a lean result schema accepts what the full one does, and refuses a field the result does not have", () => {
    const validate = new AjvJsonSchemaValidator().getValidator(leanSchema(toJson(result, "output"), "output") as JsonSchemaType);
    const value = { kind: "a", owner: { userId: "u", name: null }, note: null, other: "o", n1: null, n2: "", n3: null, n4: null, n5: null };
    expect(validate(value).valid).toBe(true);
    expect(validate({ ...value, kind: "c" }).valid).toBe(false);
    expect(validate({ ...value, stray: 1 }).valid).toBe(false);
  });

  test("arguments keep type beside enum, additionalProperties:false and required lists", () => {
    const lean = leanSchema(toJson(result, "input"), "input");
    const properties = lean.properties as Record<string, JsonSchema>;
    expect(properties.kind).toEqual({ type: "string", enum: ["a", "b"], description: "The kind." });
    expect(properties.owner!.required).toEqual(["userId", "name"]);
    expect(properties.owner!.additionalProperties).toBe(false);
  });

  test("a field shown elsewhere is listed as an array of objects with its own description, and still validates in full", () => {
    const block = z.strictObject({ text: z.string().describe("The text.") });
    const input = z.strictObject({ blocks: shownElsewhere(z.array(block), "Blocks, as `other` takes them.") });
    const lean = leanSchema(toJson(input, "input"), "input");
    expect((lean.properties as Record<string, JsonSchema>).blocks).toEqual({
      type: "array",
      items: { type: "object" },
      description: "Blocks, as `other` takes them.",
    });
    expect(input.safeParse({ blocks: [{ text: 1 }] }).success).toBe(false);
  });

  test("a list shown elsewhere except some fields lists only those, leaned, and admits the rest", () => {
    const summary = { id: named(z.string()), title: named(z.string()) };
    const items = z.array(z.object({ id: named(z.string()) })).describe("Its items, by id.");
    const output = z.strictObject({
      list: shownElsewhereExcept(
        z.array(z.object({ ...summary, items })),
        "Other fields as `get` returns them.",
        z.array(z.looseObject({ items })),
      ),
    });
    const lean = leanSchema(toJson(output, "output"), "output");
    expect((lean.properties as Record<string, JsonSchema>).list).toEqual({
      items: {
        properties: { items: { items: { properties: { id: { type: "string", description: NAMED } } }, description: "Its items, by id." } },
      },
      description: "Other fields as `get` returns them.",
    });
    const validate = new AjvJsonSchemaValidator().getValidator(lean as JsonSchemaType);
    expect(validate({ list: [{ id: "a", title: "t", items: [{ id: "b" }] }] }).valid).toBe(true);
    expect(validate({ list: [{ id: "a", title: "t", items: [{ id: 1 }] }] }).valid).toBe(false);
    expect(output.safeParse({ list: [{ id: "a", items: [] }] }).success).toBe(false);
  });

  test("a value passed back is listed as a plain string, a pattern said in words is not listed; both still validate", () => {
    const input = z.strictObject({
      cursor: passedBack(z.string().max(10)).optional().describe("A page's nextCursor."),
      colour: patternSaidInWords(
        z
          .string()
          .max(7)
          .regex(/^#[0-9a-f]{6}$/),
      ).describe("Hex colour, e.g. #3366ff."),
    });
    const properties = leanSchema(toJson(input, "input"), "input").properties as Record<string, JsonSchema>;
    expect(properties.cursor).toEqual({ type: "string", description: "A page's nextCursor." });
    expect(properties.colour).toEqual({ type: "string", maxLength: 7, description: "Hex colour, e.g. #3366ff." });
    expect(input.safeParse({ cursor: "x".repeat(11), colour: "#3366ff" }).success).toBe(false);
    expect(input.safeParse({ colour: "blue" }).success).toBe(false);
  });

  test("a described choice of string enums and constants is one enum: typed in an argument, with null in a result", () => {
    const input = z.strictObject({ resolution: z.union([z.enum(["source", "target"]), z.literal("merged")]).describe("Which.") });
    expect((leanSchema(toJson(input, "input"), "input").properties as Record<string, JsonSchema>).resolution).toEqual({
      type: "string",
      enum: ["source", "target", "merged"],
      description: "Which.",
    });
    const output = z.strictObject({ reviewedAs: z.enum(["person", "agent"]).nullable().describe("Who; null while pending.") });
    const lean = leanSchema(toJson(output, "output"), "output");
    expect((lean.properties as Record<string, JsonSchema>).reviewedAs).toEqual({
      enum: ["person", "agent", null],
      description: "Who; null while pending.",
    });
    const validate = new AjvJsonSchemaValidator().getValidator(lean as JsonSchemaType);
    expect(validate({ reviewedAs: null }).valid).toBe(true);
    expect(validate({ reviewedAs: "robot" }).valid).toBe(false);
  });
  test("result fields their names say all about refer to one described $defs entry; a nested object or array says no type its fields or items imply", () => {
    const item = z.object({ documentId: named(z.string()), path: named(z.string()), note: named(z.string().nullable()) });
    const listed = z.strictObject({
      documentId: named(z.string()),
      createdAt: named(z.string()),
      items: z.array(item).describe("Its items."),
      owner: z.object({ userId: named(z.string()), authorName: named(z.string().nullable()) }).describe("Who owns it."),
      open: z.looseObject({}).describe("Any object."),
    });
    const lean = leanSchema(toJson(listed, "output"), "output");
    const properties = lean.properties as Record<string, JsonSchema>;
    expect(lean.type).toBe("object");
    expect(properties.documentId).toEqual({ $ref: "#/$defs/n" });
    expect(properties.createdAt).toEqual({ $ref: "#/$defs/n" });
    expect((lean.$defs as Record<string, JsonSchema>).n).toEqual({ type: "string", description: NAMED });
    expect(properties.owner).toEqual({
      properties: { userId: { $ref: "#/$defs/n" }, authorName: { $ref: "#/$defs/nOrNull" } },
      description: "Who owns it.",
    });
    expect(properties.items!.type).toBeUndefined();
    // An object with no fields of its own keeps its type: nothing else says it is one.
    expect(properties.open).toEqual({ type: "object", description: "Any object." });
    const validate = new AjvJsonSchemaValidator().getValidator(lean as JsonSchemaType);
    const value = {
      documentId: "d",
      createdAt: "t",
      items: [{ documentId: "d", path: "p", note: null }],
      owner: { userId: "u", authorName: null },
      open: { any: 1 },
    };
    expect(validate(value).valid).toBe(true);
    expect(validate({ ...value, stray: 1 }).valid).toBe(false);
    expect(validate({ ...value, documentId: 1 }).valid).toBe(false);
  });

  test("a choice of choices is one choice, and minLength 1 goes only where the pattern already refuses an empty string", () => {
    const input = z.strictObject({
      either: z.union([z.string().nullable(), z.string()]).describe("Either."),
      branch: z
        .string()
        .min(1)
        .regex(/^[a-z]+$/)
        .describe("A branch."),
      maybeEmpty: z
        .string()
        .min(1)
        .regex(/^[a-z]*$/)
        .describe("Maybe empty."),
    });
    const properties = leanSchema(toJson(input, "input"), "input").properties as Record<string, JsonSchema>;
    expect(properties.either).toEqual({ anyOf: [{ type: "string" }, { type: "null" }], description: "Either." });
    expect(properties.branch).toEqual({ type: "string", pattern: "^[a-z]+$", description: "A branch." });
    expect(properties.maybeEmpty!.minLength).toBe(1);
  });
});
