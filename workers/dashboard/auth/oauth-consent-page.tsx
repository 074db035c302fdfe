import type { Context } from "hono";
import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import { principalFromSessionToken, SESSION_COOKIE } from "../../auth/session-store";
import { membershipRole } from "../../control/shared";
import { KEY_SCOPES, type KeyGrant } from "../../core/scopes";
import { database } from "../../db/client";
import { loadAccessibleSession } from "../../gateway/sessions";
import { ApiError } from "../../http/errors";
import {
  approveAuthorization,
  denialRedirect,
  type PendingAuthorization,
  readAuthorization,
} from "../../oauth";
import { type KeyLimits, SCOPE_HINTS, scopedKeyBody } from "../account/scoped-keys-panel";
import { PageError } from "../ui/api-client";
import { blankForm, CheckboxField, Form, type FormState, SelectField } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { render } from "../ui/render";

type Ctx = Context<DashboardEnv>;
const CONSENT_PATH = "/oauth/authorize";

/** The request the page is about; one the library or we refuse is shown here, never redirected. */
async function pendingOf(c: Ctx, query: string): Promise<PendingAuthorization> {
  const url = new URL(c.req.url);
  const pending = await readAuthorization(c.env, new URL(`${url.origin}${CONSENT_PATH}${query}`));
  if (typeof pending === "string")
    throw new PageError(400, `This app's sign-in request is invalid: ${pending}`);
  return pending;
}

/** Where the form may send the browser: the redirect URI's origin (or its scheme, for an app's own). */
function formTargetOf(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.origin === "null" ? url.protocol : url.origin;
}

/**
 * The scopes the app asked for that a key can have, ticked; admin never is (the user ticks it on
 * purpose); read when nothing else is left. Clients that find no scope in the 401 ask for every
 * scope the resource lists.
 */
function requestedScopes(pending: PendingAuthorization): FormState {
  const asked = KEY_SCOPES.filter((scope) => scope !== "admin" && pending.request.scope.includes(scope));
  const scopes = asked.length > 0 ? asked : (["read"] as const);
  return blankForm(Object.fromEntries(scopes.map((scope) => [`scope_${scope}`, "on"])));
}

function ConsentForm(props: {
  pending: PendingAuthorization;
  limits: KeyLimits;
  csrf: string;
  form: FormState;
}) {
  const { pending, limits, form } = props;
  const limitOptions = [
    { value: "", label: "No limit" },
    ...limits.sessions.map((s) => ({ value: `session:${s.sessionId}`, label: `Session: ${s.name}` })),
    ...limits.companies.map((c) => ({ value: `company:${c.id}`, label: `Company: ${c.name}` })),
  ];
  return (
    <section class="panel" aria-labelledby="consent-heading">
      <h2 id="consent-heading">{pending.clientName} wants to use Switchboard as you</h2>
      <p>
        It will connect to the MCP server and act as you, with only what you allow here, until you revoke it
        under <a href="/api-key">API key → Connected apps</a>. After you decide, your browser goes back to{" "}
        <code>{pending.redirectHost}</code>.
      </p>
      <p class="muted">
        It asked for:{" "}
        {pending.request.scope.length > 0 ? pending.request.scope.join(", ") : "no particular scope"}.
      </p>
      <Form action={CONSENT_PATH} csrf={props.csrf} form={form} label="Allow the app">
        <input type="hidden" name="request" value={pending.query} />
        {KEY_SCOPES.map((scope) => (
          <CheckboxField form={form} name={`scope_${scope}`} label={`${scope}: ${SCOPE_HINTS[scope]}`} />
        ))}
        <SelectField form={form} name="limit" label="Limited to" options={limitOptions} />
        <div class="actions">
          <button type="submit" name="decision" value="approve">
            Allow
          </button>
          <button type="submit" name="decision" value="deny" class="secondary">
            Deny
          </button>
        </div>
      </Form>
    </section>
  );
}

async function showConsent(
  c: Ctx,
  pending: PendingAuthorization,
  form: FormState,
  status: 200 | 400 | 404 = 200,
) {
  const [sessions, companies] = await Promise.all([
    c.var.api.get<KeyLimits["sessions"]>("/api/sessions"),
    c.var.api.get<KeyLimits["companies"]>("/api/companies"),
  ]);
  c.set("formTarget", formTargetOf(pending.request.redirectUri));
  return render(
    c,
    {
      title: "Connect an app",
      section: "api-key",
      children: (
        <ConsentForm pending={pending} limits={{ sessions, companies }} csrf={c.var.csrf} form={form} />
      ),
    },
    status,
  );
}

/**
 * The grant the form chose, the same as a scoped key's: its scopes, and a limit to one of the viewer's
 * sessions (stored by its internal id) or companies; another one answers as unknown.
 */
async function grantOf(c: Ctx): Promise<KeyGrant | string> {
  const body = scopedKeyBody(c.var.form);
  if (body.scopes.length === 0) return "Choose at least one scope.";
  const db = database(c.env.DB);
  let sessionId: string | null = null;
  if (body.sessionId !== undefined) {
    const principal = await principalFromSessionToken(c.env, db, getCookie(c, SESSION_COOKIE) ?? "");
    if (principal === null) throw new PageError(401, "Sign in again.");
    try {
      sessionId = (await loadAccessibleSession(db, principal, body.sessionId, "read")).id;
    } catch (error) {
      if (error instanceof ApiError) return "There is no such session of yours.";
      throw error;
    }
  }
  if (body.companyId !== undefined && (await membershipRole(db, c.var.viewer.id, body.companyId)) === null)
    return "There is no such company of yours.";
  return { scopes: body.scopes, sessionId, companyId: body.companyId ?? null, expiresAt: null };
}

export const oauthConsentPage = new Hono<DashboardEnv>();

oauthConsentPage.get(CONSENT_PATH, async (c) => {
  const pending = await pendingOf(c, new URL(c.req.url).search);
  return showConsent(c, pending, requestedScopes(pending));
});

/** Allow: back to the app with a code for exactly the chosen grant. Deny: back with access_denied. */
oauthConsentPage.post(CONSENT_PATH, async (c) => {
  const query = c.var.form.request ?? "";
  const pending = await pendingOf(c, query.startsWith("?") ? query : "");
  const origin = new URL(c.req.url).origin;
  const decision = c.var.form.decision;
  if (decision === "deny") return c.redirect(denialRedirect(origin, pending), 302);
  if (decision !== "approve") throw new PageError(400, "Choose Allow or Deny.");
  const grant = await grantOf(c);
  if (typeof grant === "string") {
    const form: FormState = { values: c.var.form, errors: { _form: grant } };
    return showConsent(c, pending, form, 400);
  }
  return c.redirect(await approveAuthorization(c.env, origin, pending, c.var.viewer.id, grant), 302);
});
