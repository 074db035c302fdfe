/**
 * The messaging half of the bridge protocol: what a message looks like on the wire, the WhatsApp
 * operations the edge asks a bridge to perform (command `wa`), and the network events a bridge reports
 * (session events `message`, `message.status`, …). Like protocol.ts it imports nothing but zod, so
 * the SessionDO (workerd) and the bridge (Node) validate the same shapes.
 *
 * The shapes are ours, not Baileys': whatsapp.ts translates to and from Baileys, simulator.ts speaks
 * them natively. That keeps Baileys' protobufs out of the edge and lets the simulator stand in for the
 * network without faking Baileys internals.
 */
import { z } from "zod";

const Json = z.json();

// ── Identifiers ─────────────────────────────────────────────────────────────────────────────────

export const PERSON_JID = /^\d{5,20}@s\.whatsapp\.net$/;
/**
 * A person addressed by LID (`<digits>@lid`), WhatsApp's privacy-preserving id: since 2025 many chats
 * arrive this way without the phone number, and they are answered the same way.
 */
export const LID_JID = /^\d{5,20}@lid$/;
/** `<digits>@g.us`; legacy groups are `<creator>-<timestamp>@g.us`, still seen on old accounts. */
export const GROUP_JID = /^\d{5,40}(-\d{5,20})?@g\.us$/;
export const STATUS_JID = "status@broadcast";

export const PersonJidSchema = z.string().regex(PERSON_JID, "must be <number>@s.whatsapp.net");
export const GroupJidSchema = z.string().regex(GROUP_JID, "must be <digits>@g.us");
export const isChatJid = (jid: string): boolean =>
  PERSON_JID.test(jid) || LID_JID.test(jid) || GROUP_JID.test(jid);
export const CHAT_JID_MESSAGE = "must be <number>@s.whatsapp.net, <digits>@lid or <digits>@g.us";
/** A chat: a person (by phone number or LID) or a group. */
export const ChatJidSchema = z.string().max(128).refine(isChatJid, { message: CHAT_JID_MESSAGE });
/** Anything WhatsApp uses as an address in events (phone JIDs, LIDs, groups, status, newsletters). */
export const AnyJidSchema = z.string().min(3).max(160);

export const MESSAGE_STATUSES = ["PENDING", "SENT", "DELIVERED", "READ", "FAILED"] as const;
export const MessageStatusSchema = z.enum(MESSAGE_STATUSES);
export type MessageStatus = z.infer<typeof MessageStatusSchema>;

/**
 * Baileys' `WebMessageInfo.Status` ack (ERROR 0, PENDING 1, SERVER_ACK 2, DELIVERY_ACK 3, READ 4,
 * PLAYED 5) to ours. WA-AKG is off by one here; this is the mapping the protocol defines.
 */
export function statusFromAck(ack: number): MessageStatus | null {
  switch (ack) {
    case 0:
      return "FAILED";
    case 1:
      return "PENDING";
    case 2:
      return "SENT";
    case 3:
      return "DELIVERED";
    case 4:
    case 5:
      return "READ";
    default:
      return null;
  }
}

export {
  MEDIA_KIND_LIMITS,
  MEDIA_MAX_BYTES,
  MEDIA_MEMORY_MAX_BYTES,
  MEDIA_PART_BYTES,
  type MediaKindName,
  mediaPartsPath,
  mediaPath,
} from "./media-limits.ts";

/** Edge path where the lease holder reads the stored record of a message this account sent. */
export function sentMessagePath(sessionId: string, messageId: string): string {
  return `/bridge/v1/sessions/${encodeURIComponent(sessionId)}/sent/${encodeURIComponent(messageId)}`;
}

// ── Message content ─────────────────────────────────────────────────────────────────────────────

/** Where the bridge gets the bytes of media to send: a public URL, or an upload held by the edge. */
export const MediaSourceSchema = z.union([
  z.strictObject({ url: z.url({ protocol: /^https?$/ }).max(2048) }),
  z.strictObject({ upload: z.string().regex(/^[A-Za-z0-9_-]{8,64}$/) }),
]);
export type MediaSource = z.infer<typeof MediaSourceSchema>;

