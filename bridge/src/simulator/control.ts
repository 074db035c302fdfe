/**
 * `sim` command actions: the test's hands on the simulated world. They play the other side of
 * WhatsApp (peers writing, acking, editing, calling; groups made by others; the account's own phone)
 * and read back what the account did. Shapes are part of the bridge's test contract: the edge's
 * end-to-end tests drive them through the `sim` command.
 */
import { z } from "zod";
import {
  AnyJidSchema,
  type Content,
  ContentSchema,
  GroupJidSchema,
  MEDIA_MEMORY_MAX_BYTES,
  MessageStatusSchema,
  PersonJidSchema,
  type WireMessage,
} from "../protocol/messaging.ts";
import { type Json, OperationError } from "../protocol/seam.ts";
import { createGroup } from "./groups.ts";
import { mediaInfo, type SimContext } from "./messages.ts";
import { type AdminRole, newMessageId, pictureUrl, randomDigits } from "./world.ts";

const MessageId = z.string().min(1).max(128);
const Mentions = z.array(PersonJidSchema).max(1024).optional();
const Caption = z.string().max(4096).optional();
/**
 * The largest file a simulated peer sends (held in this process's memory, as the simulated network
 * keeps everything): enough to exercise the bridge's parts upload (8 MiB parts) many times over.
 */
const SIM_MEDIA_MAX_BYTES = 256 * 1024 * 1024;
/**
 * Received media comes with its bytes (base64), as a peer's phone would upload them; `repeatTo` repeats
 * them up to that many bytes, so a test can send a large file without a large command.
 */
const Bytes = {
  base64: z.string().max(Math.ceil((MEDIA_MEMORY_MAX_BYTES * 4) / 3) + 4),
  repeatTo: z.number().int().positive().max(SIM_MEDIA_MAX_BYTES).optional(),
  mimetype: z.string().min(3).max(128),
  fileName: z.string().max(256).optional(),
  seconds: z.number().int().nonnegative().optional(),
};
const ReceivedMediaSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("image"), ...Bytes, caption: Caption, mentions: Mentions }),
  z.object({ type: z.literal("video"), ...Bytes, caption: Caption, mentions: Mentions }),
  z.object({ type: z.literal("audio"), ...Bytes, ptt: z.boolean().optional() }),
  z.object({ type: z.literal("document"), ...Bytes, caption: Caption }),
  z.object({ type: z.literal("sticker"), ...Bytes }),
]);
type ReceivedMedia = z.infer<typeof ReceivedMediaSchema>;

const ControlSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("inbox"), peer: AnyJidSchema.optional() }),
  z.object({
    action: z.literal("receive"),
    from: PersonJidSchema,
    chat: GroupJidSchema.optional(),
    content: z.union([ReceivedMediaSchema, ContentSchema]),
    id: MessageId.optional(),
    quotedId: MessageId.optional(),
    pushName: z.string().max(256).optional(),
  }),
  z.object({ action: z.literal("phone.send"), to: AnyJidSchema, text: z.string().min(1).max(65_536) }),
  z.object({ action: z.literal("ack"), id: MessageId, chat: AnyJidSchema, status: MessageStatusSchema }),
  z.object({
    action: z.literal("edit"),
    id: MessageId,
    chat: AnyJidSchema,
    text: z.string().min(1).max(65_536),
  }),
  z.object({ action: z.literal("revoke"), id: MessageId, chat: AnyJidSchema }),
  z.object({
    action: z.literal("contact"),
    jid: PersonJidSchema,
    name: z.string().max(256).optional(),
    notify: z.string().max(256).optional(),
    picture: z.boolean().optional(),
  }),
  z.object({
    action: z.literal("group.add"),
    subject: z.string().min(1).max(100),
    participants: z.array(PersonJidSchema).max(1024).optional(),
    isCommunity: z.boolean().optional(),
    linkedParentJid: GroupJidSchema.optional(),
    announce: z.boolean().optional(),
    /** Makes the account an admin of the new group (default: a plain member). */
    admin: z.boolean().optional(),
  }),
  z.object({
    action: z.literal("group.peer-update"),
    jid: GroupJidSchema,
    subject: z.string().min(1).max(100).optional(),
    description: z.string().max(512).optional(),
    announce: z.boolean().optional(),
    restrict: z.boolean().optional(),
  }),
  z.object({ action: z.literal("call"), from: PersonJidSchema, isVideo: z.boolean().optional() }),
  z.object({ action: z.literal("state") }),
  /** A library bug, played: a promise rejected with nobody to catch it, or an exception from a timer. */
  z.object({ action: z.literal("fault"), kind: z.enum(["rejection", "exception"]) }),
  z.object({ action: z.literal("stats") }),
]);
type Control = z.infer<typeof ControlSchema>;
type Action<N extends Control["action"]> = Extract<Control, { action: N }>;

