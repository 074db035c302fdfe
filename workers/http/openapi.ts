import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../core/env";
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
