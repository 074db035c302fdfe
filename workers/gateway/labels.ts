import { createRoute, z } from "@hono/zod-openapi";
import { LABEL_COLORS } from "../../durable-objects/messaging/labels/store";
import { ok } from "../http/envelope";
import {
  authenticated,
  createRouter,
  errorResponse,
  gatewayErrors,
  gatewayOk,
  json,
  jsonBody,
} from "../http/openapi";
import { ChatParamsSchema, SessionParamSchema } from "./messages";
import { accessibleSession, callSession } from "./sessions";

/**
 * Labels for chats: WhatsApp's (Business) labels, changed on WhatsApp first while it is connected and
 * kept by the session (so they also work, locally, without a connection). Mounted at /api, so it owns
 * /labels/… and /chats/{sessionId}/by-label/{labelId}.
 */
export const labelsRoutes = createRouter();
const tags = ["Labels"];

const errors = {
  ...gatewayErrors,
  403: errorResponse("Forbidden - Cannot access this session"),
  404: errorResponse("Session or label not found"),
} as const;

const LabelSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    color: z
      .number()
      .int()
      .openapi({ description: `Index into the ${LABEL_COLORS.length}-colour palette` }),
    colorHex: z.string().openapi({ example: "#FF0000" }),
    predefinedId: z.null(),
    createdAt: z.string(),
    updatedAt: z.string(),
    chatCount: z.number().int(),
  })
  .openapi("Label");

const LabelName = z.string().trim().min(1).max(100);
const LabelColor = z
  .number()
  .int()
  .min(0)
  .max(LABEL_COLORS.length - 1);
const LabelParamsSchema = SessionParamSchema.extend({
  labelId: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: "labelId", in: "path" } }),
});

const LabelsData = z.object({ labels: z.array(LabelSchema) });
const LabelData = z.object({ label: LabelSchema });

labelsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/labels/{sessionId}",
    tags,
    summary: "The session's labels with how many chats carry each",
    security: authenticated,
    request: { params: SessionParamSchema },
    responses: { 200: json(gatewayOk(LabelsData), "Labels"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    return c.json(ok("Labels retrieved", await callSession(c.env, session, "label.list", {})), 200);
  },
);

labelsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/labels/{sessionId}",
    tags,
    summary: "Create a label (name unique per session, ignoring case)",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      ...jsonBody(z.strictObject({ name: LabelName, color: LabelColor.optional() })),
    },
    responses: {
      200: json(gatewayOk(LabelData), "Created"),
      ...errors,
      409: errorResponse("A label with this name exists"),
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    return c.json(
      ok("Label created", await callSession(c.env, session, "label.create", c.req.valid("json"))),
      200,
    );
  },
);

labelsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/labels/{sessionId}/chat/{jid}/labels",
    tags,
    summary: "The labels of one chat",
    security: authenticated,
    request: { params: ChatParamsSchema },
    responses: { 200: json(gatewayOk(LabelsData), "The chat's labels"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(
      ok("Chat labels retrieved", await callSession(c.env, session, "label.chat.list", { jid })),
      200,
    );
  },
);

labelsRoutes.openapi(
  createRoute({
    method: "put",
    path: "/labels/{sessionId}/chat/{jid}/labels",
    tags,
    summary: "Add labels to a chat or remove them (all or nothing: an unknown label id changes nothing)",
    security: authenticated,
    request: {
      params: ChatParamsSchema,
      ...jsonBody(
        z.strictObject({
          labelIds: z.array(z.string().min(1).max(64)).min(1).max(100),
          action: z.enum(["add", "remove"]),
        }),
      ),
    },
    responses: { 200: json(gatewayOk(LabelsData), "The chat's labels after the change"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "label.chat.set", { jid, ...c.req.valid("json") });
    return c.json(ok("Chat labels updated", data), 200);
  },
);

labelsRoutes.openapi(
  createRoute({
    method: "put",
    path: "/labels/{sessionId}/{labelId}",
    tags,
    summary: "Rename or recolour a label",
    security: authenticated,
    request: {
      params: LabelParamsSchema,
      ...jsonBody(
        z
          .strictObject({ name: LabelName.optional(), color: LabelColor.optional() })
          .refine((body) => body.name !== undefined || body.color !== undefined, {
            message: "Send name, color or both",
          }),
      ),
    },
    responses: {
      200: json(gatewayOk(LabelData), "Updated"),
      ...errors,
      409: errorResponse("A label with this name exists"),
    },
  }),
  async (c) => {
    const { sessionId, labelId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "label.update", { labelId, ...c.req.valid("json") });
    return c.json(ok("Label updated", data), 200);
  },
);

labelsRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/labels/{sessionId}/{labelId}",
    tags,
    summary: "Delete a label and its chat assignments",
    security: authenticated,
    request: { params: LabelParamsSchema },
    responses: { 200: json(gatewayOk(z.object({ id: z.string() })), "Deleted"), ...errors },
  }),
  async (c) => {
    const { sessionId, labelId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(ok("Label deleted", await callSession(c.env, session, "label.delete", { labelId })), 200);
  },
);

labelsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/chats/{sessionId}/by-label/{labelId}",
    tags,
    summary: "The chats carrying a label",
    security: authenticated,
    request: { params: LabelParamsSchema },
    responses: {
      200: json(
        gatewayOk(z.object({ label: LabelSchema, chats: z.array(z.string()), count: z.number().int() })),
        "The label and its chats",
      ),
      ...errors,
    },
  }),
  async (c) => {
    const { sessionId, labelId } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(ok("Chats retrieved", await callSession(c.env, session, "label.chats", { labelId })), 200);
  },
);
