import { createRoute, z } from "@hono/zod-openapi";
import {
  EPHEMERAL_SECONDS,
  GROUP_ACTIONS,
  GROUP_SETTINGS,
  PersonJidSchema,
} from "../../../bridge/src/protocol/messaging";
import { ok } from "../../http/envelope";
import { authenticated, createRouter, gatewayOk, json, jsonBody } from "../../http/openapi";
import { pictureBody, pictureErrors, readPicture } from "../../http/picture-upload";
import { messagingErrors } from "../messages";
import { accessibleSession, callSession } from "../sessions";
import { GroupParamsSchema, InviteSchema } from "./schemas";

/**
 * Changes to one group: subject, description, members, invite link, settings, disappearing messages
 * and picture. Most need the account to be a group admin (403 otherwise, as WhatsApp answers).
 */
export const groupAdminRoutes = createRouter();
const tags = ["Groups"];
const errors = messagingErrors;
const params = GroupParamsSchema;

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/subject",
    tags,
    summary: "Rename a group",
    security: authenticated,
    request: { params, ...jsonBody(z.strictObject({ subject: z.string().trim().min(1).max(100) })) },
    responses: { 200: json(gatewayOk(z.object({ subject: z.string() })), "Renamed"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "group.subject", { jid, ...c.req.valid("json") });
    return c.json(ok("Group subject updated", data), 200);
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/description",
    tags,
    summary: "Set a group's description; an empty string removes it",
    security: authenticated,
    request: { params, ...jsonBody(z.strictObject({ description: z.string().max(512) })) },
    responses: { 200: json(gatewayOk(z.object({ description: z.string().nullable() })), "Set"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "group.description", { jid, ...c.req.valid("json") });
    return c.json(
      ok(data.description ? "Group description updated" : "Group description removed", data),
      200,
    );
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/members",
    tags,
    summary: "Add, remove, promote or demote members",
    description:
      'Each participant gets its own `status` in `result`: "200" done, "403" not allowed, "404" not a member, ' +
      '"409" already a member.',
    security: authenticated,
    request: {
      params,
      ...jsonBody(
        z.strictObject({
          action: z.enum(GROUP_ACTIONS),
          participants: z.array(PersonJidSchema).min(1).max(1024),
        }),
      ),
    },
    responses: {
      200: json(
        gatewayOk(z.object({ result: z.array(z.object({ jid: z.string(), status: z.string() })) })),
        "Per-participant results",
      ),
      ...errors,
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const body = c.req.valid("json");
    const data = await callSession(c.env, session, "group.members", { jid, ...body });
    return c.json(ok(`Participants ${body.action} processed`, data), 200);
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "get",
    path: "/{sessionId}/{jid}/invite",
    tags,
    summary: "The group's invite code and link",
    security: authenticated,
    request: { params },
    responses: { 200: json(gatewayOk(InviteSchema), "Invite link"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    return c.json(
      ok("Invite code retrieved", await callSession(c.env, session, "group.invite", { jid })),
      200,
    );
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/invite",
    tags,
    summary: "Revoke the invite link; answers the new one",
    security: authenticated,
    request: { params },
    responses: { 200: json(gatewayOk(InviteSchema), "The new invite link"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "group.invite.revoke", { jid });
    return c.json(ok("Invite code revoked", data), 200);
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/settings",
    tags,
    summary: "Who may send (announcement / not_announcement) and who may edit the info (locked / unlocked)",
    security: authenticated,
    request: { params, ...jsonBody(z.strictObject({ setting: z.enum(GROUP_SETTINGS) })) },
    responses: {
      200: json(
        gatewayOk(
          z.object({
            setting: z.enum(GROUP_SETTINGS),
            announce: z.boolean().nullable(),
            restrict: z.boolean().nullable(),
          }),
        ),
        "Changed",
      ),
      ...errors,
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "group.settings", { jid, ...c.req.valid("json") });
    return c.json(ok("Group settings updated", data), 200);
  },
);

const ExpirationSchema = z.union(EPHEMERAL_SECONDS.map((seconds) => z.literal(seconds))).openapi({
  type: "integer",
  enum: [...EPHEMERAL_SECONDS],
  description: "Seconds: off, 24 h, 7 days, 90 days",
});

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/ephemeral",
    tags,
    summary: "Disappearing messages: 0 (off), 86400, 604800 or 7776000 seconds",
    security: authenticated,
    request: { params, ...jsonBody(z.strictObject({ expiration: ExpirationSchema })) },
    responses: {
      200: json(
        gatewayOk(z.object({ expiration: ExpirationSchema, expirationLabel: z.string() })),
        "Changed; `expirationLabel` is Off, 24 hours, 7 days or 90 days",
      ),
      ...errors,
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const data = await callSession(c.env, session, "group.ephemeral", { jid, ...c.req.valid("json") });
    return c.json(ok(`Disappearing messages: ${data.expirationLabel}`, data), 200);
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "put",
    path: "/{sessionId}/{jid}/picture",
    tags,
    summary: "Set the group's picture (multipart `file`: an image up to 5 MiB)",
    security: authenticated,
    request: { params, ...pictureBody },
    responses: {
      200: json(gatewayOk(z.object({ pictureUrl: z.string().nullable() })), "Set"),
      ...errors,
      ...pictureErrors,
    },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    const picture = await readPicture(c.req.valid("form").file);
    const data = await callSession(c.env, session, "group.picture.set", { jid, ...picture });
    return c.json(ok("Group picture updated", data), 200);
  },
);

groupAdminRoutes.openapi(
  createRoute({
    method: "delete",
    path: "/{sessionId}/{jid}/picture",
    tags,
    summary: "Remove the group's picture",
    security: authenticated,
    request: { params },
    responses: { 200: json(gatewayOk(z.null()), "Removed"), ...errors },
  }),
  async (c) => {
    const { sessionId, jid } = c.req.valid("param");
    const session = await accessibleSession(c, sessionId);
    await callSession(c.env, session, "group.picture.remove", { jid });
    return c.json(ok("Group picture removed", null), 200);
  },
);
