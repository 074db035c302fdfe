import { z } from "@hono/zod-openapi";
import { KEY_SCOPES } from "../core/scopes";

export const KeyScopeSchema = z.enum(KEY_SCOPES).openapi({
  description:
    "`read`: GET/HEAD anything the key reaches. `send`: WhatsApp message sends (the list in docs/api-keys.md). " +
    "`control`: control-plane writes (issues, comments, approvals, documents, agents' work). " +
    "`admin`: everything else too (sessions, keys, members, webhooks, settings).",
});

export const CreateScopedKeyBodySchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100).openapi({ example: "Claude Desktop, read only" }),
    scopes: z
      .array(KeyScopeSchema)
      .min(1)
      .max(KEY_SCOPES.length)
      .refine((scopes) => new Set(scopes).size === scopes.length, { message: "Name each scope once" }),
    sessionId: z.string().min(1).max(64).optional().openapi({
      description: "Limit the key to this one WhatsApp session (its public id); one you may use.",
    }),
    companyId: z.string().min(1).max(64).optional().openapi({
      description: "Limit the key to this one company; one you are a member of.",
    }),
    expiresAt: z.iso.datetime({ offset: true }).optional().openapi({
      description:
        "When the key stops working (ISO-8601, in the future); without it the key does not expire.",
    }),
  })
  .refine((body) => body.sessionId === undefined || body.companyId === undefined, {
    message: "Limit a key to one session or to one company, not both",
  })
  .openapi("CreateScopedKeyBody");

export const ScopedKeySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(KeyScopeSchema),
    sessionId: z.string().nullable().openapi({ description: "The one session the key reaches, or null." }),
    companyId: z.string().nullable().openapi({ description: "The one company the key reaches, or null." }),
    expiresAt: z.string().nullable(),
    expired: z.boolean(),
    keyPrefix: z.string().openapi({ description: "The key's first characters, to tell keys apart." }),
    last4: z.string(),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    key: z
      .string()
      .nullable()
      .openapi({ description: "The full key: only in the POST response, else null. Send it as X-API-Key." }),
  })
  .openapi("ScopedKey");

export const ScopedKeyIdParamsSchema = z.object({
  keyId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "keyId", in: "path" } }),
});