/** What is known about media once sent or received (the bytes themselves stay out of messages). */
export const MediaInfoSchema = z.object({
  mimetype: z.string().max(128).optional(),
  fileName: z.string().max(256).optional(),
  size: z.number().int().nonnegative().optional(),
  seconds: z.number().int().nonnegative().optional(),
  /** Hex SHA-256 of the bytes, so a receiver can prove it got exactly what was sent. */
  sha256: z.string().max(128).optional(),
});
export type MediaInfo = z.infer<typeof MediaInfoSchema>;

const Mentions = z.array(PersonJidSchema).max(1024).optional();
const Caption = z.string().max(4096).optional();
export const VCardSchema = z.object({
  displayName: z.string().min(1).max(256),
  vcard: z.string().min(1).max(8192),
});

/** Every kind of message, parameterised by how media is represented (a source to send, info after). */
function contentSchema<M extends z.ZodType>(media: M) {
  return z.discriminatedUnion("type", [
    z.object({ type: z.literal("text"), text: z.string().min(1).max(65_536), mentions: Mentions }),
    z.object({ type: z.literal("image"), media, caption: Caption, mentions: Mentions }),
    z.object({ type: z.literal("video"), media, caption: Caption, mentions: Mentions }),
    /** `ptt` true is a voice note (ogg/opus, shown with a waveform); false a music/audio file. */
    z.object({ type: z.literal("audio"), media, ptt: z.boolean() }),
    z.object({
      type: z.literal("document"),
      media,
      fileName: z.string().min(1).max(256),
      mimetype: z.string().min(3).max(128),
      caption: Caption,
    }),
    z.object({
      type: z.literal("sticker"),
      media,
      pack: z.string().max(128).optional(),
      author: z.string().max(128).optional(),
    }),
    z.object({
      type: z.literal("poll"),
      question: z.string().min(1).max(256),
      options: z.array(z.string().min(1).max(100)).min(2).max(12),
      selectableCount: z.number().int().min(1).max(12),
    }),
    z.object({
      type: z.literal("location"),
      latitude: z.number().min(-90).max(90),
      longitude: z.number().min(-180).max(180),
      name: z.string().max(256).optional(),
      address: z.string().max(512).optional(),
    }),
    z.object({ type: z.literal("contacts"), contacts: z.array(VCardSchema).min(1).max(50) }),
    /** A reaction to `targetId` in the same chat; an empty emoji removes it. */
    z.object({ type: z.literal("reaction"), emoji: z.string().max(32), targetId: z.string().max(128) }),
    /** Anything we do not model (protocol messages, buttons, …), kept as a short description. */
    z.object({ type: z.literal("unknown"), description: z.string().max(256) }),
  ]);
}

export const OutgoingContentSchema = contentSchema(MediaSourceSchema);
export type OutgoingContent = z.infer<typeof OutgoingContentSchema>;
export const ContentSchema = contentSchema(MediaInfoSchema);
export type Content = z.infer<typeof ContentSchema>;
export type ContentType = Content["type"];

/** A message as the network saw it: sent by this account or received. */
export const WireMessageSchema = z.object({
  /** WhatsApp's message id (`key.id`), unique per chat. */
  id: z.string().min(1).max(128),
  chat: AnyJidSchema,
  /** Who wrote it: the participant in a group, the peer in a direct chat, this account when fromMe. */
  sender: AnyJidSchema,
  fromMe: z.boolean(),
  pushName: z.string().max(256).optional(),
  /** Epoch milliseconds. */
  timestamp: z.number().int().nonnegative(),
  content: ContentSchema,
  quotedId: z.string().max(128).optional(),
  status: MessageStatusSchema.optional(),
  /** The network's own record (Baileys `WebMessageInfo` as BufferJSON), needed to quote, forward or
   * download it later. Absent on the simulator, which needs nothing more than the fields above. */
  raw: Json.optional(),
});
export type WireMessage = z.infer<typeof WireMessageSchema>;

/** Enough of a stored message to quote, react to, edit, delete, star, forward or download it. */
export const MessageRefSchema = z.object({
  id: z.string().min(1).max(128),
  chat: AnyJidSchema,
  fromMe: z.boolean(),
  sender: AnyJidSchema,
  timestamp: z.number().int().nonnegative(),
  content: ContentSchema,
  raw: Json.optional(),
});
export type MessageRef = z.infer<typeof MessageRefSchema>;

