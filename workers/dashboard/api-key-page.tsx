import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { ApiKeyStatusSchema } from "../auth/schemas";
import type { DashboardEnv } from "./env";
import { failureStatus, redirectWithFlash, render } from "./render";
import { ActionButton } from "./ui";

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

function showApiKeyPage(
  c: Ctx,
  status: ApiKeyStatus,
  extras: { newKey?: string; alert?: string } = {},
  code: ContentfulStatusCode = 200,
) {
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
