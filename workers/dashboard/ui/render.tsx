import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ApiResult } from "./api-client";
import type { FormState } from "./components";
import type { DashboardEnv } from "./env";
import { Page, type PageProps } from "./layout";

const FLASH_COOKIE = "dashboard.flash";

type PageContent = Omit<PageProps, "viewer" | "csrf" | "flash">;

/** Sends a page for the signed-in viewer, with the previous request's flash message if any. */
export function render(c: Context<DashboardEnv>, props: PageContent, status: ContentfulStatusCode = 200) {
  return c.html(
    html`<!doctype html>${<Page {...props} viewer={c.var.viewer} csrf={c.var.csrf} flash={takeFlash(c)} />}`,
    status,
  );
}

/** A page without the signed-in chrome (sign-in, errors before authentication). */
export function renderBare(c: Context<DashboardEnv>, props: PageContent, status: ContentfulStatusCode = 200) {
  return c.html(html`<!doctype html>${<Page {...props} />}`, status);
}

function takeFlash(c: Context<DashboardEnv>): string | null {
  const message = getCookie(c, FLASH_COOKIE);
  if (message === undefined) return null;
  deleteCookie(c, FLASH_COOKIE, { path: "/" });
  return message;
}

/** Post/redirect/get: a successful form sends the browser on with a one-off confirmation. */
export function redirectWithFlash(c: Context<DashboardEnv>, location: string, message: string) {
  setCookie(c, FLASH_COOKIE, message, { path: "/", httpOnly: true, sameSite: "Lax", maxAge: 60 });
  return c.redirect(location, 303);
}

/** The status a failed form is re-rendered with: the API's own (400, 409, 422...), never a 500. */
export function failureStatus(result: ApiResult<unknown> & { ok: false }): ContentfulStatusCode {
  return result.status >= 400 && result.status < 500 ? (result.status as ContentfulStatusCode) : 400;
}

/** The form as the user submitted it, with the API's messages placed by field. */
export function formWithErrors(
  values: Record<string, string>,
  result: ApiResult<unknown> & { ok: false },
): FormState {
  return { values, errors: result.fields };
}

/** Any origin of our own: only its equality with a resolved URL's origin matters. */
const LOCAL_ORIGIN = "https://dashboard.invalid";

/** `next` after sign-in: a local path only, so the login page cannot be used as an open redirect. */
const isUnsafeInPath = (char: string) => char <= " " || char === "\u007f" || char === "\\";

export function safeLocalPath(candidate: string | undefined, fallback = "/"): string {
  if (candidate === undefined || !candidate.startsWith("/")) return fallback;
  // Browsers drop tabs and newlines inside a URL and read "\\" as "/", so "/\t/evil" is "//evil".
  if ([...candidate].some(isUnsafeInPath)) return fallback;
  let resolved: URL;
  try {
    resolved = new URL(candidate, LOCAL_ORIGIN);
  } catch {
    return fallback;
  }
  return resolved.origin === LOCAL_ORIGIN ? resolved.pathname + resolved.search + resolved.hash : fallback;
}
