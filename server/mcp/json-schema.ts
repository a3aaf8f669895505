/**
 * MCP tool input schemas. A tool's zod schema is a union on `action`; agents
 * and most function-calling clients want one flat object, so the union is
 * flattened here: every parameter once, `action` as an enum, and each
 * parameter's description saying which actions require it.
 */
import { z } from "zod";

type JsonSchema = Record<string, unknown> & { properties?: Record<string, JsonSchema>; required?: string[]; description?: string };

const toJson = (schema: z.ZodType): JsonSchema => z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema;

/** One shape a parameter takes, with the actions that use it and what each says about it. */
interface Variant {
  shape: JsonSchema;
  key: string;
  actions: string[];
}

/**
 * The description of a parameter across actions: the one text when all
 * actions agree, else each text once with the actions it belongs to, so no
 * action's meaning of the field is lost.
 */
function mergedDescription(byAction: ReadonlyArray<{ action: string; description: string | undefined }>): string | undefined {
  const actionsByText = new Map<string, string[]>();
  for (const { action, description } of byAction) {
    if (description) actionsByText.set(description, [...(actionsByText.get(description) ?? []), action]);
  }
  if (actionsByText.size <= 1) return [...actionsByText.keys()][0];
  return [...actionsByText].map(([text, actions]) => `${actions.join(", ")}: ${text}`).join(" — ");
}

export function toolInputJsonSchema(schema: z.ZodType): JsonSchema {
  if (!(schema instanceof z.ZodDiscriminatedUnion)) {
    const { $schema: _ignored, ...rest } = toJson(schema);
    return rest;
  }
  const variants = new Map<string, Variant[]>();
  const descriptions = new Map<string, Array<{ action: string; description: string | undefined }>>();
  const requiredBy = new Map<string, string[]>();
  const actions: string[] = [];
  for (const option of schema.options as z.ZodType[]) {
    const json = toJson(option);
    const action = String((json.properties?.action as { const?: unknown } | undefined)?.const);
    actions.push(action);
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      if (name === "action") continue;
      const { description, ...shape } = property;
      descriptions.set(name, [...(descriptions.get(name) ?? []), { action, description }]);
      const key = JSON.stringify(shape);
      const known = variants.get(name) ?? [];
      const same = known.find((v) => v.key === key);
      if (same) same.actions.push(action);
      else variants.set(name, [...known, { shape, key, actions: [action] }]);
      if (json.required?.includes(name)) requiredBy.set(name, [...(requiredBy.get(name) ?? []), action]);
    }
  }
  const properties: Record<string, JsonSchema> = {};
  for (const [name, shapes] of variants) {
    const needers = requiredBy.get(name);
    const note = !needers ? undefined : needers.length === actions.length ? "Required." : `Required for: ${needers.join(", ")}.`;
    const description = [mergedDescription(descriptions.get(name)!), note].filter(Boolean).join(" ") || undefined;
    // Where actions give a parameter different types, each stays valid (anyOf), never just the first.
    const shape = shapes.length === 1 ? shapes[0]!.shape : { anyOf: shapes.map((v) => v.shape) };
    properties[name] = description ? { ...shape, description } : shape;
  }
  return {
    type: "object",
    properties: { action: { type: "string", enum: actions, description: "The operation to perform." }, ...properties },
    required: ["action"],
    additionalProperties: false,
  };
}
