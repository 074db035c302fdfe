import type { Context, MiddlewareHandler } from "hono";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { getCookie } from "hono/cookie";
import {
  csrfTokenFor,
  isValidCsrfToken,
  principalFromSessionToken,
  SESSION_COOKIE,
} from "../auth/session-store";
import { database } from "../db/client";
import { apiKeyPage } from "./account/api-key-page";
import { orgPage } from "./agents/org-page";
import { agentPages } from "./agents/pages";
import { approvalPages } from "./approvals/pages";
import { oauthConsentPage } from "./auth/oauth-consent-page";
import { authPages } from "./auth/pages";
import { activityPage } from "./companies/activity-page";
import { companyPages } from "./companies/pages";
import { companySettingsPage } from "./companies/settings-page";
import { costPage } from "./costs/page";
import { deletePages } from "./deletes/pages";
import { homePage } from "./home-page";
import { invitePage } from "./invites/page";
import { inviteSignupPage } from "./invites/signup-page";
import { issueBoardPage } from "./issues/board-page";
import { minePage } from "./issues/mine-page";
import { issueModelPages } from "./issues/model-pages";
import { issuePage } from "./issues/page";
import { quickEditPage } from "./issues/quick-edit";
import { memberPages } from "./members/pages";
import { notificationsPage } from "./notifications/page";
import { packagePages } from "./packages/pages";
import { projectPages } from "./projects/pages";
import { routinePages } from "./routines/pages";
import { companyRunnerPage } from "./runners/company-page";
import { runnerPages } from "./runners/pages";
import { secretPages } from "./secrets/pages";
import { sessionPages } from "./sessions/pages";
import { pairingPage } from "./sessions/pairing-page";
import { phonePage } from "./sessions/phone-page";
import { webhookPages } from "./sessions/webhook-pages";
import { createApiClient, PageError } from "./ui/api-client";
import { registerAssets } from "./ui/assets";
import type { ApiFetch, DashboardEnv, FormFields } from "./ui/env";
import { render, renderBare } from "./ui/render";
import { userPages } from "./users/pages";

/** Paths the API, the bridges, the runners and the agent guidance own; everything else is the dashboard's. */
const NOT_DASHBOARD = /^\/(api|bridge|runner|llms)(\/|$)/;
const PUBLIC_PAGES = /^\/(login$|assets\/|favicon\.ico$|invites\/[^/]+\/signup$)/;
/** An invite opened signed out offers to create an account there instead of the sign-in page. */
const INVITE_PAGE = /^\/invites\/[^/]+$/;
const FORM_BODY_LIMIT_BYTES = 1024 * 1024;
/** An attachment upload passes through to the API, which answers anything above its 10 MiB itself. */
const UPLOAD_PATH = /^\/issues\/[^/]+\/attachments$/;
const UPLOAD_BODY_LIMIT_BYTES = 16 * 1024 * 1024;

export const isDashboardPath = (path: string) => !NOT_DASHBOARD.test(path);

/** Only for dashboard paths: the dashboard is mounted at `/` and must not touch the API's requests. */
function onDashboardPaths(handler: MiddlewareHandler<DashboardEnv>): MiddlewareHandler<DashboardEnv> {
  return (c, next) => (isDashboardPath(c.req.path) ? handler(c, next) : next());
}

/**
 * Scripts, styles and connections from this origin only; no inline script or style, no framing.
 * `img-src data:` admits the QR code, which the SessionDO keeps as a PNG data URL.
 */
