import { z } from "zod";
import type {
  EPHEMERAL_SECONDS,
  GROUP_ACTIONS,
  GROUP_SETTINGS,
} from "../../../bridge/src/protocol/messaging";
import { GroupInfoSchema } from "../../../bridge/src/protocol/messaging";
import { ParticipantResultSchema } from "../../../bridge/src/protocol/operations";
import type { Json } from "../../../bridge/src/protocol/seam";
import { failure, type Outcome, type SessionContext, success } from "../context";
import { type PictureUpload, removePicture, setPicture } from "../profile/api";
import {
  changeParticipants,
  deleteGroup,
  findGroup,
  type GroupResource,
  listGroups,
  mergeGroup,
  ownJid,
} from "./table";

export type { GroupResource } from "./table";
export { applyGroupsEvent, applyParticipantsEvent, GROUPS_SCHEMA } from "./table";

/**
 * Group operations. Each one that changes a group also writes the change to the local store right
 * away, so the next list shows it without waiting for WhatsApp's echo (which then changes nothing).
 */

export type GroupAction = (typeof GROUP_ACTIONS)[number];
export type GroupSetting = (typeof GROUP_SETTINGS)[number];
export type Expiration = (typeof EPHEMERAL_SECONDS)[number];

export const EXPIRATION_LABELS: Record<Expiration, string> = {
  0: "Off",
  86400: "24 hours",
  604800: "7 days",
  7776000: "90 days",
};

export const inviteUrl = (code: string) => `https://chat.whatsapp.com/${code}`;

const CodeSchema = z.object({ code: z.string().min(1) });
const JoinedSchema = z.object({ jid: z.string().min(1) });
const outsideProtocol = () => failure(500, "The bridge answered outside the protocol");

function parse<T>(schema: z.ZodType<T>, data: Json): Outcome<T> {
  const parsed = schema.safeParse(data);
  return parsed.success ? success(parsed.data) : outsideProtocol();
}

/** Stores the group as WhatsApp now describes it; a group WhatsApp no longer shows us is dropped. */
async function refresh(ctx: SessionContext, jid: string): Promise<Outcome<GroupResource>> {
  const result = await ctx.wa({ op: "group.metadata", jid });
  if (!result.ok) {
    if (result.status === 404) deleteGroup(ctx.sql, jid);
    return result;
  }
  const info = parse(GroupInfoSchema, result.data);
  if (!info.ok) return info;
  mergeGroup(ctx, info.data, "upsert");
  const stored = findGroup(ctx.sql, jid);
  return stored ? success(stored) : outsideProtocol();
}

async function inviteCode(
  ctx: SessionContext,
  op: "group.invite" | "group.invite.revoke",
  jid: string,
): Promise<Outcome<{ inviteCode: string; inviteUrl: string }>> {
  const result = await ctx.wa({ op, jid });
  if (!result.ok) return result;
  const parsed = parse(CodeSchema, result.data);
  if (!parsed.ok) return parsed;
  const { code } = parsed.data;
  if (findGroup(ctx.sql, jid)) mergeGroup(ctx, { jid, inviteCode: code }, "update");
  return success({ inviteCode: code, inviteUrl: inviteUrl(code) });
}

type Target = { jid: string };

