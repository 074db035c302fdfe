import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../core/env";
import type { Principal } from "../core/principal";

/**
 * Requests the dashboard makes to the API inside the same isolate, each mapped to the principal the
 * dashboard has already authenticated. Only a Request object created here can be in the map, so a
 * request from outside can never claim an entry; the map holds no strings an attacker could forge.
 * It saves the session lookup (a D1 query) on every API call a page makes.
 */
const vouched = new WeakMap<Request, Principal>();

export function vouchFor(request: Request, principal: Principal): Request {
  vouched.set(request, principal);
  return request;
}

/** Vouched requests that carry a member's answer on the company's WhatsApp line (issue 28). */
const viaWhatsApp = new WeakSet<Request>();

/** As `vouchFor`, and the request records its decision as made "via WhatsApp" (control/line/answers). */
export function vouchForLineAnswer(request: Request, principal: Principal): Request {
  viaWhatsApp.add(request);
  return vouchFor(request, principal);
}

/**
 * First on /api: remembers the vouched principal before any later middleware (the body limit) may
 * replace the Request object.
 */
export const recognizeInProcessCalls: MiddlewareHandler<AppEnv> = async (c, next) => {
  const principal = vouched.get(c.req.raw);
  if (principal) c.set("vouchedPrincipal", principal);
  if (principal && viaWhatsApp.has(c.req.raw)) c.set("answeredVia", "whatsapp");
  return next();
};
