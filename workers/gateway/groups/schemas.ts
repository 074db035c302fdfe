import { z } from "@hono/zod-openapi";
import { GROUP_JID } from "../../../bridge/src/protocol/messaging";
import { SessionParamSchema } from "../messages";

/** Shapes shared by the group routes (routes.ts, admin.ts). */

export const GroupParamsSchema = SessionParamSchema.extend({
  // Built here, not from the bridge's schema: zod 4 gives `.openapi()` only to schemas created after
  // @hono/zod-openapi is loaded, and the protocol module may load first.
  jid: z
    .string()
    .regex(GROUP_JID, "must be <digits>@g.us")
    .openapi({
      param: { name: "jid", in: "path" },
      description: "URL-encoded group JID (`<digits>@g.us`)",
      example: "120363012345678901@g.us",
    }),
});

const ParticipantSchema = z.object({ id: z.string(), admin: z.enum(["admin", "superadmin"]).nullable() });

export const GroupSchema = z
  .object({
    id: z.string().openapi({ description: "The group JID (the spec's name; same as `jid`)" }),
    jid: z.string(),
    subject: z.string(),
    desc: z
      .string()
      .nullable()
      .openapi({ description: "The description (the spec's name; same as `description`)" }),
    description: z.string().nullable(),
    owner: z.string().nullable(),
    size: z.number().int(),
    isCommunity: z.boolean().openapi({ description: "True for a community's announcement group" }),
    linkedParentJid: z.string().nullable().openapi({ description: "The parent community of a sub-group" }),
    participants: z.array(ParticipantSchema),
    announce: z.boolean().openapi({ description: "Only admins may send" }),
    restrict: z.boolean().openapi({ description: "Only admins may edit the group info" }),
    ephemeral: z.number().int().openapi({ description: "Disappearing-messages timer in seconds; 0 is off" }),
    creation: z.number().int().nullable().openapi({ description: "Epoch seconds" }),
    inviteCode: z.string().nullable().openapi({ description: "Last invite code this session fetched" }),
  })
  .openapi("Group");

export const GroupDetailSchema = GroupSchema.extend({ pictureUrl: z.string().nullable() }).openapi(
  "GroupDetail",
);

export const InviteSchema = z.object({
  inviteCode: z.string(),
  inviteUrl: z.string().openapi({ example: "https://chat.whatsapp.com/AbCdEf123456" }),
});
