import { z } from "@hono/zod-openapi";
import { WEBHOOK_EVENTS } from "../../../durable-objects/messaging/context";
import { SECRET_PREFIX } from "../../webhooks/signing";
import { SessionParamSchema } from "../messages";

/** Request and response shapes of the webhook routes (routes.ts). */

export const ALL_EVENTS = "*";
const KNOWN_EVENTS: ReadonlySet<string> = new Set([...WEBHOOK_EVENTS, ALL_EVENTS]);

/** Every event once, in the spec's order; `*` alone stands for all of them. */
export function normalizeEvents(events: readonly string[]): string[] {
  if (events.includes(ALL_EVENTS)) return [ALL_EVENTS];
  return WEBHOOK_EVENTS.filter((event) => events.includes(event));
}

const EventsSchema = z
  .array(
    z
      .string()
      .max(64)
      .openapi({ enum: [...WEBHOOK_EVENTS, ALL_EVENTS] }),
  )
  .min(1, "at least one event is required")
  .max(32)
  .superRefine((events, ctx) => {
    const unknown = [...new Set(events.filter((event) => !KNOWN_EVENTS.has(event)))];
    if (unknown.length > 0) {
      ctx.addIssue({
        code: "custom",
        message: `unknown events: ${unknown.join(", ")} (allowed: ${[...KNOWN_EVENTS].join(", ")})`,
      });
    }
  })
  .openapi({
    description: 'Events to receive, or `["*"]` for all of them (see the `webhooks` section)',
    example: ["message.received", "message.status"],
  });

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const SecretSchema = z
  .string()
  .min(8)
  .max(256)
  // A `whsec_` secret is a base64 key to every Standard Webhooks library; one that is not would be
  // keyed differently by different receivers.
  .refine((secret) => !secret.startsWith(SECRET_PREFIX) || BASE64.test(secret.slice(SECRET_PREFIX.length)), {
    message: `a ${SECRET_PREFIX} secret must be base64 after the prefix`,
  })
  .openapi({
    description:
      "Signing secret, write-only. Omit it on create to get a generated `whsec_` secret (shown once).",
  });

const NameSchema = z.string().trim().min(1, "name is required").max(100);
const UrlSchema = z
  .string()
  .trim()
  .min(1, "url is required")
  .max(2048)
  .openapi({
    description:
      "http(s) URL. Private, loopback, link-local and metadata addresses and internal host names are " +
      "refused unless the deployment's WEBHOOK_ALLOWED_HOSTS lists them",
    example: "https://crm.example.com/hooks/whatsapp",
  });

export const CreateWebhookBodySchema = z
  .strictObject({
    name: NameSchema,
    url: UrlSchema,
    events: EventsSchema,
    secret: SecretSchema.optional(),
    global: z
      .boolean()
      .optional()
      .openapi({
        description:
          "true: one of the owner's global webhooks, receiving every session of the owner (owner or " +
          "SUPERADMIN only). Default false: this session only",
      }),
  })
  .openapi("CreateWebhookBody");

export const UpdateWebhookBodySchema = z
  .strictObject({
    name: NameSchema.optional(),
    url: UrlSchema.optional(),
    events: EventsSchema.optional(),
    secret: SecretSchema.optional(),
    isActive: z
      .boolean()
      .optional()
      .openapi({ description: "false stops deliveries; true resumes them and clears disabledReason" }),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    message: "send at least one of name, url, events, secret, isActive",
  })
  .openapi("UpdateWebhookBody");

export const WebhookSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    sessionId: z
      .string()
      .nullable()
      .openapi({ description: "The session's public id; null for a global webhook of the owner" }),
    events: z.array(z.string()),
    isActive: z.boolean(),
    disabledReason: z.string().nullable().openapi({
      description: "Why deliveries stopped on their own (410 Gone, 5 days of failures); null otherwise",
    }),
    secretSet: z
      .boolean()
      .openapi({ description: "A signing secret is set (its value is never shown again)" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Webhook");

export const CreatedWebhookSchema = WebhookSchema.extend({
  secret: z.string().openapi({ description: "The signing secret. Shown here only: store it now" }),
}).openapi("CreatedWebhook");

export const DeliverySchema = z
  .object({
    id: z.string(),
    webhookId: z.string(),
    messageId: z.string().openapi({ description: "The `webhook-id` header, the same on every attempt" }),
    event: z.string(),
    status: z.enum(["pending", "delivered", "failed"]),
    attempts: z.number().int(),
    statusCode: z.number().int().nullable().openapi({ description: "HTTP status of the last attempt" }),
    latencyMs: z.number().int().nullable(),
    error: z.string().nullable(),
    createdAt: z.string(),
    nextAttemptAt: z.string().nullable(),
    deliveredAt: z.string().nullable(),
  })
  .openapi("WebhookDelivery");

export const TestResultSchema = z.object({
  status: z.boolean().openapi({ description: "Same as ok" }),
  ok: z.boolean().openapi({ description: "false: the test delivery failed (see message)" }),
  message: z.string(),
  data: z.object({
    statusCode: z.number().int().nullable(),
    responseTimeMs: z.number().int(),
    error: z.string().nullable(),
  }),
});

export const WebhookParamsSchema = SessionParamSchema.extend({
  webhookId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "webhookId", in: "path" } }),
});

export const DeliveryParamsSchema = WebhookParamsSchema.extend({
  deliveryId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "deliveryId", in: "path" } }),
});

export const DeliveriesQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});