function repeated(bytes: Buffer, size: number | undefined): Buffer {
  if (size === undefined || bytes.byteLength === 0) return bytes;
  const out = Buffer.allocUnsafe(size);
  for (let at = 0; at < size; at += bytes.byteLength)
    bytes.copy(out, at, 0, Math.min(bytes.byteLength, size - at));
  return out;
}

function receivedContent(context: SimContext, chat: string, id: string, content: ReceivedMedia | Content) {
  if (!("base64" in content)) return content;
  const { base64, repeatTo, mimetype, fileName, seconds, ...rest } = content;
  const bytes = repeated(Buffer.from(base64, "base64"), repeatTo);
  const media = { bytes, mimetype, ...(fileName ? { fileName } : {}) };
  context.world.storeMedia(context.account, chat, id, media);
  const info = { ...mediaInfo(media), ...(seconds !== undefined ? { seconds } : {}) };
  if (rest.type === "document") return { ...rest, media: info, mimetype, fileName: fileName ?? "file" };
  if (rest.type === "audio") return { ...rest, media: info, ptt: rest.ptt ?? false };
  return { ...rest, media: info };
}

function receive(context: SimContext, args: Action<"receive">): Json {
  const { world, account, me } = context;
  const chat = args.chat ?? args.from;
  if (args.chat) world.memberGroup(me, args.chat);
  const id = args.id ?? newMessageId();
  // A blocked contact's messages never reach the account.
  if (account.blocked.has(args.from)) return { id, delivered: false };
  const message: WireMessage = {
    id,
    chat,
    sender: args.from,
    fromMe: false,
    timestamp: Date.now(),
    content: receivedContent(context, chat, id, args.content),
    ...(args.pushName ? { pushName: args.pushName } : {}),
    ...(args.quotedId ? { quotedId: args.quotedId } : {}),
  };
  world.emitTo(account, { kind: "message", message, live: true });
  return { id, delivered: true };
}

function phoneSend(context: SimContext, args: Action<"phone.send">): Json {
  const { world, account, me } = context;
  const message: WireMessage = {
    id: newMessageId(),
    chat: args.to,
    sender: me,
    fromMe: true,
    timestamp: Date.now(),
    content: { type: "text", text: args.text },
    status: "SENT",
  };
  world.deliver(account, message, null);
  world.emitTo(account, { kind: "message", message, live: true });
  return { id: message.id };
}

function addGroup({ world, me }: SimContext, args: Action<"group.add">): Json {
  const owner = args.participants?.[0] ?? `${randomDigits(12)}@s.whatsapp.net`;
  const members = new Map<string, AdminRole>([[owner, "superadmin"]]);
  for (const jid of args.participants ?? []) if (!members.has(jid)) members.set(jid, null);
  members.set(me, args.admin ? "admin" : null);
  const group = createGroup(world, {
    subject: args.subject,
    owner,
    members,
    isCommunity: args.isCommunity ?? false,
    linkedParentJid: args.linkedParentJid ?? null,
    announce: args.announce ?? false,
  });
  return { jid: group.jid, inviteCode: group.inviteCode };
}

