import type { ExecutionContext } from "hono";
import { vouchFor } from "../../auth/in-process";
import { CSRF_HEADER } from "../../auth/middleware";
import type { Env } from "../../core/env";
import type { Principal } from "../../core/principal";
import { apiFamilyOf } from "../../http/family";

/** Messages keyed by form field name; `_form` holds a message that belongs to no single field. */
export type FieldErrors = Record<string, string>;

export type ApiResult<T> =
  | { ok: true; status: number; data: T; setCookies: string[] }
  | { ok: false; status: number; error: string; fields: FieldErrors };

/**
 * The dashboard is a client of the service's own API: every page reads and every form writes through
 * it, in-process, with the viewer's cookie and CSRF token. Validation, permissions, tenancy and the
 * activity log therefore behave exactly as for any API client, and no rule exists twice.
 */
export interface ApiClient {
  /** GET that must succeed; a failure becomes the error page with the API's status and message. */
  get<T>(path: string): Promise<T>;
  /** GET whose failure the page handles itself (a QR that is not there yet). */
  read<T>(path: string): Promise<ApiResult<T>>;
  /** POST, PATCH, PUT or DELETE with an optional JSON body. */
  send<T>(method: "POST" | "PATCH" | "PUT" | "DELETE", path: string, body?: unknown): Promise<ApiResult<T>>;
  /** POST a multipart body (a file upload) as the browser sent it to the page. */
  upload<T>(path: string, form: FormData): Promise<ApiResult<T>>;
  /** GET the API's own response, for bytes a page passes through (a download). */
  stream(path: string): Promise<Response>;
}

/** A failed page load: rendered by the dashboard's error page with this status. */
export class PageError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 422 | 429 | 500 | 503,
    message: string,
  ) {
    super(message);
    this.name = "PageError";
  }
}

const PAGE_STATUSES = new Set([400, 401, 403, 404, 409, 422, 429, 503]);

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The gateway wraps data in `{status, message, data}`; the control plane answers with the resource. */
function unwrap(path: string, body: unknown): unknown {
  if (apiFamilyOf(path) === "gateway" && isRecord(body) && "data" in body) return body.data;
  return body;
}

/** The human message of an error body in either envelope. */
function errorMessage(body: unknown, status: number): string {
  if (isRecord(body)) {
    if (typeof body.error === "string") return body.error;
    if (typeof body.message === "string") return body.message;
  }
  return `The request failed (${status})`;
}

/**
 * Field messages from a validation failure: the control plane lists `details[{path, message}]`,
 * the gateway joins them into one line `"path: message; path: message"` (http/validation.ts).
 */
export function fieldErrorsOf(body: unknown, status: number): FieldErrors {
  const fields: FieldErrors = {};
  const message = errorMessage(body, status);
  const details = isRecord(body) && Array.isArray(body.details) ? body.details : [];
  for (const detail of details) {
    if (!isRecord(detail) || !Array.isArray(detail.path) || typeof detail.message !== "string") continue;
    const name = detail.path.map(String).join(".");
    if (name && !(name in fields)) fields[name] = detail.message;
  }
  if (Object.keys(fields).length === 0 && status === 400) {
    for (const part of message.split("; ")) {
      const match = part.match(/^([\w.]+): (.+)$/);
      if (match?.[1] && match[2] && !(match[1] in fields)) fields[match[1]] = match[2];
    }
  }
  if (Object.keys(fields).length === 0) fields._form = message;
  return fields;
}

async function parseBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Runs a request through the whole API app (its middleware included), in the same isolate. */
export type ApiFetch = (request: Request, env: Env, ctx: ExecutionContext) => Promise<Response>;

/** What the client needs of the page request it serves (a Hono context of any dashboard route). */
export interface PageContext {
  req: { url: string; header(name: string): string | undefined };
  env: Env;
  executionCtx: ExecutionContext;
}

/**
 * `viewer` is the principal the dashboard authenticated from the cookie; the API trusts it for these
 * in-process calls instead of looking the session up again (auth/in-process.ts). Without one (the
 * sign-in page) the API authenticates the request as usual.
 */
export function createApiClient(
  c: PageContext,
  apiFetch: ApiFetch,
  csrf: string,
  viewer?: Principal,
): ApiClient {
  const origin = new URL(c.req.url).origin;
  const baseHeaders: Record<string, string> = { accept: "application/json" };
  const cookie = c.req.header("cookie");
  if (cookie) baseHeaders.cookie = cookie;
  const address = c.req.header("CF-Connecting-IP");
  if (address) baseHeaders["CF-Connecting-IP"] = address;

  /** JSON goes as JSON; a FormData body sets its own multipart content type. */
  function fetchApi(method: string, path: string, body?: unknown): Promise<Response> {
    const headers = { ...baseHeaders };
    if (method !== "GET") headers[CSRF_HEADER] = csrf;
    const multipart = body instanceof FormData;
    if (body !== undefined && !multipart) headers["content-type"] = "application/json";
    const request = new Request(`${origin}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : multipart ? body : JSON.stringify(body),
    });
    if (viewer) vouchFor(request, viewer);
    return apiFetch(request, c.env, c.executionCtx);
  }

  async function request<T>(method: string, path: string, body?: unknown): Promise<ApiResult<T>> {
    const response = await fetchApi(method, path, body);
    const parsed = await parseBody(response);
    if (response.ok)
      return {
        ok: true,
        status: response.status,
        data: unwrap(path, parsed) as T,
        // workerd splits Set-Cookie correctly only through getAll (a comma may sit inside Expires).
        setCookies: response.headers.getAll("Set-Cookie"),
      };
    return {
      ok: false,
      status: response.status,
      error: errorMessage(parsed, response.status),
      fields: fieldErrorsOf(parsed, response.status),
    };
  }

  return {
    read: (path) => request("GET", path),
    send: (method, path, body) => request(method, path, body),
    upload: (path, form) => request("POST", path, form),
    stream: (path) => fetchApi("GET", path),
    async get<T>(path: string): Promise<T> {
      const result = await request<T>("GET", path);
      if (result.ok) return result.data;
      const status = PAGE_STATUSES.has(result.status) ? (result.status as PageError["status"]) : 500;
      throw new PageError(status, result.error);
    },
  };
}