const contentSecurityPolicy = (formTarget: string | undefined) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    formTarget === undefined ? "form-action 'self'" : `form-action 'self' ${formTarget}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");

const securityHeaders: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  await next();
  c.header("Content-Security-Policy", contentSecurityPolicy(c.var.formTarget));
  if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
};

const limitForms = bodyLimit({
  maxSize: FORM_BODY_LIMIT_BYTES,
  onError: (c) => c.text("The form is larger than 1 MiB", 413),
});
const limitUploads = bodyLimit({
  maxSize: UPLOAD_BODY_LIMIT_BYTES,
  onError: (c) => c.text("The file is larger than 16 MiB", 413),
});
const limitBodies: MiddlewareHandler<DashboardEnv> = (c, next) =>
  (UPLOAD_PATH.test(c.req.path) ? limitUploads : limitForms)(c, next);

/** Signed-in pages only: anyone else goes to the sign-in page and comes back after. */
function requireViewer(apiFetch: ApiFetch): MiddlewareHandler<DashboardEnv> {
  return async (c, next) => {
    if (PUBLIC_PAGES.test(c.req.path)) return next();
    const token = getCookie(c, SESSION_COOKIE);
    const principal = token ? await principalFromSessionToken(c.env, database(c.env.DB), token) : null;
    if (!token || !principal) {
      if (c.req.method !== "GET") return c.redirect("/login", 303);
      const url = new URL(c.req.url);
      if (INVITE_PAGE.test(url.pathname)) return c.redirect(`${url.pathname}/signup`, 302);
      return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 302);
    }
    const csrf = await csrfTokenFor(token);
    c.set("viewer", principal.user);
    c.set("csrf", csrf);
    c.set("api", createApiClient(c, apiFetch, csrf, principal));
    return next();
  };
}

/** Every signed-in form carries `_csrf`; a POST without the viewer's token changes nothing. */
const requireFormToken: MiddlewareHandler<DashboardEnv> = async (c, next) => {
  if (c.req.method !== "POST" || PUBLIC_PAGES.test(c.req.path)) return next();
  const body = await c.req.parseBody();
  const fields: FormFields = {};
  for (const [name, value] of Object.entries(body)) if (typeof value === "string") fields[name] = value;
  const token = getCookie(c, SESSION_COOKIE) ?? "";
  if (!(await isValidCsrfToken(token, fields._csrf))) {
    throw new PageError(
      403,
      "The form expired or did not come from this site. Reload the page and try again.",
    );
  }
  delete fields._csrf;
  c.set("form", fields);
  return next();
};

function ErrorBody({ message, status }: { message: string; status: number }) {
  return (
    <div class="panel">
      <p role="alert">{message}</p>
      <p class="muted">Status {status}.</p>
      <p>
        <a href="/">Back to the start page</a>
      </p>
    </div>
  );
}

const TITLES: Record<number, string> = {
  400: "Bad request",
  403: "Not allowed",
  404: "Not found",
  409: "Conflict",
  422: "Not possible",
  429: "Slow down",
  500: "Something went wrong",
  503: "Not available right now",
};

function renderErrorPage(error: Error, c: Context<DashboardEnv>) {
  const status = error instanceof PageError ? error.status : 500;
  if (!(error instanceof PageError)) {
    console.error(
      JSON.stringify({ level: "error", msg: "dashboard error", path: c.req.path, error: String(error) }),
    );
  }
  const message =
    error instanceof PageError ? error.message : "An unexpected error occurred; it has been logged.";
  const props = {
    title: TITLES[status] ?? "Error",
    children: <ErrorBody message={message} status={status} />,
  };
  return c.var.viewer ? render(c, props, status) : renderBare(c, props, status);
}

/**
 * The dashboard: server-rendered pages (hono/jsx) under `/`, behind the same web session as the API.
 * Pages read and write through the API in-process (api-client.ts); see docs/dashboard.md.
 */
export function createDashboard(apiFetch: ApiFetch): Hono<DashboardEnv> {
  const dashboard = new Hono<DashboardEnv>();
  dashboard.use("*", onDashboardPaths(securityHeaders));
  dashboard.use("*", onDashboardPaths(limitBodies));
  dashboard.use("*", onDashboardPaths(requireViewer(apiFetch)));
  dashboard.use("*", onDashboardPaths(requireFormToken));

  registerAssets(dashboard);
  dashboard.route("/", authPages(apiFetch));
  dashboard.route("/", homePage);
  // Gateway
  dashboard.route("/", sessionPages);
  dashboard.route("/", pairingPage);
  dashboard.route("/", webhookPages);
  dashboard.route("/", apiKeyPage);
  dashboard.route("/", phonePage);
  dashboard.route("/", oauthConsentPage);
  dashboard.route("/", userPages);
  // Board
  dashboard.route("/", companyPages);
  dashboard.route("/", orgPage);
  dashboard.route("/", issueBoardPage);
  dashboard.route("/", minePage);
  dashboard.route("/", issuePage);
  dashboard.route("/", issueModelPages);
  dashboard.route("/", quickEditPage);
  dashboard.route("/", notificationsPage);
  dashboard.route("/", approvalPages);
  dashboard.route("/", costPage);
  dashboard.route("/", routinePages);
  // Control-plane entities
  dashboard.route("/", agentPages);
  dashboard.route("/", projectPages);
  dashboard.route("/", secretPages);
  dashboard.route("/", activityPage);
  dashboard.route("/", packagePages);
  dashboard.route("/", companySettingsPage);
  dashboard.route("/", runnerPages);
  dashboard.route("/", memberPages);
  dashboard.route("/", companyRunnerPage);
  dashboard.route("/", invitePage);
  dashboard.route("/", inviteSignupPage(apiFetch));
  dashboard.route("/", deletePages);

  dashboard.all("*", (c) => {
    if (!isDashboardPath(c.req.path)) return c.notFound();
    throw new PageError(404, `There is no page at ${c.req.path}.`);
  });
  dashboard.onError(renderErrorPage);
  return dashboard;
}
