/**
 * Baileys' shapes to ours (../protocol/messaging.ts): messages, receipts, contacts, groups, calls and
 * errors. Pure functions, so they are tested on hand-built Baileys objects without a socket.
 *
 * Only whatsapp.ts and the modules that only it loads (this one, operations.ts and
 * content.ts) may import Baileys: everything else in the bridge, the simulator included, must
 * run without loading it. Tests may import them directly.
 */
import {
  type BaileysEventMap,
  BufferJSON,
  type Contact,
  type GroupMetadata,
  getContentType,
  isLidUser,
  jidNormalizedUser,
  normalizeMessageContent,
  proto,
  type WACallEvent,
  type WAMessage,
  type WAMessageUpdate,
} from "@whiskeysockets/baileys";
import {
  type ContactInfo,
  type Content,
  ContentSchema,
  type GroupInfo,
  type MediaInfo,
  type NetworkEvent,
  PERSON_JID,
  statusFromAck,
  type WireMessage,
} from "../protocol/messaging.ts";
import { type Json, OperationError } from "../protocol/seam.ts";
import { refusalReason } from "./limits.ts";

/** Buffers become `{type:"Buffer", data:<base64>}`, the form the edge stores. */
export function toJson(value: unknown): Json {
  const parsed: unknown = JSON.parse(JSON.stringify(value, BufferJSON.replacer));
  return parsed as Json;
}

export function fromJson(value: Json): unknown {
  return JSON.parse(JSON.stringify(value), BufferJSON.reviver);
}

type Numeric = number | { toNumber(): number } | null | undefined;

function toNumber(value: Numeric): number | undefined {
  if (value === null || value === undefined) return undefined;
  return typeof value === "number" ? value : value.toNumber();
}

const clip = (text: string | null | undefined, max: number) => (text ? text.slice(0, max) : undefined);

/**
 * Since v7 WhatsApp addresses many chats by LID; the phone-number JID travels alongside (`…Alt`). The
 * edge answers and sends by phone number, so that one wins whenever it is known.
 */
export function preferPhoneJid(jid: string, alt: string | null | undefined): string {
  return isLidUser(jid) && alt && !isLidUser(alt) ? jidNormalizedUser(alt) : jid;
}

function mediaInfo(media: {
  mimetype?: string | null;
  fileLength?: Numeric;
  fileSha256?: Uint8Array | null;
  seconds?: number | null;
  fileName?: string | null;
}): MediaInfo {
  const size = toNumber(media.fileLength);
  return {
    ...(media.mimetype ? { mimetype: media.mimetype.slice(0, 128) } : {}),
    ...(size !== undefined ? { size } : {}),
    ...(media.seconds ? { seconds: media.seconds } : {}),
    ...(media.fileSha256?.length ? { sha256: Buffer.from(media.fileSha256).toString("hex") } : {}),
    ...(media.fileName ? { fileName: media.fileName.slice(0, 256) } : {}),
  };
}

function mentionsOf(context: proto.IContextInfo | null | undefined): string[] | undefined {
  const mentions = context?.mentionedJid?.filter((jid) => PERSON_JID.test(jid));
  return mentions?.length ? mentions : undefined;
}

