import { createRoute, z } from "@hono/zod-openapi";
import { and, eq } from "drizzle-orm";
import type { Context } from "hono";
import type { AppEnv } from "../../core/env";
import { database, newId } from "../../db/client";
import { type WebhookRow, webhooks } from "../../db/schema";
import { ok } from "../../http/envelope";
import { badRequest, forbidden, notFound } from "../../http/errors";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../../http/openapi";
import { sealWebhookSecret } from "../../webhooks/secrets";
import { newWebhookSecret } from "../../webhooks/signing";
import { allowedHostsOf, webhookTargetProblem } from "../../webhooks/targets";
import { SessionParamSchema } from "../messages";
import { accessibleSession, callSession, managesGlobal, pushAfterChange } from "../sessions";
import {
  CreatedWebhookSchema,
  CreateWebhookBodySchema,
  DeliveriesQuerySchema,
  DeliveryParamsSchema,
  DeliverySchema,
  normalizeEvents,
  TestResultSchema,
  UpdateWebhookBodySchema,
  WebhookParamsSchema,
  WebhookSchema,
} from "./schemas";
import { findWebhook, listWebhooks, toWebhookResource } from "./store";
import { sendTestDelivery } from "./test-delivery";

/**
 * Webhook endpoints of a session (and the owner's global ones), their test delivery, delivery log and
 * redelivery. Mounted at /api/webhooks. D1 holds the directory; the SessionDO delivers (store.ts).
 */
export const webhooksRoutes = createRouter();
const tags = ["Webhooks"];

/** A session may carry this many endpoints, its owner's global ones included. */
export const MAX_WEBHOOKS_PER_SESSION = 50;
const WEBHOOK_NOT_FOUND = "Webhook not found";

const errors = {
  ...gatewayErrors,
  403: errorResponse("Forbidden - Cannot access this session (or a global webhook, for a shared user)"),
  404: errorResponse("Session or webhook not found"),
} as const;

function assertTarget(c: Context<AppEnv>, url: string): void {
  const problem = webhookTargetProblem(url, allowedHostsOf(c.env.WEBHOOK_ALLOWED_HOSTS));
  if (problem) throw badRequest(`url: ${problem}`);
}

/** The webhook named in the path, if it concerns this session and the caller may manage it. */
async function webhookInPath(c: Context<AppEnv>, sessionId: string, webhookId: string) {
  const session = await accessibleSession(c, sessionId);
  const includeGlobal = managesGlobal(c.get("principal"), session);
  const row = await findWebhook(database(c.env.DB), session, webhookId, includeGlobal);
  if (!row) throw notFound(WEBHOOK_NOT_FOUND, WEBHOOK_NOT_FOUND);
  return { session, row };
}

webhooksRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}",
    tags,
    summary: "The session's webhooks, plus the owner's global ones (for the owner or a SUPERADMIN)",
    description: "Secrets are never returned; `secretSet` says one exists.",
    security: authenticated,
    request: { params: SessionParamSchema },
    responses: { 200: json(gatewayOk(z.array(WebhookSchema)), "Webhooks"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const rows = await listWebhooks(database(c.env.DB), session, managesGlobal(c.get("principal"), session));
    return c.json(
      ok(
        "Webhooks retrieved",
        rows.map((row) => toWebhookResource(row, session)),
      ),
      200,
    );
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}",
    tags,
    summary: "Add a webhook to the session, or a global one to its owner",
    description:
      "Deliveries POST `{event, sessionId, timestamp, data}` (the `WebhookPayload` schema; one example per " +
      "event under `webhooks`), signed with Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, " +
      "`webhook-signature`) and `X-Webhook-Signature`, retried for about 27 h. The secret is returned " +
      "here and never again. docs/webhooks.md shows how to verify a delivery.",
    security: authenticated,
    request: { params: SessionParamSchema, ...jsonBody(CreateWebhookBodySchema) },
    responses: {
      200: json(gatewayOk(CreatedWebhookSchema), "Created; the only response with the secret"),
      ...errors,
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const body = c.req.valid("json");
    const user = c.get("principal").user;
    if (body.global && !managesGlobal(c.get("principal"), session)) {
      throw forbidden(
        "Only the session's owner or a SUPERADMIN can add a global webhook, and not with a key limited to one session",
      );
    }
    assertTarget(c, body.url);
    const db = database(c.env.DB);
    const existing = await listWebhooks(db, session, true);
    if (existing.length >= MAX_WEBHOOKS_PER_SESSION) {
      throw badRequest(
        `A session can have at most ${MAX_WEBHOOKS_PER_SESSION} webhooks, global ones included`,
      );
    }
    const now = Date.now();
    const id = newId();
    const secret = body.secret ?? newWebhookSecret();
    const row: WebhookRow = {
      id,
      // The owner's, whoever adds it: the webhook lives as long as the owner's account, like the session.
      userId: session.userId,
      sessionId: body.global ? null : session.id,
      createdByUserId: user.id,
      name: body.name,
      url: body.url,
      // Stored sealed; the plaintext is in this answer and nowhere else.
      secret: await sealWebhookSecret(c.env.SECRETS_MASTER_KEY, id, secret),
      secretSealed: true,
      events: normalizeEvents(body.events),
      isActive: true,
      disabledReason: null,
      createdAt: now,
      updatedAt: now,
    };
    await db.insert(webhooks).values(row);
    await pushAfterChange(c.env, row);
    return c.json(ok("Webhook created", { ...toWebhookResource(row, session), secret }), 200);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{webhookId}",
    tags,
    summary: "Change any of name, url, events, secret, isActive",
    security: authenticated,
    request: { params: WebhookParamsSchema, ...jsonBody(UpdateWebhookBodySchema) },
    responses: { 200: json(gatewayOk(WebhookSchema), "Updated (without the secret)"), ...errors },
  }),
  async (c) => {
    const { sessionId, webhookId } = c.req.valid("param");
    const { session, row } = await webhookInPath(c, sessionId, webhookId);
    const body = c.req.valid("json");
    if (body.url !== undefined) assertTarget(c, body.url);
    const patch: Partial<WebhookRow> = { updatedAt: Date.now() };
    if (body.name !== undefined) patch.name = body.name;
    if (body.url !== undefined) patch.url = body.url;
    if (body.events !== undefined) patch.events = normalizeEvents(body.events);
    if (body.secret !== undefined) {
      patch.secret = await sealWebhookSecret(c.env.SECRETS_MASTER_KEY, row.id, body.secret);
      patch.secretSealed = true;
    }
    if (body.isActive !== undefined) {
      patch.isActive = body.isActive;
      // The user decided: a reason left by automatic disabling no longer applies.
      patch.disabledReason = null;
    }
    const [updated] = await database(c.env.DB)
      .update(webhooks)
      .set(patch)
      .where(and(eq(webhooks.id, row.id), eq(webhooks.userId, row.userId)))
      .returning();
    if (!updated) throw notFound(WEBHOOK_NOT_FOUND, WEBHOOK_NOT_FOUND);
    await pushAfterChange(c.env, updated);
    return c.json(ok("Webhook updated", toWebhookResource(updated, session)), 200);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{sessionId}/{webhookId}",
    tags,
    summary: "Delete a webhook (a global one stops for every session of the owner)",
    description: "Events still queued for it are not delivered.",
    security: authenticated,
    request: { params: WebhookParamsSchema },
    responses: { 200: json(gatewayOk(z.object({ id: z.string() })), "Deleted"), ...errors },
  }),
  async (c) => {
    const { sessionId, webhookId } = c.req.valid("param");
    const { row } = await webhookInPath(c, sessionId, webhookId);
    await database(c.env.DB).delete(webhooks).where(eq(webhooks.id, row.id));
    await pushAfterChange(c.env, row);
    return c.json(ok("Webhook deleted", { id: row.id }), 200);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{webhookId}/test",
    tags,
    summary: "Send a signed `webhook.test` delivery now and report how it went",
    description:
      "One attempt while you wait (15 s timeout, redirects not followed), whatever the webhook's events " +
      "or isActive. HTTP 200 either way: `ok` false with the reason when the endpoint failed.",
    security: authenticated,
    request: { params: WebhookParamsSchema },
    responses: { 200: json(TestResultSchema, "The test's outcome"), ...errors },
  }),
  async (c) => {
    const { sessionId, webhookId } = c.req.valid("param");
    const { session, row } = await webhookInPath(c, sessionId, webhookId);
    const result = await sendTestDelivery(row, session.sessionId, c.env);
    const { ok: passed, message, statusCode, responseTimeMs, error } = result;
    return c.json({ status: passed, ok: passed, message, data: { statusCode, responseTimeMs, error } }, 200);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/{webhookId}/deliveries",
    tags,
    summary: "The webhook's delivery log for this session, newest first",
    description:
      "One entry per event: status (pending, delivered, failed), attempts, last HTTP status, latency and error.",
    security: authenticated,
    request: { params: WebhookParamsSchema, query: DeliveriesQuerySchema },
    responses: {
      200: json(
        gatewayOk(z.array(DeliverySchema)).extend({
          total: z.number().int(),
          limit: z.number().int(),
          offset: z.number().int(),
        }),
        "Deliveries",
      ),
      ...errors,
    },
  }),
  async (c) => {
    const { sessionId, webhookId } = c.req.valid("param");
    const { limit, offset } = c.req.valid("query");
    const { session, row } = await webhookInPath(c, sessionId, webhookId);
    const { items, total } = await callSession(c.env, session, "webhook.deliveries", {
      webhookId: row.id,
      limit,
      offset,
    });
    return c.json({ ...ok("Deliveries retrieved", items), total, limit, offset }, 200);
  },
);

webhooksRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{webhookId}/deliveries/{deliveryId}/redeliver",
    tags,
    summary: "Queue a logged event again for this webhook (same webhook-id, fresh attempts)",
    security: authenticated,
    request: { params: DeliveryParamsSchema },
    responses: {
      200: json(gatewayOk(DeliverySchema), "Queued"),
      ...errors,
      409: errorResponse("The webhook is inactive, or the event is no longer stored (kept 7 days)"),
    },
  }),
  async (c) => {
    const { sessionId, webhookId, deliveryId } = c.req.valid("param");
    const { session, row } = await webhookInPath(c, sessionId, webhookId);
    const data = await callSession(c.env, session, "webhook.redeliver", { webhookId: row.id, deliveryId });
    return c.json(ok("Redelivery queued", data), 200);
  },
);