// ── Groups and contacts ─────────────────────────────────────────────────────────────────────────

export const ParticipantSchema = z.object({
  id: AnyJidSchema,
  admin: z.enum(["admin", "superadmin"]).nullable(),
});

export const GroupInfoSchema = z.object({
  jid: AnyJidSchema,
  subject: z.string().max(256),
  description: z.string().max(2048).nullable().optional(),
  owner: AnyJidSchema.nullable().optional(),
  /** Epoch seconds. */
  creation: z.number().int().nullable().optional(),
  /** Only admins may send. */
  announce: z.boolean().optional(),
  /** Only admins may edit the group info. */
  restrict: z.boolean().optional(),
  /** Disappearing-messages timer in seconds; 0 is off. */
  ephemeral: z.number().int().nonnegative().optional(),
  isCommunity: z.boolean().optional(),
  linkedParentJid: AnyJidSchema.nullable().optional(),
  participants: z.array(ParticipantSchema).max(5000).optional(),
});
export type GroupInfo = z.infer<typeof GroupInfoSchema>;

export const ContactInfoSchema = z.object({
  jid: AnyJidSchema,
  lid: AnyJidSchema.optional(),
  name: z.string().max(256).optional(),
  notify: z.string().max(256).optional(),
  verifiedName: z.string().max(256).optional(),
  imgUrl: z.string().max(2048).nullable().optional(),
});
export type ContactInfo = z.infer<typeof ContactInfoSchema>;

export const GROUP_ACTIONS = ["add", "remove", "promote", "demote"] as const;
export const GROUP_SETTINGS = ["announcement", "not_announcement", "locked", "unlocked"] as const;
export const EPHEMERAL_SECONDS = [0, 86_400, 604_800, 7_776_000] as const;
export const PRESENCES = ["composing", "recording", "paused", "available", "unavailable"] as const;

// ── Poll votes ──────────────────────────────────────────────────────────────────────────────────

/**
 * One person's vote on a poll this account sent, decrypted by the bridge with the poll's secret. A
 * changed vote is a new vote message (its own `id`) replacing the voter's earlier one; an empty
 * `selectedOptions` takes the vote back.
 */
export const PollVoteSchema = z.object({
  /** The vote message's own id: the same vote delivered twice has the same id. */
  id: z.string().min(1).max(128),
  /** The poll's chat, phone-number JID preferred (as the poll was stored). */
  chat: AnyJidSchema,
  /** The poll message's id (`key.id`). */
  pollId: z.string().min(1).max(128),
  /** Who voted: their phone-number JID when known, else their LID. */
  voter: AnyJidSchema,
  /** The voter's phone number, digits only; null when only their LID is known. */
  voterPhone: z
    .string()
    .regex(/^\d{5,20}$/)
    .nullable(),
  /** The options chosen, by name as the poll was sent. */
  selectedOptions: z.array(z.string().max(100)).max(12),
  /** Epoch milliseconds (the voter's clock). */
  timestamp: z.number().int().nonnegative(),
});
export type PollVote = z.infer<typeof PollVoteSchema>;

// ── App state: what the account's devices keep in sync (archive, pin, mute, star, labels) ──────────

/** A WhatsApp label (Business labels): `id` is WhatsApp's, `color` an index into its 20 colours. */
export const WaLabelSchema = z.object({
  id: z.string().min(1).max(64),
  name: z.string().max(100),
  color: z.number().int().min(0).max(19),
  deleted: z.boolean(),
});
export type WaLabel = z.infer<typeof WaLabelSchema>;

/** Changes made on any of the account's devices (the phone, or this one through the API). */
const APP_STATE_EVENTS = [
  /** Only the fields that changed are present. `mutedUntil`: epoch ms, -1 for always, null unmuted. */
  z.object({
    kind: z.literal("chat.update"),
    jid: AnyJidSchema,
    archived: z.boolean().optional(),
    pinned: z.boolean().optional(),
    mutedUntil: z.number().int().nullable().optional(),
  }),
  z.object({
    kind: z.literal("message.starred"),
    id: z.string().max(128),
    chat: AnyJidSchema,
    fromMe: z.boolean(),
    starred: z.boolean(),
  }),
  /** A label created, renamed, recoloured or (`deleted`) removed. */
  z.object({ kind: z.literal("label.edit"), label: WaLabelSchema }),
  z.object({
    kind: z.literal("label.association"),
    labelId: z.string().min(1).max(64),
    chat: AnyJidSchema,
    labeled: z.boolean(),
  }),
] as const;

