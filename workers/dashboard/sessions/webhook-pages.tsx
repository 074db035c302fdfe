import type { Context } from "hono";
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { SessionSchema } from "../../gateway/sessions";
import type { CreatedWebhookSchema, DeliverySchema, WebhookSchema } from "../../gateway/webhooks";
import { PageError } from "../ui/api-client";
import { ActionButton, DataTable, EmptyState, StatusBadge, Time } from "../ui/components";
import type { DashboardEnv } from "../ui/env";
import { redirectWithFlash, render } from "../ui/render";
import { showSessionDetail } from "./detail-view";
import {
  checkboxValue,
  fieldOf,
  pageStatus,
  renameErrors,
  selectedEvents,
  sessionApi,
  sessionPath,
} from "./shared";

type Session = z.infer<typeof SessionSchema>;
type Webhook = z.infer<typeof WebhookSchema>;
type CreatedWebhook = z.infer<typeof CreatedWebhookSchema>;
type Delivery = z.infer<typeof DeliverySchema>;
type TestOutcome = { statusCode: number | null; responseTimeMs: number; error: string | null };
type Ctx = Context<DashboardEnv>;

/** How many deliveries the page shows: the newest, as the API lists them. */
const DELIVERY_PAGE = 50;

const webhooksApi = (slug: string) => `/api/webhooks/${encodeURIComponent(slug)}`;
const webhookApi = (slug: string, webhookId: string) =>
  `${webhooksApi(slug)}/${encodeURIComponent(webhookId)}`;
const webhookPath = (slug: string, webhookId: string) =>
  `${sessionPath(slug)}/webhooks/${encodeURIComponent(webhookId)}`;

function WebhookFacts({ hook }: { hook: Webhook }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd class="secret">{hook.url}</dd>
      <dt>Events</dt>
      <dd>{hook.events.map((event) => (event === "*" ? "all events (*)" : event)).join(", ")}</dd>
      <dt>Active</dt>
      <dd>
        {hook.isActive ? "Yes" : "No"}
        {hook.disabledReason && <span class="muted"> ({hook.disabledReason})</span>}
      </dd>
      <dt>Scope</dt>
      <dd>{hook.sessionId === null ? "Global: every session of the owner" : "This session"}</dd>
      <dt>Signing secret</dt>
      <dd>{hook.secretSet ? "Set (never shown again)" : "Not set"}</dd>
      <dt>Created</dt>
      <dd>
        <Time value={hook.createdAt} />
      </dd>
    </dl>
  );
}

function WebhookActions({ slug, hook, csrf }: { slug: string; hook: Webhook; csrf: string }) {
  const base = webhookPath(slug, hook.id);
  return (
    <div class="actions">
      <ActionButton action={`${base}/test`} csrf={csrf} label="Send test event" />
      <ActionButton
        action={`${base}/active`}
        csrf={csrf}
        label={hook.isActive ? "Pause deliveries" : "Resume deliveries"}
        variant="secondary"
        hidden={{ isActive: hook.isActive ? "false" : "true" }}
      />
      <ActionButton
        action={`${base}/delete`}
        csrf={csrf}
        label="Delete webhook"
        variant="danger"
        confirm="Delete this webhook? Events still queued for it are not delivered."
      />
    </div>
  );
}

function ResponseCell({ delivery }: { delivery: Delivery }) {
  return (
    <>
      {delivery.statusCode === null ? <span class="muted">no answer</span> : `HTTP ${delivery.statusCode}`}
      {delivery.latencyMs !== null && <span class="muted"> in {delivery.latencyMs} ms</span>}
      {delivery.error && <div class="muted">{delivery.error}</div>}
    </>
  );
}

/**
 * One row per logged event. The Redeliver buttons may sit inside the live region: a button holds no
 * typed state that a refresh could lose.
 */
