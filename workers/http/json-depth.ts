import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../core/env";
import { badRequest } from "./errors";

/**
 * How deep a JSON body may nest. Deeper values parse fine but then overflow the stack of whatever
 * walks them recursively (validation, redaction, rendering): an approval payload nested 10,000 deep
 * was accepted and made the approvals page a 500. Nothing in the API needs more than a few levels.
 */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether `text` nests arrays and objects deeper than `max`, by counting brackets outside strings,
 * without parsing (so it cannot itself be driven into deep recursion). Invalid JSON is not its
 * business: the parser still decides that.
 */
export function jsonTooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // backslash: skip the escaped character
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > max) return true;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return false;
}

/** JSON requests: a body nested deeper than MAX_JSON_DEPTH is a 400 before any handler reads it. */
export const limitJsonDepth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const type = (c.req.header("content-type") ?? "").toLowerCase();
  if (type.includes("json") && jsonTooDeep(await c.req.text()))
    throw badRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
  return next();
};