/**
 * What WhatsApp says of an account that reaches out too much: the reach-out timelock (no new chats
 * until `until`, epoch ms; null: WhatsApp gave no end) and where it stands against the new-chat message
 * cap. Each part is present only when WhatsApp spoke of it.
 */
export const AccountLimitsSchema = z.object({
  reachoutTimelock: z
    .object({
      active: z.boolean(),
      until: z.number().int().nullable(),
      enforcementType: z.string().max(128).nullable(),
    })
    .optional(),
  newChatCap: z
    .object({
      status: z.string().max(32),
      used: z.number().int().nonnegative().nullable(),
      total: z.number().int().nonnegative().nullable(),
      cycleEndsAt: z.number().int().nullable(),
    })
    .optional(),
});
export type AccountLimits = z.infer<typeof AccountLimitsSchema>;

// ── Network events: bridge → SessionDO (inside the session socket's `event` frame) ─────────────

export const NetworkEventSchema = z.discriminatedUnion("kind", [
  /** `live` is false for history sync and re-deliveries: stored, but no bot reply or webhook. */
  z.object({ kind: z.literal("message"), message: WireMessageSchema, live: z.boolean() }),
  z.object({
    kind: z.literal("message.status"),
    id: z.string().max(128),
    chat: AnyJidSchema,
    status: MessageStatusSchema,
    /** Why WhatsApp refused it (FAILED), when it said: e.g. the reach-out timelock's 463. */
    reason: z.string().max(256).optional(),
  }),
  z.object({
    kind: z.literal("message.edited"),
    id: z.string().max(128),
    chat: AnyJidSchema,
    fromMe: z.boolean(),
    text: z.string().max(65_536),
  }),
  z.object({
    kind: z.literal("message.deleted"),
    id: z.string().max(128),
    chat: AnyJidSchema,
    fromMe: z.boolean(),
  }),
  z.object({ kind: z.literal("poll.vote"), vote: PollVoteSchema }),
  z.object({ kind: z.literal("contacts"), contacts: z.array(ContactInfoSchema).max(5000) }),
  /** `upsert`: groups the account is in now (joined, added, or a full sync); `update`: partial changes. */
  z.object({
    kind: z.literal("groups"),
    action: z.enum(["upsert", "update"]),
    groups: z.array(GroupInfoSchema.partial().required({ jid: true })).max(5000),
  }),
  z.object({
    kind: z.literal("group.participants"),
    jid: AnyJidSchema,
    action: z.string().max(32),
    participants: z.array(z.string().max(160)).max(5000),
    author: z.string().max(160).optional(),
  }),
  /** WhatsApp's limits on the account as it announces them (see AccountLimitsSchema). */
  z.object({ kind: z.literal("account.limits"), limits: AccountLimitsSchema }),
  z.object({
    kind: z.literal("call"),
    id: z.string().max(128),
    /** The caller, phone-number JID preferred (as chats are stored). */
    from: AnyJidSchema,
    status: z.string().max(32),
    isVideo: z.boolean(),
    /** The JID the call came from (a LID for a caller known by LID): a rejection must go there. */
    caller: AnyJidSchema.optional(),
    isGroup: z.boolean().optional(),
    /** Epoch milliseconds (WhatsApp's clock). */
    timestamp: z.number().int().nonnegative().optional(),
  }),
  /** A contact's presence in a chat, once the account subscribed to it (`presence.subscribe`). */
  z.object({
    kind: z.literal("presence"),
    chat: AnyJidSchema,
    participant: AnyJidSchema,
    presence: z.enum(PRESENCES),
    /** Epoch milliseconds the contact was last online, when WhatsApp says (with `unavailable`). */
    lastSeen: z.number().int().nonnegative().optional(),
  }),
  ...APP_STATE_EVENTS,
]);
export type NetworkEvent = z.infer<typeof NetworkEventSchema>;
