import { zodToOpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { z } from "@hono/zod-openapi";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * A tool's input as tools/list sends it: the SDK's own conversion (zod 4's toJSONSchema, draft-7, the
 * input side of pipes: `toJsonSchemaCompat` in mcp.js), plus the descriptions the REST schemas write
 * with `.openapi({ description })`. zod's converter reads only its own registry (`.describe()`,
 * `.meta()`), while most REST fields are described for the OpenAPI document through zod-to-openapi's
 * registry, which `.openapi()` writes: read from that registry here, the one text serves both, and a
 * model sees what a REST client reads in docs/openapi.json.
 */
export function toolInputJsonSchema(schema: z.ZodType): Tool["inputSchema"] {
  return z.toJSONSchema(schema, {
    target: "draft-7",
    io: "input",
    override: ({ zodSchema, jsonSchema }) => {
      if (jsonSchema.description !== undefined) return;
      const description = zodToOpenAPIRegistry.get(zodSchema)?.description;
      if (typeof description === "string") jsonSchema.description = description;
    },
  }) as Tool["inputSchema"];
}