export const groupsApi = {
  "group.list": (ctx: SessionContext, _input: Record<string, never>): Outcome<GroupResource[]> =>
    success(listGroups(ctx.sql)),

  "group.create": async (
    ctx: SessionContext,
    input: { subject: string; participants: string[] },
  ): Promise<Outcome<{ group: GroupResource }>> => {
    const result = await ctx.wa({
      op: "group.create",
      subject: input.subject,
      participants: input.participants,
    });
    if (!result.ok) return result;
    const info = parse(GroupInfoSchema, result.data);
    if (!info.ok) return info;
    mergeGroup(ctx, info.data, "upsert");
    const group = findGroup(ctx.sql, info.data.jid);
    return group ? success({ group }) : outsideProtocol();
  },

  "group.get": async (
    ctx: SessionContext,
    { jid }: Target,
  ): Promise<Outcome<GroupResource & { pictureUrl: string | null }>> => {
    const group = await refresh(ctx, jid);
    if (!group.ok) return group;
    const picture = await ctx.wa({ op: "profile.picture.url", jid });
    const url = picture.ok ? (picture.data as { url?: unknown } | null)?.url : null;
    return success({ ...group.data, pictureUrl: typeof url === "string" ? url : null });
  },

  "group.subject": async (
    ctx: SessionContext,
    input: Target & { subject: string },
  ): Promise<Outcome<{ subject: string }>> => {
    const result = await ctx.wa({ op: "group.subject", jid: input.jid, subject: input.subject });
    if (!result.ok) return result;
    mergeGroup(ctx, { jid: input.jid, subject: input.subject }, "update");
    return success({ subject: input.subject });
  },

  "group.description": async (
    ctx: SessionContext,
    input: Target & { description: string },
  ): Promise<Outcome<{ description: string | null }>> => {
    const result = await ctx.wa({ op: "group.description", jid: input.jid, description: input.description });
    if (!result.ok) return result;
    const description = input.description || null;
    mergeGroup(ctx, { jid: input.jid, description }, "update");
    return success({ description });
  },

  "group.members": async (
    ctx: SessionContext,
    input: Target & { action: GroupAction; participants: string[] },
  ): Promise<Outcome<{ result: z.infer<typeof ParticipantResultSchema> }>> => {
    const answer = await ctx.wa({ op: "group.participants", ...input });
    if (!answer.ok) return answer;
    const result = parse(ParticipantResultSchema, answer.data);
    if (!result.ok) return result;
    const changed = result.data.filter((entry) => entry.status === "200").map((entry) => entry.jid);
    // Unknown groups are left to the network's event, which carries the change exactly once.
    const me = ownJid(ctx.sql);
    if (changed.length > 0 && findGroup(ctx.sql, input.jid)) {
      changeParticipants(ctx, { ...input, participants: changed, ...(me ? { author: me } : {}) });
    }
    return success({ result: result.data });
  },

  "group.invite": (ctx: SessionContext, { jid }: Target) => inviteCode(ctx, "group.invite", jid),

  "group.invite.revoke": (ctx: SessionContext, { jid }: Target) =>
    inviteCode(ctx, "group.invite.revoke", jid),

  "group.invite.accept": async (
    ctx: SessionContext,
    input: { inviteCode: string },
  ): Promise<Outcome<{ groupJid: string }>> => {
    const result = await ctx.wa({ op: "group.invite.accept", code: input.inviteCode });
    if (!result.ok) return result;
    const joined = parse(JoinedSchema, result.data);
    if (!joined.ok) return joined;
    // Joined either way; a failed fetch only means the list waits for WhatsApp's own event.
    await refresh(ctx, joined.data.jid);
    return success({ groupJid: joined.data.jid });
  },

  "group.settings": async (
    ctx: SessionContext,
    input: Target & { setting: GroupSetting },
  ): Promise<Outcome<{ setting: GroupSetting; announce: boolean | null; restrict: boolean | null }>> => {
    const result = await ctx.wa({ op: "group.setting", jid: input.jid, setting: input.setting });
    if (!result.ok) return result;
    const patch =
      input.setting === "announcement" || input.setting === "not_announcement"
        ? { announce: input.setting === "announcement" }
        : { restrict: input.setting === "locked" };
    mergeGroup(ctx, { jid: input.jid, ...patch }, "update");
    const group = findGroup(ctx.sql, input.jid);
    return success({
      setting: input.setting,
      announce: group?.announce ?? null,
      restrict: group?.restrict ?? null,
    });
  },

  "group.ephemeral": async (
    ctx: SessionContext,
    input: Target & { expiration: Expiration },
  ): Promise<Outcome<{ expiration: Expiration; expirationLabel: string }>> => {
    const result = await ctx.wa({ op: "group.ephemeral", jid: input.jid, expiration: input.expiration });
    if (!result.ok) return result;
    mergeGroup(ctx, { jid: input.jid, ephemeral: input.expiration }, "update");
    return success({ expiration: input.expiration, expirationLabel: EXPIRATION_LABELS[input.expiration] });
  },

  "group.picture.set": (ctx: SessionContext, input: Target & PictureUpload) =>
    setPicture(ctx, input.jid, { bytes: input.bytes, mimetype: input.mimetype, fileName: input.fileName }),

  "group.picture.remove": (ctx: SessionContext, { jid }: Target) => removePicture(ctx, jid),

  /** The row goes now; `group.participant` comes from WhatsApp's own report of the leave. */
  "group.leave": async (ctx: SessionContext, { jid }: Target): Promise<Outcome> => {
    const result = await ctx.wa({ op: "group.leave", jid });
    if (!result.ok) return result;
    deleteGroup(ctx.sql, jid);
    return success(null);
  },
};
