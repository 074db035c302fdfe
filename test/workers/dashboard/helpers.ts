// Helpers for dashboard page tests: a browser-like caller with the web-session cookie.
import { SELF } from "cloudflare:test";
import { BASE, type Session } from "../helpers";

export interface PageResponse {
  status: number;
  location: string | null;
  headers: Headers;
  html: string;
}

async function toPage(response: Response): Promise<PageResponse> {
  return {
    status: response.status,
    location: response.headers.get("location"),
    headers: response.headers,
    html: await response.text(),
  };
}

/** GET a dashboard page as `session` (or anonymously), without following redirects. */
export async function browse(session: Session | null, path: string): Promise<PageResponse> {
  const headers: Record<string, string> = session ? { cookie: session.cookie } : {};
  return toPage(await SELF.fetch(`${BASE}${path}`, { headers, redirect: "manual" }));
}

/**
 * Submits a dashboard form as a browser would (urlencoded, with the session's CSRF token as `_csrf`
 * unless `fields` sets it).
 */
export async function submit(
  session: Session | null,
  path: string,
  fields: Record<string, string> = {},
  extraHeaders: Record<string, string> = {},
): Promise<PageResponse> {
  const form = new URLSearchParams({ ...(session ? { _csrf: session.csrf } : {}), ...fields });
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    ...(session ? { cookie: session.cookie } : {}),
    ...extraHeaders,
  };
  return toPage(
    await SELF.fetch(`${BASE}${path}`, { method: "POST", headers, body: form, redirect: "manual" }),
  );
}

/**
 * Submits a multipart dashboard form (a file upload) as a browser would: the session's CSRF token as
 * a field first, then `fields` in order, files included.
 */
export async function submitMultipart(
  session: Session,
  path: string,
  fields: Record<string, string | File>,
): Promise<PageResponse> {
  const form = new FormData();
  form.set("_csrf", session.csrf);
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  return toPage(
    await SELF.fetch(`${BASE}${path}`, {
      method: "POST",
      headers: { cookie: session.cookie },
      body: form,
      redirect: "manual",
    }),
  );
}

/** The text of the page without tags, whitespace collapsed: what a reader sees. */
export function textOf(html: string): string {
  return html
    .replace(/<script[\s\S]*?<\/script>/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

/** The page without its live regions' drawn-at times (data-live-drawn), which change on every render. */
export const undrawn = (html: string): string => html.replace(/ data-live-drawn="\d+"/g, "");

/** The message shown next to form field `name` (ui.tsx renders it as `#field-<name>-error`). */
export function fieldError(html: string, name: string): string | null {
  const id = `field-${name.replace(/[^\w-]/g, "-")}-error`;
  const match = html.match(new RegExp(`<p class="field-error" id="${id}">([\\s\\S]*?)</p>`));
  return match?.[1] ? textOf(match[1]) : null;
}

/** The general (not field-bound) form message, if the page shows one. */
export function formError(html: string): string | null {
  const match = html.match(/<p class="alert" role="alert" id="field-_form-error">([\s\S]*?)<\/p>/);
  return match?.[1] ? textOf(match[1]) : null;
}

/** The element that starts with `<tag id="id"` up to its matching close tag (nested same tags counted). */
export function elementOf(html: string, id: string, tag = "div"): string {
  const start = html.indexOf(`<${tag} id="${id}"`);
  if (start < 0) return "";
  const tags = new RegExp(`<${tag}\\b|</${tag}>`, "g");
  tags.lastIndex = start;
  let depth = 0;
  for (let found = tags.exec(html); found; found = tags.exec(html)) {
    depth += found[0] === `</${tag}>` ? -1 : 1;
    if (depth === 0) return html.slice(start, found.index + found[0].length);
  }
  return "";
}
