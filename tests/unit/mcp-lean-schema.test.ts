/** What tools/list sends: schemas made lean (server/mcp/lean-schema.ts) without changing what a true result or a valid call looks like. */
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { shownElsewhere } from "@/server/core/schema-listing";
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
});
