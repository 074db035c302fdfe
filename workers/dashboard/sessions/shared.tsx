import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { MeResourceSchema } from "../../gateway/sessions";
import type { ApiResult, FieldErrors } from "../ui/api-client";
import type { FormFields } from "../ui/env";
import { failureStatus } from "../ui/render";

type Me = z.infer<typeof MeResourceSchema>;
type Failure = ApiResult<unknown> & { ok: false };

export const sessionPath = (slug: string) => `/sessions/${encodeURIComponent(slug)}`;
export const sessionApi = (slug: string) => `/api/sessions/${encodeURIComponent(slug)}`;

/** A submitted field, "" when the browser did not send it (an unchecked checkbox). */
export const fieldOf = (form: FormFields, name: string): string => form[name] ?? "";

/**
 * A checkbox (or a hidden "true"/"false") as the API's boolean. Anything else is passed on as it is,
 * so the API (not this page) says what is wrong with it.
 */
export function checkboxValue(value: string | undefined): boolean | string {
  if (value === undefined || ["", "false", "0"].includes(value)) return false;
  if (["on", "true", "1"].includes(value)) return true;
  return value;
}

/** The status a failed action re-renders with: the API's 4xx, or 503 when the session is not ready. */
export function pageStatus(result: Failure): ContentfulStatusCode {
  return result.status === 503 ? 503 : failureStatus(result);
}

/**
 * The API names fields by their place in its JSON body (`config.readReceipts`, `botAllowedJids.2`,
 * `jid`); the form names them by input. `rename` maps one to the other; the first message per field wins.
 */
export function renameErrors(errors: FieldErrors, rename: (apiPath: string) => string): FieldErrors {
  const renamed: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    const name = rename(path.replace(/(\.\d+)+$/, ""));
    if (!(name in renamed)) renamed[name] = message;
  }
  return renamed;
}

/** "Ada (+15550001111)" from WhatsApp's `me`, as the pairing page's script prints it too. */
export function describeMe(me: Me): string {
  if (!me) return "";
  const phone = `+${String(me.id).split(/[:@]/)[0] ?? ""}`;
  return me.name ? `${me.name} (${phone})` : phone;
}

export const phoneOf = (me: Me) => (me ? `+${String(me.id).split(/[:@]/)[0] ?? ""}` : "");

export function formatUptime(seconds: number): string {
  if (seconds <= 0) return "—";
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours > 0 ? `${hours} h ${minutes} min` : `${minutes} min ${seconds % 60} s`;
}

/** Each event is its own checkbox name: the form parser keeps one value per name. */
export const eventFieldName = (event: string) => `events:${event}`;

export function selectedEvents(form: FormFields): string[] {
  return Object.keys(form)
    .filter((name) => name.startsWith("events:") && checkboxValue(form[name]) === true)
    .map((name) => name.slice("events:".length));
}