function peerUpdate({ world, me }: SimContext, args: Action<"group.peer-update">): Json {
  const { action: _action, jid, ...changes } = args;
  const group = world.memberGroup(me, jid);
  if (changes.subject !== undefined) group.subject = changes.subject;
  if (changes.description !== undefined) group.description = changes.description || null;
  if (changes.announce !== undefined) group.announce = changes.announce;
  if (changes.restrict !== undefined) group.restrict = changes.restrict;
  world.notifyGroup(group, { kind: "groups", action: "update", groups: [{ jid, ...changes }] });
  return null;
}

function state({ world, account, me }: SimContext): Json {
  return {
    me,
    profile: account.profile,
    blocked: [...account.blocked],
    contacts: [...account.contacts].map(([jid, contact]) => ({ jid, ...contact })),
    reads: account.reads,
    chatModifications: account.chatModifications,
    presences: account.presences,
    availability: account.availability,
    stars: account.stars,
    reactions: account.reactions,
    deletions: account.deletions,
    edits: account.edits,
    groups: world.groupsOf(me).map((group) => world.groupInfo(group)),
    rejectedCalls: account.rejectedCalls,
    numberChecks: account.numberChecks,
    inbox: account.inbox,
  };
}

/** Fails outside any caller's reach, as a bug in a socket library does (the bridge's fault guard). */
function simulateFault(kind: "rejection" | "exception"): void {
  setTimeout(() => {
    if (kind === "exception") throw new Error("simulated uncaught exception");
    void Promise.reject(new Error("simulated unhandled rejection"));
  }, 0);
}

/** Runs one control action; `connected` is whether the account's socket is open right now. */
export function runControl(context: SimContext, connected: boolean, args: Record<string, unknown>): Json {
  const parsed = ControlSchema.safeParse(args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join(".")}: ` : "";
    throw new OperationError(400, `invalid sim action: ${where}${issue?.message ?? "bad arguments"}`);
  }
  const control = parsed.data;
  const { world, account } = context;
  switch (control.action) {
    case "inbox":
      return account.inbox.filter((entry) => !control.peer || entry.chat === control.peer);
    case "state":
      return state(context);
    case "stats":
      return { numberChecks: account.numberChecks, inbox: account.inbox.length };
    case "fault":
      simulateFault(control.kind);
      return null;
  }
  // Everything else happens on the network, which this account sees only while connected.
  if (!connected) throw new OperationError(503, "WhatsApp is not connected");
  switch (control.action) {
    case "receive":
      return receive(context, control);
    case "phone.send":
      return phoneSend(context, control);
    case "ack":
      world.emitTo(account, {
        kind: "message.status",
        id: control.id,
        chat: control.chat,
        status: control.status,
      });
      return null;
    case "edit":
      world.emitTo(account, {
        kind: "message.edited",
        id: control.id,
        chat: control.chat,
        fromMe: false,
        text: control.text,
      });
      return null;
    case "revoke":
      world.emitTo(account, { kind: "message.deleted", id: control.id, chat: control.chat, fromMe: false });
      return null;
    case "contact": {
      const picture = control.picture ?? false;
      account.contacts.set(control.jid, {
        ...(control.name ? { name: control.name } : {}),
        ...(control.notify ? { notify: control.notify } : {}),
        picture,
      });
      const { action: _action, picture: _picture, ...contact } = control;
      world.emitTo(account, {
        kind: "contacts",
        contacts: [{ ...contact, imgUrl: picture ? pictureUrl(control.jid) : null }],
      });
      return null;
    }
    case "group.add":
      return addGroup(context, control);
    case "group.peer-update":
      return peerUpdate(context, control);
    case "call": {
      const id = randomDigits(20);
      world.emitTo(account, {
        kind: "call",
        id,
        from: control.from,
        status: "offer",
        isVideo: control.isVideo ?? false,
      });
      return { id };
    }
  }
}
