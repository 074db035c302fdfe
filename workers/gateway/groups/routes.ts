import { createRoute, z } from "@hono/zod-openapi";
import { PersonJidSchema } from "../../../bridge/src/protocol/messaging";
import { ok } from "../../http/envelope";
import { authenticated, createRouter, errorResponse, gatewayOk, json, jsonBody } from "../../http/openapi";
import { messagingErrors, SessionParamSchema } from "../messages";
import { accessibleSession, callSession } from "../sessions";
import { groupAdminRoutes } from "./admin";
import { GroupDetailSchema, GroupParamsSchema, GroupSchema } from "./schemas";

/**
 * Groups: the list (from the local store, kept in sync by WhatsApp's events), creating, joining,
 * reading and leaving; changes to one group are in admin.ts. Mounted at /api/groups.
 */
export const groupsRoutes = createRouter();
const tags = ["Groups"];
const errors = messagingErrors;

groupsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}",
    tags,
    summary: "Groups the account is in, by subject (from the local store: works while disconnected)",
    security: authenticated,
    request: { params: SessionParamSchema },
    responses: {
      200: json(gatewayOk(z.array(GroupSchema)), "Groups"),
      ...errors,
      404: errorResponse("Session not found"),
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    return c.json(ok("Groups retrieved", await callSession(c.env, session, "group.list", {})), 200);
  },
);

// Two-segment paths under {sessionId} first, before the `/{sessionId}/{jid}` family.
groupsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/create",
    tags,
    summary: "Create a group with the account as its owner",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      ...jsonBody(
        z.strictObject({
          subject: z.string().trim().min(1).max(100),
          participants: z.array(PersonJidSchema).min(1).max(1024),
        }),
      ),
    },
    responses: { 200: json(gatewayOk(z.object({ group: GroupSchema })), "Created"), ...errors },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "group.create", c.req.valid("json"));
    return c.json(ok("Group created successfully", data), 200);
  },
);

groupsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/invite/accept",
    tags,
    summary: "Join a group with an invite code (the part after https://chat.whatsapp.com/)",
    security: authenticated,
    request: {
      params: SessionParamSchema,
      ...jsonBody(
        z.strictObject({
          inviteCode: z
            .string()
            .regex(/^[A-Za-z0-9]{6,64}$/, "the code after https://chat.whatsapp.com/")
            .openapi({ example: "AbCdEf123456" }),
        }),
      ),
    },
    responses: {
      200: json(gatewayOk(z.object({ groupJid: z.string() })), "Joined"),
      ...errors,
      400: errorResponse("Invalid request, or an invalid or expired invite code"),
    },
  }),
  async (c) => {
    const session = await accessibleSession(c, c.req.valid("param").sessionId);
    const data = await callSession(c.env, session, "group.invite.accept", c.req.valid("json"));
    return c.json(ok("Joined the group", data), 200);
  },
);

groupsRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/{jid}",
    tags,
    summary: "One group as WhatsApp has it now (also refreshes the stored copy), with its picture",
    security: authenticated,
    request: { params: GroupParamsSchema },
    responses: { 200: json(gatewayOk(GroupDetailSchema), "The group"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(ok("Group retrieved", await callSession(c.env, session, "group.get", { jid })), 200);
  },
);

groupsRoutes.openapi(
  createRoute({
    method: "post",
    path: "/{sessionId}/{jid}/leave",
    tags,
    summary: "Leave a group",
    security: authenticated,
    request: { params: GroupParamsSchema },
    responses: { 200: json(gatewayOk(z.null()), "Left"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "group.leave", { jid });
    return c.json(ok("Successfully left the group", null), 200);
  },
);

groupsRoutes.route("/", groupAdminRoutes);
