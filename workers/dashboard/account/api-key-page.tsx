import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { ApiKeyStatusSchema } from "../../auth/schemas";
import { listConnectedApps, revokeConnectedApp } from "../../oauth";
import { PageError } from "../ui/api-client";
import { failedForm } from "../ui/board-shared";
import { ActionButton, blankForm, type FormState } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { failureStatus, redirectWithFlash, render } from "../ui/render";
import { ConnectedAppsPanel } from "./connected-apps-panel";
import {
  type KeyLimits,
  SCOPED_KEYS_PATH,
  type ScopedKey,
  ScopedKeysPanel,
  scopedKeyBody,
} from "./scoped-keys-panel";

type ApiKeyStatus = z.infer<typeof ApiKeyStatusSchema>;
type Ctx = Context<DashboardEnv>;

const API_KEY_PATH = "/api/user/api-key";

/** The key just generated: in this one response, never in a URL, a cookie or a later page. */
function NewKey({ apiKey }: { apiKey: string }) {
  return (
    <section class="panel" aria-labelledby="new-key-heading">
      <h2 id="new-key-heading">Your new API key</h2>
      <p class="alert" role="status">
        Copy it now: it will not be shown again. The previous key, if any, has stopped working.
      </p>
      <div class="field">
        <label for="new-api-key">API key</label>
        <div class="copy-row">
          <input id="new-api-key" class="secret" readonly value={apiKey} />
          <button type="button" class="secondary" data-copy="new-api-key">
            Copy
          </button>
        </div>
      </div>
    </section>
  );
}

function KeyStatus({ status, csrf }: { status: ApiKeyStatus; csrf: string }) {
  return (
    <section class="panel" aria-labelledby="key-status-heading">
      <h2 id="key-status-heading">Your key</h2>
      <p>
        {status.apiKeySet
          ? "You have an API key. It is stored hashed and cannot be shown. A new one replaces it at once."
          : "You have no API key."}
      </p>
      <p class="muted">
        Send it as the <code>X-API-Key</code> header to call the API as yourself. Keep it secret: it can do
        anything you can.
      </p>
      <div class="actions">
        <ActionButton action="/api-key" csrf={csrf} label="Generate a new key" />
        {status.apiKeySet && (
          <ActionButton
            action="/api-key/revoke"
            csrf={csrf}
            label="Revoke key"
            variant="danger"
            confirm="Revoke your API key? Everything that uses it stops working."
          />
        )}
      </div>
    </section>
  );
}

/** A new scoped key: shown once, in this response only, like the full key. */
function NewScopedKey({ created }: { created: ScopedKey }) {
  return (
    <section class="panel" aria-labelledby="new-scoped-key-heading">
      <h2 id="new-scoped-key-heading">Your new scoped key: {created.name}</h2>
      <p class="alert" role="status">
        Copy it now: it will not be shown again.
      </p>
      <div class="field">
        <label for="new-scoped-key">Scoped key</label>
        <div class="copy-row">
          <input id="new-scoped-key" class="secret" readonly value={created.key ?? ""} />
          <button type="button" class="secondary" data-copy="new-scoped-key">
            Copy
          </button>
        </div>
      </div>
    </section>
  );
}

interface PageExtras {
  newKey?: string;
  alert?: string;
  created?: ScopedKey;
  form?: FormState;
}

/** The scoped keys and what a new one may be limited to, read as the viewer. */
async function scopedKeysOf(c: Ctx): Promise<{ keys: ScopedKey[]; limits: KeyLimits }> {
  const [keys, sessions, companies] = await Promise.all([
    c.var.api.get<ScopedKey[]>(SCOPED_KEYS_PATH),
    c.var.api.get<KeyLimits["sessions"]>("/api/sessions"),
    c.var.api.get<KeyLimits["companies"]>("/api/companies"),
  ]);
  return { keys, limits: { sessions, companies } };
}