function DeliveryLog(props: { slug: string; webhookId: string; deliveries: Delivery[]; csrf: string }) {
  if (props.deliveries.length === 0) {
    return <EmptyState>No deliveries yet. Events appear here as the session sends them.</EmptyState>;
  }
  const base = webhookPath(props.slug, props.webhookId);
  return (
    <DataTable headings={["Event", "Status", "Attempts", "Response", "Time", "Again"]}>
      {props.deliveries.map((delivery) => (
        <tr>
          <td>
            <code>{delivery.event}</code>
          </td>
          <td>
            <StatusBadge status={delivery.status} />
          </td>
          <td>{delivery.attempts}</td>
          <td>
            <ResponseCell delivery={delivery} />
          </td>
          <td>
            <Time value={delivery.deliveredAt ?? delivery.createdAt} />
          </td>
          <td>
            <ActionButton
              action={`${base}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`}
              csrf={props.csrf}
              label="Redeliver"
              variant="secondary"
            />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** The webhook page; `alert` carries a failed redelivery's message. */
async function showWebhookPage(
  c: Ctx,
  id: string,
  webhookId: string,
  alert?: string,
  status: ContentfulStatusCode = 200,
) {
  const session = await c.var.api.get<Session>(sessionApi(id));
  const slug = session.sessionId;
  const hooks = await c.var.api.get<Webhook[]>(webhooksApi(slug));
  const hook = hooks.find((candidate) => candidate.id === webhookId);
  if (!hook) throw new PageError(404, "Webhook not found");
  const deliveries = await c.var.api.get<Delivery[]>(
    `${webhookApi(slug, hook.id)}/deliveries?limit=${DELIVERY_PAGE}`,
  );
  return render(
    c,
    {
      title: hook.name,
      section: "sessions",
      children: (
        <>
          <p class="muted">
            <a href="/sessions">Sessions</a> / <a href={sessionPath(slug)}>{session.name}</a> / Webhook
          </p>
          <section class="panel" aria-labelledby="webhook-facts-heading">
            <h2 id="webhook-facts-heading">Webhook</h2>
            <WebhookFacts hook={hook} />
            <WebhookActions slug={slug} hook={hook} csrf={c.var.csrf} />
          </section>
          <section class="panel" aria-labelledby="deliveries-heading">
            <h2 id="deliveries-heading">Delivery log</h2>
            <p class="muted">
              The newest {DELIVERY_PAGE} events for this session, refreshed every few seconds.
            </p>
            {alert && (
              <p class="alert" role="alert">
                {alert}
              </p>
            )}
            <div id="deliveries-live" data-live="3">
              <DeliveryLog slug={slug} webhookId={hook.id} deliveries={deliveries} csrf={c.var.csrf} />
            </div>
          </section>
        </>
      ),
    },
    status,
  );
}

export const webhookPages = new Hono<DashboardEnv>();

webhookPages.post("/sessions/:id/webhooks", async (c) => {
  const id = c.req.param("id");
  const form = c.var.form;
  const secret = fieldOf(form, "secret");
  const body = {
    name: fieldOf(form, "name"),
    url: fieldOf(form, "url"),
    events: selectedEvents(form),
    global: checkboxValue(form.global),
    ...(secret === "" ? {} : { secret }),
  };
  const result = await c.var.api.send<CreatedWebhook>("POST", webhooksApi(id), body);
  if (!result.ok) {
    const values = Object.fromEntries(Object.entries(form).filter(([name]) => name !== "secret"));
    const errors = renameErrors(result.fields, (path) => path);
    return showSessionDetail(c, id, { webhook: { values, errors } }, pageStatus(result));
  }
  if (secret !== "") return redirectWithFlash(c, sessionPath(id), "Webhook added");
  // The generated secret exists in this response only: show it here instead of redirecting.
  return showSessionDetail(c, id, {
    notice: "Webhook added",
    newSecret: { url: result.data.url, value: result.data.secret },
  });
});

webhookPages.get("/sessions/:id/webhooks/:webhookId", (c) =>
  showWebhookPage(c, c.req.param("id"), c.req.param("webhookId")),
);

webhookPages.post("/sessions/:id/webhooks/:webhookId/test", async (c) => {
  const { id, webhookId } = c.req.param();
  const result = await c.var.api.send<TestOutcome>("POST", `${webhookApi(id, webhookId)}/test`);
  if (!result.ok) return showWebhookPage(c, id, webhookId, result.error, pageStatus(result));
  // The API answers 200 whether or not the endpoint accepted it; the outcome is in the data.
  const { statusCode, responseTimeMs, error } = result.data;
  const outcome =
    error === null
      ? `Test event delivered: HTTP ${statusCode} in ${responseTimeMs} ms`
      : `Test event failed: ${error}`;
  return redirectWithFlash(c, webhookPath(id, webhookId), outcome);
});

webhookPages.post("/sessions/:id/webhooks/:webhookId/active", async (c) => {
  const { id, webhookId } = c.req.param();
  const isActive = checkboxValue(c.var.form.isActive);
  const result = await c.var.api.send("PUT", webhookApi(id, webhookId), { isActive });
  if (!result.ok) return showWebhookPage(c, id, webhookId, result.error, pageStatus(result));
  return redirectWithFlash(
    c,
    webhookPath(id, webhookId),
    isActive === true ? "Deliveries resumed" : "Deliveries paused",
  );
});

webhookPages.post("/sessions/:id/webhooks/:webhookId/delete", async (c) => {
  const { id, webhookId } = c.req.param();
  const result = await c.var.api.send("DELETE", webhookApi(id, webhookId));
  if (!result.ok) return showWebhookPage(c, id, webhookId, result.error, pageStatus(result));
  return redirectWithFlash(c, sessionPath(id), "Webhook deleted");
});

webhookPages.post("/sessions/:id/webhooks/:webhookId/deliveries/:deliveryId/redeliver", async (c) => {
  const { id, webhookId, deliveryId } = c.req.param();
  const path = `${webhookApi(id, webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`;
  const result = await c.var.api.send("POST", path);
  if (!result.ok) return showWebhookPage(c, id, webhookId, result.error, pageStatus(result));
  return redirectWithFlash(c, webhookPath(id, webhookId), "Redelivery queued");
});
