import { z } from "@hono/zod-openapi";
import { ROLES } from "../db/schema";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "./passwords";

export const RoleSchema = z
  .enum(ROLES)
  .openapi({ description: "SUPERADMIN manages users and sees every session." });
export const EmailSchema = z.email().max(254).openapi({ example: "admin@example.com" });
export const NewPasswordSchema = z.string().min(PASSWORD_MIN_LENGTH).max(PASSWORD_MAX_LENGTH);
const NameSchema = z.string().trim().min(1).max(100);
const ImageSchema = z.url().max(2048).nullable();

export const PublicUserSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    image: z.string().nullable(),
    role: RoleSchema,
  })
  .openapi("PublicUser");

export const UserSchema = PublicUserSchema.extend({ createdAt: z.string(), updatedAt: z.string() }).openapi(
  "User",
);

export const LoginBodySchema = z
  .strictObject({ email: EmailSchema, password: z.string().min(1).max(PASSWORD_MAX_LENGTH) })
  .openapi("LoginBody");

export const WebSessionSchema = z
  .object({
    user: PublicUserSchema,
    expires: z.string().nullable().openapi({
      description:
        "When the browser session ends; null for API-key callers (a scoped key's expiry is in GET /api/user/keys).",
    }),
  })
  .openapi("WebSession");

export const CsrfSchema = z.object({ csrfToken: z.string() }).openapi("Csrf");

export const SecurityNoticeSchema = z
  .object({
    id: z.string(),
    kind: z.enum(["login_locked"]),
    at: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
  })
  .openapi("SecurityNotice", {
    description: "Something that happened to your account since you last signed in (a login lockout).",
  });

export const LoginResultSchema = WebSessionSchema.extend({
  ...CsrfSchema.shape,
  securityNotices: z.array(SecurityNoticeSchema).openapi({
    description: "Security events about this account not shown before (each is shown once).",
  }),
}).openapi("LoginResult");

export const CreateUserBodySchema = z
  .strictObject({
    name: NameSchema,
    email: EmailSchema,
    password: NewPasswordSchema,
    role: RoleSchema.default("OWNER"),
    image: ImageSchema.optional(),
  })
  .openapi("CreateUserBody");

export const PatchUserBodySchema = z
  .strictObject({
    name: NameSchema.optional(),
    email: EmailSchema.optional(),
    password: NewPasswordSchema.optional(),
    role: RoleSchema.optional(),
    image: ImageSchema.optional(),
  })
  .refine((patch) => Object.keys(patch).length > 0, { message: "Send at least one field to change" })
  .openapi("PatchUserBody");

export const UserIdParamsSchema = z.object({
  id: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "id", in: "path" } }),
});

export const ApiKeyStatusSchema = z
  .object({
    apiKey: z
      .string()
      .nullable()
      .openapi({ description: "The full key: only in the POST response, else null." }),
    apiKeySet: z.boolean(),
    hidden: z.boolean().openapi({ description: "True when a key exists but is no longer shown." }),
  })
  .openapi("ApiKeyStatus");