async function showApiKeyPage(
  c: Ctx,
  status: ApiKeyStatus,
  extras: PageExtras = {},
  code: ContentfulStatusCode = 200,
) {
  const [scoped, apps] = await Promise.all([
    scopedKeysOf(c),
    listConnectedApps(c.env, new URL(c.req.url).origin, c.var.viewer.id),
  ]);
  return render(
    c,
    {
      title: "API key",
      section: "api-key",
      children: (
        <>
          {extras.alert && (
            <p class="alert" role="alert">
              {extras.alert}
            </p>
          )}
          {extras.newKey && <NewKey apiKey={extras.newKey} />}
          <KeyStatus status={status} csrf={c.var.csrf} />
          {extras.created && <NewScopedKey created={extras.created} />}
          <ScopedKeysPanel {...scoped} csrf={c.var.csrf} form={extras.form ?? blankForm()} />
          <ConnectedAppsPanel apps={apps} csrf={c.var.csrf} />
        </>
      ),
    },
    code,
  );
}

const currentStatus = (c: Ctx) => c.var.api.get<ApiKeyStatus>(API_KEY_PATH);

export const apiKeyPage = new Hono<DashboardEnv>();

apiKeyPage.get("/api-key", async (c) => showApiKeyPage(c, await currentStatus(c)));

/** Answers with the page itself (200), not a redirect: the key must not travel in a URL or cookie. */
apiKeyPage.post("/api-key", async (c) => {
  const result = await c.var.api.send<ApiKeyStatus>("POST", API_KEY_PATH);
  if (!result.ok) {
    return showApiKeyPage(c, await currentStatus(c), { alert: result.error }, failureStatus(result));
  }
  return showApiKeyPage(c, result.data, { newKey: result.data.apiKey ?? undefined });
});

apiKeyPage.post("/api-key/revoke", async (c) => {
  const result = await c.var.api.send<ApiKeyStatus>("DELETE", API_KEY_PATH);
  if (!result.ok) {
    return showApiKeyPage(c, await currentStatus(c), { alert: result.error }, failureStatus(result));
  }
  return redirectWithFlash(c, "/api-key", "API key revoked");
});

/** The form's fields; the API's scopes errors have none and show at the form's top. */
const SCOPED_KEY_FIELDS = ["name", "limit", "expiresInDays"] as const;

/** Answers with the page itself (200), not a redirect: the key must not travel in a URL or cookie. */
apiKeyPage.post("/api-key/scoped", async (c) => {
  const result = await c.var.api.send<ScopedKey>("POST", SCOPED_KEYS_PATH, scopedKeyBody(c.var.form));
  if (!result.ok) {
    const form = failedForm(c.var.form, result, SCOPED_KEY_FIELDS, {
      sessionId: "limit",
      companyId: "limit",
      expiresAt: "expiresInDays",
    });
    return showApiKeyPage(c, await currentStatus(c), { form }, failureStatus(result));
  }
  return showApiKeyPage(c, await currentStatus(c), { created: result.data }, 201);
});

apiKeyPage.post("/api-key/scoped/:keyId/revoke", async (c) => {
  const result = await c.var.api.send(
    "DELETE",
    `${SCOPED_KEYS_PATH}/${encodeURIComponent(c.req.param("keyId"))}`,
  );
  if (!result.ok) {
    return showApiKeyPage(c, await currentStatus(c), { alert: result.error }, failureStatus(result));
  }
  return redirectWithFlash(c, "/api-key", "Scoped key revoked");
});

/** Ends a connected app's access: its tokens answer 401 and its open MCP streams close. */
apiKeyPage.post("/api-key/apps/:grantId/revoke", async (c) => {
  const origin = new URL(c.req.url).origin;
  if (!(await revokeConnectedApp(c.env, origin, c.var.viewer.id, c.req.param("grantId"))))
    throw new PageError(404, "There is no such connected app of yours.");
  return redirectWithFlash(c, "/api-key", "App disconnected");
});
