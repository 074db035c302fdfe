import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../core/env";
import { apiFamilyOf } from "./family";
import { rejectInvalidInput } from "./validation";

/** Every router is built here so all of them share the validation hook and the OpenAPI registry. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: rejectInvalidInput });
}

export const GatewayErrorSchema = z
  .object({
    status: z.literal(false),
    message: z.string().openapi({ example: "Unauthorized" }),
    error: z.string().openapi({ example: "Missing or invalid credentials" }),
  })
  .openapi("GatewayError");

export const ControlErrorSchema = z
  .object({
    error: z.string(),
    details: z.unknown().optional(),
    code: z.string().optional(),
  })
  .openapi("ControlError");

/**
 * `schema | null` for a schema registered under a name. zod's `.nullable()` on such a schema is
 * published as the bare `$ref`, null lost (or `allOf` with it, which still refuses null); a union is
 * published as `anyOf: [$ref, {type: "null"}]`, which says what the response holds.
 */
export const nullableRef = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

/** `{status: true, message, data}` around a data schema. */
export function gatewayOk<T extends z.ZodType>(data: T) {
  return z.object({ status: z.literal(true), message: z.string(), data });
}

export function json<T extends z.ZodType>(schema: T, description: string) {
  return { content: { "application/json": { schema } }, description };
}

/** A required, strictly validated JSON body. Unknown keys are a 400, never silently dropped. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { body: { content: { "application/json": { schema } }, required: true } };
}

const gatewayErrorResponse = (description: string) => json(GatewayErrorSchema, description);

/** The error responses most gateway routes share, for the OpenAPI document. */
export const gatewayErrors = {
  400: gatewayErrorResponse("Invalid request parameters: malformed JSON, wrong types or unknown fields"),
  401: gatewayErrorResponse("Missing or invalid API key or session cookie"),
  403: gatewayErrorResponse(
    "Authenticated, but not allowed (role, or a missing CSRF token on a cookie request)",
  ),
  413: gatewayErrorResponse("Body larger than the documented limit"),
} as const;

export const errorResponse = gatewayErrorResponse;

/** Security requirement for routes that accept either credential. */
export const authenticated: Array<Record<string, string[]>> = [{ ApiKey: [] }, { SessionCookie: [] }];

const controlErrorResponse = (description: string) => json(ControlErrorSchema, description);

/** The error responses most control-plane routes share, for the OpenAPI document. */
export const controlErrors = {
  400: controlErrorResponse("Validation error: malformed JSON, wrong types or unknown fields"),
  401: controlErrorResponse("Missing or invalid credentials (agent key, API key or session cookie)"),
  403: controlErrorResponse("Authenticated, but the permission table does not allow this caller"),
  404: controlErrorResponse("Unknown id, or an entity of a company the caller cannot see"),
} as const;

export const controlError = controlErrorResponse;

/** Control-plane routes accept board users (API key or cookie) and agents (Bearer agent key). */
export const controlAuth: Array<Record<string, string[]>> = [
  { ApiKey: [] },
  { SessionCookie: [] },
  { AgentKey: [] },
];

const SCOPED_KEY_REFUSAL =
  "A scoped API key without the scope this route needs (the error names it), or limited to a session or company this route is not about";

/**
 * Statuses the app's own middleware answers whatever the route, documented on every route they can
 * reach (issue 26: the workers suite holds each response to the document): the body limit's 413 on
 * any /api request that may carry a body, and @hono/zod-openapi's 415 on a route that declares a
 * body sent in another media type; and the 403 of a scoped key outside its scope or limit on any route
 * that takes a key (auth/key-scopes.ts). A route that documents one itself keeps its own wording.
 */
export function documentAppWideErrors(app: OpenAPIHono<AppEnv>): void {
  for (const definition of app.openAPIRegistry.definitions) {
    if (definition.type !== "route") continue;
    const { route } = definition;
    if (!route.path.startsWith("/api/")) continue;
    const error = apiFamilyOf(route.path) === "control" ? controlErrorResponse : gatewayErrorResponse;
    const takesKey = route.security !== undefined && route.security.length > 0;
    const reads = route.method === "get" || route.method === "head";
    const added = {
      ...(takesKey ? { 403: error(SCOPED_KEY_REFUSAL) } : {}),
      ...(reads
        ? {}
        : { 413: error("Body larger than the limit: 1 MiB, or the media limit for a multipart upload") }),
      ...(!reads && route.request?.body
        ? { 415: error("Body not sent in a media type this route takes") }
        : {}),
    };
    // A copy: the route object is shared with the router that declared it.
    definition.route = { ...route, responses: { ...added, ...route.responses } };
  }
}
