/**
 * WhatsApp operations: what the edge asks a bridge to do on the account (the `wa` command), and what
 * each answers. Validated on both ends; imports nothing but zod and the messaging shapes.
 *
 * A failed operation answers `ok: false` with an HTTP-like `status` the edge passes on:
 * 400 the network refused the input (message too old to delete, bad invite code), 403 the account
 * lacks the right (not a group admin), 404 no such group or message, 500 anything else.
 */
import { z } from "zod";
import {
  AnyJidSchema,
  ChatJidSchema,
  EPHEMERAL_SECONDS,
  GROUP_ACTIONS,
  GROUP_SETTINGS,
  GroupJidSchema,
  LID_JID,
  MEDIA_MAX_BYTES,
  MediaSourceSchema,
  MessageRefSchema,
  OutgoingContentSchema,
  PersonJidSchema,
  PRESENCES,
  WaLabelSchema,
} from "./messaging.ts";

/** A size cap the edge sets on one transfer (bytes), never above the gateway's own. */
const MaxBytesSchema = z.number().int().positive().max(MEDIA_MAX_BYTES).optional();

const op = <N extends string, S extends z.ZodRawShape>(name: N, shape: S) =>
  z.object({ op: z.literal(name), ...shape });

export const OperationSchema = z.discriminatedUnion("op", [
  /** `messageId` is chosen by the edge so a retried send is the same message (WhatsApp dedups by id). */
  op("send", {
    to: z.union([ChatJidSchema, z.literal("status@broadcast")]),
    messageId: z.string().min(8).max(64),
    content: OutgoingContentSchema,
    quoted: MessageRefSchema.optional(),
    /** For status posts: who may see it. */
    statusJidList: z.array(PersonJidSchema).max(5000).optional(),
    backgroundColor: z.string().max(16).optional(),
    font: z.number().int().min(0).max(10).optional(),
    /** The edge's limit for this media's kind (MEDIA_LIMITS_MB); absent, the kind's default applies. */
    maxBytes: MaxBytesSchema,
  }),
  op("forward", { to: ChatJidSchema, messageId: z.string().min(8).max(64), message: MessageRefSchema }),
  op("react", { target: MessageRefSchema, emoji: z.string().max(32) }),
  op("delete", { target: MessageRefSchema }),
  op("edit", { target: MessageRefSchema, text: z.string().min(1).max(65_536) }),
  op("star", { target: MessageRefSchema, star: z.boolean() }),
  op("read", { chat: AnyJidSchema, targets: z.array(MessageRefSchema).max(1000) }),
  op("chat.modify", {
    chat: ChatJidSchema,
    action: z.enum(["archive", "unarchive", "mute", "unmute", "pin", "unpin"]),
    /** Epoch ms; for mute. */
    muteUntil: z.number().int().optional(),
    lastMessage: MessageRefSchema.optional(),
  }),
  op("presence", { chat: ChatJidSchema, presence: z.enum(PRESENCES) }),
  /** Ask WhatsApp for a contact's presence (online, last seen, typing): `presence` events follow. */
  op("presence.subscribe", {
    jid: z.union([PersonJidSchema, z.string().regex(LID_JID, "must be <digits>@lid")]),
  }),
  /** The account online (`available`) or not to everyone: the session's `alwaysOnline`. */
  op("availability", { online: z.boolean() }),
  op("profile.picture.url", { jid: AnyJidSchema }),
  /** ONE batched lookup for all numbers (digits only, country code first). */
  op("numbers.check", {
    numbers: z
      .array(z.string().regex(/^\d{5,20}$/))
      .min(1)
      .max(50),
  }),
  op("contact.block", { jid: PersonJidSchema, block: z.boolean() }),
  op("profile.get", {}),
  op("profile.name", { name: z.string().min(1).max(25) }),
  op("profile.status", { status: z.string().max(139) }),
  /** `jid` omitted: the account's own picture; a group JID: that group's (admins only). */
  op("picture.set", { jid: GroupJidSchema.optional(), source: MediaSourceSchema }),
  op("picture.remove", { jid: GroupJidSchema.optional() }),
  op("group.create", {
    subject: z.string().min(1).max(100),
    participants: z.array(PersonJidSchema).min(1).max(1024),
  }),
  op("group.metadata", { jid: GroupJidSchema }),
  op("group.list", {}),
  op("group.subject", { jid: GroupJidSchema, subject: z.string().min(1).max(100) }),
  op("group.description", { jid: GroupJidSchema, description: z.string().max(512) }),
  op("group.participants", {
    jid: GroupJidSchema,
    action: z.enum(GROUP_ACTIONS),
    participants: z.array(PersonJidSchema).min(1).max(1024),
  }),
  op("group.invite", { jid: GroupJidSchema }),
  op("group.invite.revoke", { jid: GroupJidSchema }),
  op("group.invite.accept", { code: z.string().regex(/^[A-Za-z0-9]{6,64}$/) }),
  op("group.setting", { jid: GroupJidSchema, setting: z.enum(GROUP_SETTINGS) }),
  op("group.ephemeral", {
    jid: GroupJidSchema,
    expiration: z.union(EPHEMERAL_SECONDS.map((value) => z.literal(value))),
  }),
  op("group.leave", { jid: GroupJidSchema }),
  /** Fetches a received message's media and PUTs the bytes to the edge's media store as `ref`. */
  op("media.download", {
    message: MessageRefSchema,
    ref: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/),
    maxBytes: MaxBytesSchema,
  }),
  op("call.reject", { id: z.string().max(128), from: AnyJidSchema }),
  /** Creates, edits or (`deleted`) removes a WhatsApp label on the account (app state). */
  op("label.edit", { label: WaLabelSchema }),
  op("label.chat", { chat: ChatJidSchema, labelId: z.string().min(1).max(64), labeled: z.boolean() }),
]);
export type Operation = z.infer<typeof OperationSchema>;
export type OperationName = Operation["op"];

/** The `status` of a failed operation (see the file comment). */
export const OPERATION_FAILURE_STATUSES = [400, 403, 404, 409, 500, 503] as const;
export type OperationFailureStatus = (typeof OPERATION_FAILURE_STATUSES)[number];

// ── Results ─────────────────────────────────────────────────────────────────────────────────────

export const NumberCheckResultSchema = z.array(
  z.object({ number: z.string(), exists: z.boolean(), jid: z.string().nullable() }),
);
export type NumberCheckResult = z.infer<typeof NumberCheckResultSchema>;

export const ProfileSchema = z.object({
  name: z.string().nullable(),
  status: z.string().nullable(),
  pictureUrl: z.string().nullable(),
});
export type Profile = z.infer<typeof ProfileSchema>;

export const ParticipantResultSchema = z.array(z.object({ jid: z.string(), status: z.string() }));

export const DownloadResultSchema = z.object({
  mimetype: z.string(),
  size: z.number().int().nonnegative(),
  fileName: z.string().optional(),
});
