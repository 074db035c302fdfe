import { z } from "@hono/zod-openapi";
import { SECRET_KEY_MAX, SECRET_KEY_PATTERN, SECRET_VALUE_MAX_BYTES, utf8Length } from "./store";

/** Request and response shapes of the secret routes (routes.ts). Values are write-only. */

const SecretName = z.string().trim().min(1).max(200);
const Description = z.string().trim().max(2000).nullable();

const SecretValue = z
  .string()
  .min(1, "value must not be empty")
  .refine(
    (value) => utf8Length(value) <= SECRET_VALUE_MAX_BYTES,
    `value must be at most ${SECRET_VALUE_MAX_BYTES} bytes`,
  )
  .openapi({ description: "Write-only: never returned by any endpoint" });

export const CreateSecretBodySchema = z
  .strictObject({
    name: SecretName,
    key: z
      .string()
      .min(1)
      .max(SECRET_KEY_MAX)
      .regex(SECRET_KEY_PATTERN, "key may contain only a-z, 0-9, _, . and -")
      .optional()
      .openapi({ description: 'Unique per company; default: the name lower-cased, other characters → "_"' }),
    value: SecretValue,
    description: Description.optional(),
  })
  .openapi("CreateSecretBody");

export const UpdateSecretBodySchema = z
  .strictObject({
    value: SecretValue.optional().openapi({ description: "A new value becomes version latestVersion + 1" }),
    name: SecretName.optional(),
    description: Description.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, "send at least one of value, name, description")
  .openapi("UpdateSecretBody");

export const SecretSchema = z
  .object({
    id: z.string(),
    companyId: z.string(),
    name: z.string(),
    key: z.string(),
    description: z.string().nullable(),
    latestVersion: z.number().int(),
    createdByUserId: z.string().nullable(),
    createdByAgentId: z.string().nullable(),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Secret");

export const SecretParamSchema = z.object({ secretId: z.string().min(1).max(64) });
