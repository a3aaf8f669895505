/**
 * MCP tool input schemas. A tool's zod schema is a union on `action`; agents
 * and most function-calling clients want one flat object, so the union is
 * flattened here: every parameter once, `action` as an enum, and each
 * parameter's description saying which actions require it.
 */
import { z } from "zod";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[]; description?: string };

const toJson = (schema: z.ZodType): JsonSchema => z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;

export function toolInputJsonSchema(schema: z.ZodType): JsonSchema {
  if (!(schema instanceof z.ZodDiscriminatedUnion)) {
    const { $schema: _ignored, ...rest } = toJson(schema);
    return rest;
  }
  const properties: Record<string, JsonSchema> = {};
  const requiredBy = new Map<string, string[]>();
  const actions: string[] = [];
  for (const option of schema.options as z.ZodType[]) {
    const json = toJson(option);
    const action = String((json.properties?.action as { const?: unknown } | undefined)?.const);
    actions.push(action);
    for (const [key, property] of Object.entries(json.properties ?? {})) {
      if (key === "action") continue;
      properties[key] ??= property;
      if (json.required?.includes(key)) requiredBy.set(key, [...(requiredBy.get(key) ?? []), action]);
    }
  }
  for (const [key, property] of Object.entries(properties)) {
    const needers = requiredBy.get(key);
    if (needers) {
      const note = needers.length === actions.length ? "Required." : `Required for: ${needers.join(", ")}.`;
      properties[key] = { ...property, description: [property.description, note].filter(Boolean).join(" ") };
    }
  }
  return {
    type: "object",
    properties: { action: { type: "string", enum: actions, description: "The operation to perform." }, ...properties },
    required: ["action"],
    additionalProperties: false,
  };
}
