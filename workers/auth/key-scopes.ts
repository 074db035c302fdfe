import { grantAllows, type KeyGrant, type KeyScope } from "../core/scopes";
import { type ApiError, forbidden } from "../http/errors";
import { apiFamilyOf } from "../http/family";

/**
 * Which scope a REST request needs (issue 27; docs/api-keys.md has the same table for people):
 *
 * - `read`: GET, HEAD, OPTIONS, and the few POSTs that only read (READING_POSTS);
 * - `send`: sending WhatsApp messages, exactly the routes of SENDS;
 * - `control`: any other write of the control plane (issues, comments, approvals, documents, goals,
 *   projects, routines, agents' work), except the account-level ones of CONTROL_ADMIN;
 * - `admin`: every other write (sessions, keys, members, runners, secrets, webhooks, settings, groups,
 *   contacts, profile…).
 *
 * A request whose path is not listed gets the strictest answer its method and family allow, so a new
 * route is covered before anyone lists it.
 */
type RouteRule = readonly [method: string, path: RegExp];

const S = "[^/]+";
const rule = (method: string, path: string): RouteRule => [method, new RegExp(`^/api${path}$`)];

/** Routes that make WhatsApp send something to someone (or change what was sent). */
export const SENDS: readonly RouteRule[] = [
  rule("POST", `/messages/${S}/${S}/(send|media|location|poll|contact|list|reply)`),
  rule("POST", `/messages/${S}/${S}/${S}/(react|reply)`),
  rule("PATCH", `/messages/${S}/${S}/${S}`),
  rule("DELETE", `/messages/${S}/${S}/${S}`),
  rule("POST", `/messages/${S}/forward`),
  rule("POST", `/messages/${S}/broadcast`),
  rule("POST", `/messages/${S}/broadcast/${S}/cancel`),
  rule("POST", "/messages/(broadcast|location|poll)"),
  rule("POST", "/chat/send"),
  rule("POST", `/chat/${S}/send`),
  rule("POST", `/chat/${S}/${S}/presence`),
  rule("PUT", `/chat/${S}/${S}/read`),
  rule("POST", `/scheduler/${S}`),
  rule("PUT", `/scheduler/${S}/${S}`),
  rule("DELETE", `/scheduler/${S}/${S}`),
  rule("POST", `/status/${S}/update`),
];

/** Control-plane writes that manage the account rather than the work: admin. */
export const CONTROL_ADMIN: readonly RouteRule[] = [
  rule("POST", "/companies"),
  rule("PATCH", `/companies/${S}`),
  rule("POST", `/companies/${S}/(archive|logo|imports/apply|external-agent/invite-prompt)`),
  rule("(PATCH|DELETE)", `/companies/${S}/members/${S}`),
  rule("(POST|DELETE)", `/companies/${S}/member-invites(/${S})?`),
  rule("POST", `/member-invites/${S}/accept`),
  rule("(POST|PUT|DELETE)", `/companies/${S}/runners(/${S})?`),
  rule("POST", `/companies/${S}/secrets`),
  rule("PATCH", `/secrets/${S}`),
  rule("(POST|DELETE)", `/agents/${S}/keys(/${S})?`),
  rule("POST", `/routine-triggers/${S}/rotate-secret`),
];

/**
 * POSTs that change nothing: an export renders the company (a viewer may make them too); a number check
 * and a presence subscription ask.
 */
const READING_POSTS: readonly RouteRule[] = [
  rule("POST", `/companies/${S}/exports(/preview)?`),
  rule("POST", `/chat/${S}/check`),
  rule("POST", `/chat/${S}/${S}/presence/subscribe`),
];

const READS = new Set(["GET", "HEAD", "OPTIONS"]);
const matches = (rules: readonly RouteRule[], method: string, path: string): boolean =>
  rules.some(([methods, pattern]) => new RegExp(`^(${methods})$`).test(method) && pattern.test(path));

export function scopeNeeded(method: string, path: string): KeyScope {
  if (READS.has(method) || matches(READING_POSTS, method, path)) return "read";
  if (matches(SENDS, method, path)) return "send";
  if (apiFamilyOf(path) === "control" && !matches(CONTROL_ADMIN, method, path)) return "control";
  return "admin";
}

/** Where a key limited to one session may go: the messaging routes, which check the session. */
const SESSION_ROUTES =
  /^\/api\/(sessions|messages|chat|chats|contacts|groups|labels|profile|scheduler|autoreplies|webhooks|status)(\/|$)/;

/**
 * Why a key limited to one session or one company may not make this request at all (another product,
 * the account, creating a session or a company), or null. Within its product the session and company
 * checks answer 404 for any other (gateway/sessions/store.ts `accessOf`, control/shared/access.ts).
 */
function limitRefusal(grant: KeyGrant, method: string, path: string): string | null {
  if (grant.sessionId !== null) {
    if (SESSION_ROUTES.test(path) && !(method === "POST" && path === "/api/sessions")) return null;
    return "This key is limited to one WhatsApp session: it reaches only that session's routes";
  }
  if (grant.companyId !== null) {
    if (apiFamilyOf(path) === "control" && !(method === "POST" && path === "/api/companies")) return null;
    return "This key is limited to one company: it reaches only that company's control-plane routes";
  }
  return null;
}

/**
 * The refusal (403, nothing done) of a request a scoped key does not allow, or null: the one check
 * every REST request with a key passes (auth/middleware.ts), and so every MCP tool, which calls REST.
 */
export function keyRefusal(grant: KeyGrant | null, method: string, path: string): ApiError | null {
  if (grant === null) return null;
  const needed = scopeNeeded(method, path);
  if (!grantAllows(grant, needed)) {
    return forbidden(
      `This key lacks the "${needed}" scope this request needs (it has: ${grant.scopes.join(", ")})`,
    );
  }
  const outside = limitRefusal(grant, method, path);
  return outside === null ? null : forbidden(outside);
}
