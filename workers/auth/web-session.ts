import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { type AppEnv, isProduction } from "../core/env";
import { database, iso } from "../db/client";
import { ok } from "../http/envelope";
import { ApiError, badRequest, titleOf, unauthorized } from "../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../http/openapi";
import { recordLoginLockout, takeSecurityNotices } from "./account-events";
import { ensureBootstrapAdmin } from "./bootstrap";
import { throttleSource } from "./client-address";
import { CSRF_HEADER } from "./middleware";
import { DECOY_HASH, verifyPassword } from "./passwords";
import { CsrfSchema, LoginBodySchema, LoginResultSchema, WebSessionSchema } from "./schemas";
import {
  createWebSession,
  csrfTokenFor,
  deleteWebSession,
  type IssuedSession,
  isValidCsrfToken,
  principalFromSessionToken,
  SESSION_COOKIE,
  SESSION_TTL_MS,
} from "./session-store";
import { admitLogin, LOCKOUT_MS, loginSucceeded } from "./throttle";
import { findUserByEmail, normaliseEmail } from "./user-store";

export const webSessionRoutes = createRouter();

/** Secure everywhere but plain-HTTP local development, where browsers would drop the cookie. */
function cookieIsSecure(c: Context<AppEnv>): boolean {
  return isProduction(c.env) || new URL(c.req.url).protocol === "https:";
}

/** Signs the browser in: the cookie of a session just created (login, sign-up by invite). */
export function setSessionCookie(c: Context<AppEnv>, session: IssuedSession): void {
  setCookie(c, SESSION_COOKIE, session.token, {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: cookieIsSecure(c),
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
    expires: new Date(session.expiresAt),
  });
}

/** The client's network as the throttle counts it: an IPv4 address, or an IPv6 /64. */
function clientSource(c: Context<AppEnv>): string {
  return throttleSource(c.req.header("CF-Connecting-IP") ?? "unknown");
}

const login = createRoute({
  method: "post",
  path: "/login",
  tags: ["Web authentication"],
  summary: "Log in with e-mail and password; sets the web-auth.session-token cookie",
  description:
    "JSON only (a cross-site HTML form cannot send it, which is the login's CSRF defence). Attempts are " +
    "throttled per account from one source, per source (an IPv4 address or an IPv6 /64) and per account " +
    "from everywhere: exponential delays, then a 15-minute lockout after 20 attempts in an hour. While " +
    "held back the answer is 429 with Retry-After and the password is not checked, the right one " +
    "included. A lockout is shown to the account's owner at their next sign-in (`securityNotices`).",
  request: jsonBody(LoginBodySchema),
  responses: {
    200: json(gatewayOk(LoginResultSchema), "Logged in; the cookie is set"),
    400: gatewayErrors[400],
    401: errorResponse("Wrong e-mail or password"),
    415: errorResponse("Body is not application/json"),
    429: errorResponse("Too many failed attempts; see Retry-After"),
  },
});

webSessionRoutes.openapi(login, async (c) => {
  const { email, password } = c.req.valid("json");
  const db = database(c.env.DB);
  const normalised = normaliseEmail(email);
  const source = clientSource(c);
  const now = Date.now();
  const admission = await admitLogin(db, normalised, source, now);
  // The attempt that locks the account is recorded unless it turns out to be the owner's (below).
  const noteLockout = () =>
    admission.locksAccount
      ? recordLoginLockout(
          db,
          normalised,
          { attempts: admission.accountAttempts, source, lockedUntil: now + LOCKOUT_MS },
          now,
        )
      : Promise.resolve();
  if (admission.retryAfterMs > 0) {
    await noteLockout();
    const seconds = Math.ceil(admission.retryAfterMs / 1000);
    throw new ApiError(429, titleOf(429), `Too many failed logins; try again in ${seconds} s`, undefined, {
      "Retry-After": String(seconds),
    });
  }

  let user = await findUserByEmail(db, normalised);
  if (!user) {
    // Read again whether or not this request created the admin: a concurrent first login may have
    // won the insert (npm start's runner signs in as the admin just as a person does).
    await ensureBootstrapAdmin(db, c.env, normalised, password);
    user = await findUserByEmail(db, normalised);
  }
  const passwordMatches = await verifyPassword(password, user?.passwordHash ?? DECOY_HASH);
  if (!user || !passwordMatches) {
    // Already counted by admitLogin, before the check.
    await noteLockout();
    throw unauthorized("Invalid e-mail or password");
  }

  await loginSucceeded(db, admission);
  const session = await createWebSession(db, user.id);
  setSessionCookie(c, session);
  const { id, name, image, role } = user;
  return c.json(
    ok("Logged in", {
      user: { id, name, email: user.email, image, role },
      expires: iso(session.expiresAt),
      csrfToken: await csrfTokenFor(session.token),
      securityNotices: await takeSecurityNotices(db, user.id),
    }),
    200,
  );
});

const logout = createRoute({
  method: "post",
  path: "/logout",
  tags: ["Web authentication"],
  summary: "End the browser session and clear the cookie",
  description: `Idempotent. A live session must send its CSRF token in ${CSRF_HEADER}.`,
  responses: {
    200: json(gatewayOk(z.null()), "Logged out"),
    403: gatewayErrors[403],
  },
});

webSessionRoutes.openapi(logout, async (c) => {
  const token = getCookie(c, SESSION_COOKIE);
  const db = database(c.env.DB);
  const principal = token ? await principalFromSessionToken(c.env, db, token) : null;
  if (principal?.via === "cookie") {
    if (!(await isValidCsrfToken(principal.webSession.token, c.req.header(CSRF_HEADER)))) {
      throw new ApiError(403, titleOf(403), `Missing or invalid CSRF token in ${CSRF_HEADER}`);
    }
    await deleteWebSession(c.env, db, principal.webSession.id, principal.user.id);
  }
  deleteCookie(c, SESSION_COOKIE, { path: "/", secure: cookieIsSecure(c), httpOnly: true, sameSite: "Lax" });
  return c.json(ok("Logged out", null), 200);
});

const session = createRoute({
  method: "get",
  path: "/session",
  tags: ["Web authentication"],
  summary: "The signed-in user (Web session)",
  security: authenticated,
  responses: { 200: json(WebSessionSchema, "The caller"), 401: gatewayErrors[401] },
});

webSessionRoutes.openapi(session, (c) => {
  const principal = c.get("principal");
  const expires = principal.via === "cookie" ? iso(principal.webSession.expiresAt) : null;
  return c.json({ user: principal.user, expires }, 200);
});

const csrf = createRoute({
  method: "get",
  path: "/csrf",
  tags: ["Web authentication"],
  summary: "The CSRF token of the browser session",
  description: `Cookie-authenticated POST/PUT/PATCH/DELETE requests send it in ${CSRF_HEADER}. API-key requests need none.`,
  security: authenticated,
  responses: {
    200: json(CsrfSchema, "The token, bound to the session cookie"),
    400: errorResponse("Called with an API key: API-key requests need no CSRF token"),
    401: gatewayErrors[401],
  },
});

webSessionRoutes.openapi(csrf, async (c) => {
  const principal = c.get("principal");
  if (principal.via !== "cookie") {
    throw badRequest("CSRF tokens belong to browser sessions; requests with X-API-Key need none");
  }
  return c.json({ csrfToken: await csrfTokenFor(principal.webSession.token) }, 200);
});