/** A message's content in our terms; null for protocol chatter that is not a message to anyone. */
export function wireContent(message: proto.IMessage | null | undefined): Content | null {
  const content = normalizeMessageContent(message);
  const type = getContentType(content);
  if (!content || !type || type === "protocolMessage") return null;
  let mapped: Content;
  const m = content;
  if (m.conversation !== undefined && m.conversation !== null) {
    mapped = { type: "text", text: m.conversation };
  } else if (m.extendedTextMessage) {
    const mentions = mentionsOf(m.extendedTextMessage.contextInfo);
    mapped = { type: "text", text: m.extendedTextMessage.text ?? "", ...(mentions ? { mentions } : {}) };
  } else if (m.imageMessage || m.videoMessage) {
    const media = m.imageMessage ?? m.videoMessage ?? {};
    const mentions = mentionsOf(media.contextInfo);
    const caption = clip(media.caption, 4096);
    mapped = {
      type: m.imageMessage ? "image" : "video",
      media: mediaInfo(media),
      ...(caption ? { caption } : {}),
      ...(mentions ? { mentions } : {}),
    };
  } else if (m.audioMessage) {
    mapped = { type: "audio", media: mediaInfo(m.audioMessage), ptt: m.audioMessage.ptt === true };
  } else if (m.documentMessage) {
    const doc = m.documentMessage;
    const caption = clip(doc.caption, 4096);
    mapped = {
      type: "document",
      media: mediaInfo(doc),
      fileName: clip(doc.fileName ?? doc.title, 256) ?? "file",
      mimetype: clip(doc.mimetype, 128) ?? "application/octet-stream",
      ...(caption ? { caption } : {}),
    };
  } else if (m.stickerMessage) {
    mapped = { type: "sticker", media: mediaInfo(m.stickerMessage) };
  } else if (m.pollCreationMessage || m.pollCreationMessageV2 || m.pollCreationMessageV3) {
    const poll = m.pollCreationMessage ?? m.pollCreationMessageV2 ?? m.pollCreationMessageV3 ?? {};
    const options = (poll.options ?? []).map((option) => option.optionName ?? "");
    mapped = {
      type: "poll",
      question: poll.name ?? "",
      options,
      // 0 means "any number" on WhatsApp; ours counts it out.
      selectableCount: poll.selectableOptionsCount || options.length,
    };
  } else if (m.locationMessage || m.liveLocationMessage) {
    const at = m.locationMessage ?? m.liveLocationMessage ?? {};
    const name = clip(m.locationMessage?.name, 256);
    const address = clip(m.locationMessage?.address, 512);
    mapped = {
      type: "location",
      latitude: at.degreesLatitude ?? 0,
      longitude: at.degreesLongitude ?? 0,
      ...(name ? { name } : {}),
      ...(address ? { address } : {}),
    };
  } else if (m.contactMessage || m.contactsArrayMessage) {
    const cards = m.contactMessage ? [m.contactMessage] : (m.contactsArrayMessage?.contacts ?? []);
    mapped = {
      type: "contacts",
      contacts: cards.slice(0, 50).map((card) => ({
        displayName: clip(card.displayName, 256) ?? "contact",
        vcard: clip(card.vcard, 8192) ?? "",
      })),
    };
  } else if (m.reactionMessage) {
    mapped = {
      type: "reaction",
      emoji: m.reactionMessage.text ?? "",
      targetId: m.reactionMessage.key?.id ?? "",
    };
  } else {
    mapped = { type: "unknown", description: type.slice(0, 256) };
  }
  // Anything our schema cannot carry (an over-long text, a one-option poll) is reported as what it is.
  const checked = ContentSchema.safeParse(mapped);
  return checked.success ? checked.data : { type: "unknown", description: `${type} (not representable)` };
}

function quotedIdOf(message: proto.IMessage | null | undefined): string | undefined {
  const content = normalizeMessageContent(message);
  const type = getContentType(content);
  if (!content || !type) return undefined;
  const inner: unknown = content[type];
  if (typeof inner !== "object" || inner === null || !("contextInfo" in inner)) return undefined;
  const context = (inner as { contextInfo?: proto.IContextInfo | null }).contextInfo;
  return clip(context?.stanzaId, 128);
}

/** The chat and sender of a message, phone-number JIDs preferred. */
function addressOf(message: WAMessage, meId: string): { chat: string; sender: string } {
  const key = message.key;
  const chat = preferPhoneJid(key.remoteJid ?? "", key.remoteJidAlt);
  if (key.fromMe) return { chat, sender: jidNormalizedUser(meId) };
  const participant = key.participant ?? message.participant;
  const sender = participant ? preferPhoneJid(jidNormalizedUser(participant), key.participantAlt) : chat;
  return { chat, sender };
}

