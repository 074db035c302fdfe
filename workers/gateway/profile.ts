import { createRoute, z } from "@hono/zod-openapi";
import { PersonJidSchema } from "../../bridge/src/protocol/messaging";
import { ok } from "../http/envelope";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../http/openapi";
import { pictureBody, pictureErrors, readPicture } from "../http/picture-upload";
import { MessageResourceSchema, messagingErrors, SessionParamSchema } from "./messages";
import { accessibleSession, callSession } from "./sessions";

/** The account's own profile (name, about, picture) and status posts. Mounted at /api. */
export const profileRoutes = createRouter();
const tags = ["Profile"];
const errors = messagingErrors;

const ProfileSchema = z
  .object({ name: z.string().nullable(), status: z.string().nullable(), pictureUrl: z.string().nullable() })
  .openapi("Profile");
const PictureResultSchema = z.object({ pictureUrl: z.string().nullable() });

profileRoutes.openapi(
  createRoute({
    method: "get",
    path: "/profile/{sessionId}",
    tags,
    summary: "The account's name, about text and picture (asks WhatsApp)",
    security: authenticated,
    request: { params: SessionParamSchema },
    responses: { 200: json(gatewayOk(ProfileSchema), "The profile"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    return c.json(ok("Profile retrieved", await callSession(c.env, session, "profile.get", {})), 200);
  },
);

profileRoutes.openapi(
  createRoute({
    method: "put",
    path: "/profile/{sessionId}/name",
    tags,
    summary: "Change the account's display name (push name)",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      ...jsonBody(z.strictObject({ name: z.string().trim().min(1).max(25) })),
    },
    responses: { 200: json(gatewayOk(z.object({ name: z.string() })), "Changed"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "profile.name", c.req.valid("json"));
    return c.json(ok("Profile name updated", data), 200);
  },
);

profileRoutes.openapi(
  createRoute({
    method: "put",
    path: "/profile/{sessionId}/status",
    tags,
    summary: "Change the account's about text (empty clears it)",
    security: authenticated,
    request: { params: SessionParamSchema, ...jsonBody(z.strictObject({ status: z.string().max(139) })) },
    responses: { 200: json(gatewayOk(z.object({ status: z.string() })), "Changed"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "profile.status", c.req.valid("json"));
    return c.json(ok("Profile status updated", data), 200);
  },
);

profileRoutes.openapi(
  createRoute({
    method: "put",
    path: "/profile/{sessionId}/picture",
    tags,
    summary: "Set the account's picture (multipart `file`: an image up to 5 MiB)",
    security: authenticated,
    request: { params: SessionParamSchema, ...pictureBody },
    responses: { 200: json(gatewayOk(PictureResultSchema), "Set"), ...errors, ...pictureErrors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const picture = await readPicture(c.req.valid("form").file);
    const data = await callSession(c.env, session, "profile.picture.set", picture);
    return c.json(ok("Profile picture updated", data), 200);
  },
);

profileRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/profile/{sessionId}/picture",
    tags,
    summary: "Remove the account's picture",
    security: authenticated,
    request: { params: SessionParamSchema },
    responses: { 200: json(gatewayOk(z.null()), "Removed"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    await callSession(c.env, session, "profile.picture.remove", {});
    return c.json(ok("Profile picture removed", null), 200);
  },
);

const STATUS_TYPES = ["TEXT", "IMAGE", "VIDEO"] as const;

const StatusBodySchema = z
  .strictObject({
    content: z
      .string()
      .max(65_536)
      .openapi({ description: "The text of a TEXT post; the caption otherwise" }),
    type: z.enum(STATUS_TYPES).default("TEXT"),
    mediaUrl: z
      .url({ protocol: /^https?$/ })
      .max(2048)
      .optional()
      .openapi({ description: "Required for IMAGE and VIDEO: fetched by the bridge" }),
    backgroundColor: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/, "must be #RRGGBB")
      .optional(),
    font: z.number().int().min(0).max(10).optional(),
    mentions: z
      .array(PersonJidSchema)
      .max(5000)
      .optional()
      .openapi({
        description:
          "Who may see the post (WhatsApp's status audience). Omitted or empty: the session's contacts " +
          "known by phone number and not blocked, the 1000 most recently updated",
      }),
  })
  .superRefine((body, issues) => {
    if (body.type === "TEXT") {
      if (body.content.trim() === "")
        issues.addIssue({ code: "custom", path: ["content"], message: "required" });
      if (body.mediaUrl)
        issues.addIssue({ code: "custom", path: ["mediaUrl"], message: "only for IMAGE or VIDEO" });
      return;
    }
    if (!body.mediaUrl)
      issues.addIssue({ code: "custom", path: ["mediaUrl"], message: `required for ${body.type}` });
    if (body.content.length > 4096) {
      issues.addIssue({
        code: "custom",
        path: ["content"],
        message: "a caption has at most 4096 characters",
      });
    }
  })
  .openapi("StatusPostBody");

profileRoutes.openapi(
  createRoute({
    method: "post",
    path: "/status/{sessionId}/update",
    tags,
    summary: "Post a status (story): text, or an image or video by URL",
    security: authenticated,
    request: { params: SessionParamSchema, ...jsonBody(StatusBodySchema) },
    responses: {
      200: json(gatewayOk(MessageResourceSchema), "Posted"),
      ...errors,
      409: errorResponse("No `mentions` and no phone-number contacts: nobody would see the post"),
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "status.post", c.req.valid("json"));
    return c.json(ok("Status posted", data), 200);
  },
);
