import type { z } from "@hono/zod-openapi";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolContext, ToolDomain } from "../tools";

/**
 * One MCP prompt, defined once and registered by server.ts like the tools and resources. Arguments
 * are strings (the MCP prompt model); `get` renders the messages for this caller.
 */
export interface PromptDefinition {
  name: string;
  domain: ToolDomain;
  title: string;
  description: string;
  /** Each argument a string schema, optional ones `.optional()`; described for the client's form. */
  argsSchema?: Record<string, z.ZodString | z.ZodOptional<z.ZodString>>;
  get(ctx: ToolContext, args: Record<string, string | undefined>): GetPromptResult;
}