export function wireMessage(message: WAMessage, meId: string): WireMessage | null {
  const content = wireContent(message.message);
  if (!content || !message.key.id || !message.key.remoteJid) return null;
  const { chat, sender } = addressOf(message, meId);
  const status =
    message.status !== null && message.status !== undefined ? statusFromAck(message.status) : null;
  const quotedId = quotedIdOf(message.message);
  const seconds = toNumber(message.messageTimestamp) ?? Math.floor(Date.now() / 1000);
  return {
    id: message.key.id,
    chat,
    sender,
    fromMe: message.key.fromMe === true,
    ...(message.pushName ? { pushName: message.pushName.slice(0, 256) } : {}),
    timestamp: seconds * 1000,
    content,
    ...(quotedId ? { quotedId } : {}),
    ...(status ? { status } : {}),
    raw: toJson(message),
  };
}

/**
 * One `messages.upsert` entry as an event. Edits and revokes arrive as protocol messages here; Baileys
 * also reports them through `messages.update`, which is therefore read for receipts only.
 */
export function upsertEvent(message: WAMessage, live: boolean, meId: string): NetworkEvent | null {
  const content = normalizeMessageContent(message.message);
  // A poll vote is not a message in the chat: whatsapp.ts decrypts it into a `poll.vote` (poll-votes.ts).
  if (content?.pollUpdateMessage) return null;
  const protocol = content?.protocolMessage;
  if (protocol) {
    const id = protocol.key?.id;
    if (!id || !message.key.remoteJid) return null;
    const { chat } = addressOf(message, meId);
    const fromMe = message.key.fromMe === true;
    if (protocol.type === proto.Message.ProtocolMessage.Type.REVOKE) {
      return { kind: "message.deleted", id, chat, fromMe };
    }
    if (protocol.type === proto.Message.ProtocolMessage.Type.MESSAGE_EDIT) {
      const edited = wireContent(protocol.editedMessage);
      const text =
        edited?.type === "text" ? edited.text : edited && "caption" in edited ? edited.caption : null;
      return text ? { kind: "message.edited", id, chat, fromMe, text } : null;
    }
    return null;
  }
  const wire = wireMessage(message, meId);
  return wire ? { kind: "message", message: wire, live } : null;
}

export function statusEvents(updates: WAMessageUpdate[], meId: string): NetworkEvent[] {
  const events: NetworkEvent[] = [];
  for (const { key, update } of updates) {
    if (update.status === null || update.status === undefined || !key.id || !key.remoteJid) continue;
    const status = statusFromAck(update.status);
    if (!status) continue;
    const { chat } = addressOf({ key }, meId);
    const reason = status === "FAILED" ? refusalReason(update.messageStubParameters) : undefined;
    events.push({ kind: "message.status", id: key.id, chat, status, ...(reason ? { reason } : {}) });
  }
  return events;
}

export function contactInfo(contact: Partial<Contact>): ContactInfo | null {
  if (!contact.id) return null;
  const jid = preferPhoneJid(contact.id, contact.phoneNumber);
  const lid = contact.lid ?? (isLidUser(contact.id) ? contact.id : undefined);
  return {
    jid,
    ...(lid && lid !== jid ? { lid } : {}),
    ...(contact.name ? { name: contact.name.slice(0, 256) } : {}),
    ...(contact.notify ? { notify: contact.notify.slice(0, 256) } : {}),
    ...(contact.verifiedName ? { verifiedName: contact.verifiedName.slice(0, 256) } : {}),
    // "changed" is Baileys' marker for "fetch it again", not a URL.
    ...(contact.imgUrl === null || (contact.imgUrl && contact.imgUrl !== "changed")
      ? { imgUrl: contact.imgUrl?.slice(0, 2048) ?? null }
      : {}),
  };
}

type Participant = GroupMetadata["participants"][number];

export const participantJid = (participant: Pick<Participant, "id" | "phoneNumber">) =>
  preferPhoneJid(participant.id, participant.phoneNumber);

