/** The MCP flattener: one object from a union on `action` (inputs) or from per-action result objects (outputs). */
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { flatInputSchema, mergeActionOutputs } from "@/server/mcp/flatten";

const json = (schema: z.ZodType, io: "input" | "output") =>
  z.toJSONSchema(schema, { io, target: "draft-07" }) as {
    properties: Record<string, { description?: string; type?: string | string[]; enum?: string[] }>;
    required?: string[];
    additionalProperties?: unknown;
  };

describe("flatInputSchema", () => {
  const input = z.discriminatedUnion("action", [
    z.strictObject({ action: z.literal("create"), name: z.string().describe("Name of the new thing."), size: z.number().optional() }),
    z.strictObject({ action: z.literal("rename"), name: z.string().describe("The new name."), id: z.string() }),
    z.strictObject({ action: z.literal("resize"), size: z.string().describe("A size like 10px."), id: z.string() }),
  ]);
  const flat = flatInputSchema(input);

  test("shows action as the enum, each field once with every action's description, which actions require it, and each type", () => {
    const schema = json(flat, "input");
    expect(schema.required).toEqual(["action"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.action!.enum).toEqual(["create", "rename", "resize"]);
    expect(schema.properties.name!.description).toBe("create: Name of the new thing. — rename: The new name. Required except for: resize.");
    expect(schema.properties.id!.description).toBe("Required except for: create.");
    expect(schema.properties.size!.description).toBe("A size like 10px. Required for: resize.");
    // Each action's type stays valid (zod writes an anyOf of plain types as a type list).
    expect(schema.properties.size!.type).toEqual(["number", "string"]);
  });

  test("the text most actions share comes first without its actions; the others name theirs", () => {
    const branch = z.string().describe("The branch.");
    const schema = json(
      flatInputSchema(
        z.discriminatedUnion("action", [
          z.strictObject({ action: z.literal("write"), branchName: branch }),
          z.strictObject({ action: z.literal("erase"), branchName: branch }),
          z.strictObject({ action: z.literal("fork"), branchName: z.string().describe("Name of the new branch.") }),
          z.strictObject({ action: z.literal("log"), branchName: z.string().optional().describe("Default: the default branch.") }),
        ]),
      ),
      "input",
    );
    expect(schema.properties.branchName!.description).toBe(
      "The branch. — fork: Name of the new branch. — log: Default: the default branch. Required except for: log.",
    );
  });

  test("judges nothing: any value reaches the strict per-action parse untouched", () => {
    const raw = { action: 7, name: ["x"], size: { deep: [[1]] }, stray: true };
    expect(flat.parse(raw)).toEqual(raw);
  });
});

describe("mergeActionOutputs", () => {
  const merged = mergeActionOutputs({
    create: z.object({ id: z.string().describe("The new thing."), size: z.number() }),
    rename: z.object({ id: z.string(), name: z.string().nullable() }),
    resize: z.object({ id: z.string(), size: z.string() }),
  });

  test("a field every action returns is required, others optional; types differing by action are a union", () => {
    const schema = json(merged, "output");
    expect(schema.required).toEqual(["id"]);
    expect(schema.additionalProperties).toBe(false);
    // Which action returns what is said once, in the tool's description: a field carries its own description only.
    expect(schema.properties.id!.description).toBe("The new thing.");
    expect(schema.properties.size!.description).toBeUndefined();
    expect(schema.properties.size!.type).toEqual(["number", "string"]);
    expect(merged.safeParse({ id: "a", size: 3 }).success).toBe(true);
    expect(merged.safeParse({ id: "a", name: null }).success).toBe(true);
    expect(merged.safeParse({ size: 3 }).success).toBe(false);
    expect(merged.safeParse({ id: "a", size: true }).success).toBe(false);
  });
});
