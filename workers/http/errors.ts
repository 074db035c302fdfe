import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../core/env";
import { controlError, gatewayError } from "./envelope";
import { apiFamilyOf } from "./family";
import { isUploadRoute } from "./uploads";

/**
 * A failure the caller can act on. `message` is the short phrase the spec lists per status
 * ("Unauthorized", "Session not found"); `detail` says precisely what was wrong.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly detail?: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The phrase for each status, so every error body of a status reads the same. */
export const STATUS_TITLES: Partial<Record<ContentfulStatusCode, string>> = {
  400: "Invalid request parameters",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not found",
  405: "Method not allowed",
  409: "Conflict",
  410: "Gone",
  413: "Payload too large",
  415: "Unsupported media type",
  422: "Unprocessable entity",
  429: "Too many requests",
  500: "Internal Server Error",
  503: "Service unavailable",
};

export const titleOf = (status: ContentfulStatusCode): string => STATUS_TITLES[status] ?? "Error";

export const badRequest = (detail: string, details?: unknown) =>
  new ApiError(400, titleOf(400), detail, details);
export const unauthorized = (detail = "Missing or invalid credentials") =>
  new ApiError(401, titleOf(401), detail);
export const forbidden = (detail: string, message = titleOf(403)) => new ApiError(403, message, detail);
export const notFound = (message = titleOf(404), detail?: string) => new ApiError(404, message, detail);
export const conflict = (detail: string, details?: unknown) =>
  new ApiError(409, titleOf(409), detail, details);
/** Something that existed and is no longer usable (an expired or revoked invite link). */
export const gone = (detail: string, details?: unknown) => new ApiError(410, titleOf(410), detail, details);
/** A well-formed request that breaks a rule: an invalid transition, an agent that cannot be assigned. */
export const unprocessable = (detail: string, details?: unknown) =>
  new ApiError(422, titleOf(422), detail, details);

/** D1 reports a violated UNIQUE index as an error whose message names the constraint. */
export function isUniqueViolation(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  return text.includes("UNIQUE constraint failed");
}

/** Runs a write; a UNIQUE violation becomes a 409 saying `detail`, anything else is rethrown. */
export async function conflictOnDuplicate<T>(write: Promise<T>, detail: string): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(detail);
    throw error;
  }
}

/** Renders an error in the envelope of the API family the path belongs to. */
export function renderError(c: Context<AppEnv>, error: ApiError): Response {
  const body =
    apiFamilyOf(c.req.path) === "control"
      ? controlError(error.status, error.detail ?? error.message, error.details)
      : gatewayError(error.message, error.detail ?? error.message);
  return c.json(body, error.status, error.headers);
}

/** Maps anything thrown by a handler or middleware to a response. Never leaks a stack trace. */
export function handleError(err: unknown, c: Context<AppEnv>): Response {
  if (err instanceof ApiError) return renderError(c, err);
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    const detail = status === 415 ? unsupportedBodyDetail(c) : err.message || titleOf(status);
    return renderError(c, new ApiError(status, titleOf(status), detail));
  }
  console.error(
    JSON.stringify({
      level: "error",
      msg: "unhandled error",
      requestId: c.get("requestId"),
      method: c.req.method,
      path: c.req.path,
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
    }),
  );
  return renderError(c, new ApiError(500, titleOf(500), "An unexpected error occurred; it has been logged."));
}

/** @hono/zod-openapi refuses a body in a media type the route does not declare with a bare 415. */
function unsupportedBodyDetail(c: Context<AppEnv>): string {
  const sent = c.req.header("content-type") ?? "";
  const wanted = isUploadRoute(c.req.method, c.req.path) ? "multipart/form-data" : "application/json";
  return sent === ""
    ? `The body has no Content-Type; send ${wanted}`
    : `Content-Type "${sent}" is not accepted here; send ${wanted}`;
}

export function handleNotFound(c: Context<AppEnv>): Response {
  return renderError(c, notFound(titleOf(404), `No route for ${c.req.method} ${c.req.path}`));
}
