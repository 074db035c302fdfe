import type { z } from "@hono/zod-openapi";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { ExecutionContext } from "hono";
import type { Actor } from "../../core/actor";
import type { Env } from "../../core/env";
import type { Principal } from "../../core/principal";
import { KEY_SCOPES, type KeyGrant, type KeyScope } from "../../core/scopes";

/** The app's own fetch (app.ts), so a tool runs the very REST handler a curl would reach. */
export type AppFetch = (request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>;

/** AppFetch bound to the current request's bindings and execution context. */
export type BoundFetch = (request: Request) => Promise<Response>;

/**
 * The credential an MCP request carries, and who it proves. The same keys as the REST API: a user key
 * in `X-API-Key` or as a Bearer token, an agent key (`swa_…`) as a Bearer token. Tools forward the
 * credential in `headers` to the REST routes, which authenticate it again and apply every rule.
 */
export interface McpCaller {
  actor: Actor;
  /**
   * What the key allows (scopes, one session or one company, expiry); null for a user's full key.
   * An agent key allows read, control and send within its company.
   */
  grant: KeyGrant | null;
  /** The header that carries the key to the REST API, as its middleware expects it. */
  headers: Record<string, string>;
  /**
   * For a credential REST does not accept (an OAuth access token, workers/oauth): the principal the
   * door proved from it, which each in-process REST call carries instead, vouched (auth/in-process.ts).
   */
  principal?: Principal;
}

/** What every tool needs to act as its caller through the REST API. */
export interface ToolContext {
  appFetch: BoundFetch;
  /** The request's bindings: governance reads the company's line and policy from D1. */
  env: Env;
  origin: string;
  caller: McpCaller;
  /** Work that may finish after the answer (`waitUntil`): a read's activity-log row. */
  defer(promise: Promise<unknown>): void;
}

/**
 * What a key must allow for a tool to run: the scoped keys' own scopes (core/scopes.ts), so a key
 * means the same over REST and MCP. Every tool names exactly one.
 */
export const TOOL_SCOPES = KEY_SCOPES;
export type ToolScope = KeyScope;

/** The product a tool belongs to, for the generated tool list (docs/mcp-tools.md). */
export type ToolDomain = "control" | "whatsapp";

/**
 * One MCP tool, defined once: its input is a zod object built from the REST route's own schemas, and
 * `run` acts as the caller. The server registers every definition the same way (server.ts), so scope
 * checks and the activity log wrap all of them (invoke.ts).
 */
export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject> {
  name: string;
  domain: ToolDomain;
  scope: ToolScope;
  /** Written for a model: what it does, when to use it, what comes back, what to do on a refusal. */
  description: string;
  inputSchema?: Input;
  annotations?: ToolAnnotations;
  run(ctx: ToolContext, args: z.infer<Input>): Promise<CallToolResult>;
}

/** A definition with its input type erased, so definitions of different inputs share one list. */
export type AnyToolDefinition = ToolDefinition<z.ZodObject>;

/** Keeps `run`'s argument typed by `inputSchema` at the definition site, then erases it for the list. */
export function defineTool<Input extends z.ZodObject>(definition: ToolDefinition<Input>): AnyToolDefinition {
  return definition as unknown as AnyToolDefinition;
}

/** A tool without input: its `run` takes no arguments. */
export function defineBareTool(
  definition: Omit<ToolDefinition, "inputSchema" | "run"> & {
    run(ctx: ToolContext): Promise<CallToolResult>;
  },
): AnyToolDefinition {
  return { ...definition, run: (ctx) => definition.run(ctx) };
}