/** Full metadata (upsert) or a partial change (update): only the fields Baileys gave are set. */
export function groupInfo(
  meta: Partial<GroupMetadata> & { id: string },
): Partial<GroupInfo> & { jid: string } {
  const info: Partial<GroupInfo> & { jid: string } = { jid: meta.id };
  if (meta.subject !== undefined) info.subject = meta.subject.slice(0, 256);
  if ("desc" in meta) info.description = meta.desc ? meta.desc.slice(0, 2048) : null;
  if (meta.owner !== undefined) info.owner = meta.ownerPn ? jidNormalizedUser(meta.ownerPn) : meta.owner;
  if (meta.creation !== undefined) info.creation = meta.creation;
  if (meta.announce !== undefined) info.announce = meta.announce;
  if (meta.restrict !== undefined) info.restrict = meta.restrict;
  if (meta.ephemeralDuration !== undefined) info.ephemeral = meta.ephemeralDuration;
  if (meta.isCommunity !== undefined) info.isCommunity = meta.isCommunity;
  if ("linkedParent" in meta) info.linkedParentJid = meta.linkedParent ?? null;
  if (meta.participants) {
    info.participants = meta.participants.slice(0, 5000).map((participant) => ({
      id: participantJid(participant),
      admin: participant.admin ?? null,
    }));
  }
  return info;
}

/** Baileys' full metadata as a complete GroupInfo (what group operations answer). */
export function fullGroupInfo(meta: GroupMetadata): GroupInfo {
  return { subject: meta.subject, ...groupInfo(meta) };
}

export function callEvent(call: WACallEvent): NetworkEvent {
  const at = call.date instanceof Date ? call.date.getTime() : Number.NaN;
  return {
    kind: "call",
    id: call.id,
    from: preferPhoneJid(call.from, call.callerPn),
    status: call.status,
    isVideo: call.isVideo === true,
    caller: call.from,
    ...(call.isGroup !== undefined ? { isGroup: call.isGroup } : {}),
    ...(Number.isFinite(at) && at >= 0 ? { timestamp: at } : {}),
  };
}

/** Baileys' `presence.update`: one event per participant whose presence it reports. */
export function presenceEvents(update: BaileysEventMap["presence.update"]): NetworkEvent[] {
  return Object.entries(update.presences).map(([participant, { lastKnownPresence, lastSeen }]) => ({
    kind: "presence",
    chat: jidNormalizedUser(update.id),
    participant: jidNormalizedUser(participant),
    presence: lastKnownPresence,
    // Baileys gives WhatsApp's `last` as it came: epoch seconds.
    ...(lastSeen && lastSeen > 0 ? { lastSeen: lastSeen * 1000 } : {}),
  }));
}

/** Splits long lists so each event stays within the protocol's bounds (and a sane frame size). */
export function chunks<T>(items: T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const FAILURES: ReadonlyArray<{ status: 400 | 403 | 404; codes: number[]; texts: string[] }> = [
  { status: 403, codes: [401, 403], texts: ["not-authorized", "forbidden"] },
  { status: 404, codes: [404], texts: ["item-not-found"] },
  { status: 400, codes: [400, 406], texts: ["bad-request", "not-acceptable"] },
];

/**
 * A Baileys failure as the edge should see it. WhatsApp's IQ errors are Booms whose message is the
 * error text and whose `data` is its code; a closed connection is a 503 the caller may retry.
 */
export function operationError(error: unknown): Error {
  if (error instanceof OperationError) return error;
  if (!(error instanceof Error)) return new Error(String(error));
  const boom = error as Error & { data?: unknown; output?: { statusCode?: unknown } };
  const code = typeof boom.data === "number" ? boom.data : undefined;
  const statusCode = typeof boom.output?.statusCode === "number" ? boom.output.statusCode : undefined;
  const text = error.message.toLowerCase();
  for (const failure of FAILURES) {
    if (
      (code !== undefined && failure.codes.includes(code)) ||
      (statusCode !== undefined && failure.codes.includes(statusCode)) ||
      failure.texts.includes(text)
    ) {
      return new OperationError(failure.status, error.message || failure.texts[0] || "refused");
    }
  }
  if (text === "connection closed" || statusCode === 428) {
    return new OperationError(503, "WhatsApp is not connected");
  }
  return error;
}
