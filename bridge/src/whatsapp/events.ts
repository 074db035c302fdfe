/**
 * One batch of Baileys events (`sock.ev.process`) as network events, in the seam's terms: messages
 * (live and from history sync), receipts, contacts (with what is learnt about LID ↔ phone number),
 * groups, participants, calls and contacts' presence.
 */
import {
  type BaileysEventMap,
  type GroupMetadata,
  isLidUser,
  isPnUser,
  jidNormalizedUser,
  type WAMessage,
} from "@whiskeysockets/baileys";
import type { ContactInfo, NetworkEvent } from "../protocol/messaging.ts";
import { type BoundedMap, isFullMetadata } from "./caches.ts";
import { groupTimerEvents } from "./group-timer.ts";
import { DEFAULT_HISTORY_LIMIT, type HistoryLimit, historyEvents, lidContacts } from "./history.ts";
import { limitEvents } from "./limits.ts";
import {
  callEvent,
  chunks,
  contactInfo,
  groupInfo,
  participantJid,
  presenceEvents,
  statusEvents,
  upsertEvent,
} from "./mapping.ts";
import { receiptEvents } from "./receipts.ts";

export interface EventContext {
  history?: HistoryLimit;
  /** LID → phone number pairs already reported by this socket: each is sent to the edge once. */
  knownLids?: BoundedMap<string, string>;
  /** The account's own LID: group receipts from its own devices are not a recipient's. */
  meLid?: string;
  /** A group member's phone-number JID for their LID, when known (group-addresses.ts). */
  phoneOf?: (jid: string) => string;
}

const nonNull = <T>(value: T | null): value is T => value !== null;

/** The LID ↔ phone number pairs a message's addressing reveals (`remoteJidAlt`, `participantAlt`). */
function pairsOf(message: WAMessage): Array<{ lid: string; pn: string }> {
  const pairs: Array<{ lid: string; pn: string }> = [];
  const add = (jid: string | null | undefined, alt: string | null | undefined) => {
    if (!jid || !alt) return;
    if (isLidUser(jid) && isPnUser(alt)) pairs.push({ lid: jid, pn: alt });
    else if (isPnUser(jid) && isLidUser(alt)) pairs.push({ lid: alt, pn: jid });
  };
  add(message.key.remoteJid, message.key.remoteJidAlt);
  add(message.key.participant, message.key.participantAlt);
  return pairs;
}

/** Pairs not reported before by this socket, as contacts carrying both addresses. */
function newLidContacts(
  pairs: Array<{ lid: string; pn: string }>,
  known: BoundedMap<string, string> | undefined,
): ContactInfo[] {
  const fresh = pairs.filter(({ lid, pn }) => {
    const key = jidNormalizedUser(lid);
    if (known?.get(key) === pn) return false;
    known?.set(key, pn);
    return true;
  });
  return lidContacts(fresh);
}

/** Full metadata (a fetch of every group, a `dirty` refresh) is stored whole; the rest are changes. */
function groupEvents(events: Partial<BaileysEventMap>): NetworkEvent[] {
  const out: NetworkEvent[] = [];
  const updates = (events["groups.update"] ?? []).flatMap((meta) =>
    meta.id ? [{ ...meta, id: meta.id }] : [],
  );
  const full: GroupMetadata[] = [...(events["groups.upsert"] ?? []), ...updates.filter(isFullMetadata)];
  for (const batch of chunks(full))
    out.push({ kind: "groups", action: "upsert", groups: batch.map(groupInfo) });
  const partial = updates.filter((meta) => !isFullMetadata(meta));
  for (const batch of chunks(partial))
    out.push({ kind: "groups", action: "update", groups: batch.map(groupInfo) });
  return out;
}

/**
 * Whether an upserted message is news to the account (live: webhooks, the company line, auto-replies).
 * `notify` is a message as it arrives. `append` is also what WhatsApp kept for the device while it
 * was away (the offline queue, delivered at login) — someone else's message then is received now, not
 * history; an `append` of the account's own message is its own send echoed back, or one its phone sent
 * meanwhile, which the edge stores without announcing it again.
 */
function isReceivedNow(type: string | undefined, message: WAMessage): boolean {
  return type === "notify" || (type === "append" && message.key.fromMe !== true);
}

export function networkEvents(
  events: Partial<BaileysEventMap>,
  meId: string,
  onError: (error: unknown) => void = () => {},
  context: EventContext = {},
): NetworkEvent[] {
  const out: NetworkEvent[] = [];
  const history = events["messaging-history.set"];
  if (history) out.push(...historyEvents(history, meId, context.history ?? DEFAULT_HISTORY_LIMIT, onError));
  const upsert = events["messages.upsert"];
  // A batch can hold many messages: every one is reported, received ones as live, and one that cannot
  // be translated does not cost the others.
  for (const message of upsert?.messages ?? []) {
    try {
      const event = upsertEvent(message, isReceivedNow(upsert?.type, message), meId);
      if (event) out.push(event);
    } catch (error) {
      onError(error);
    }
  }
  out.push(...statusEvents(events["messages.update"] ?? [], meId));
  out.push(...receiptEvents(events["message-receipt.update"] ?? [], [meId, context.meLid ?? ""]));
  const mapping = events["lid-mapping.update"];
  const contacts = [
    ...newLidContacts(
      [...(upsert?.messages ?? []).flatMap(pairsOf), ...(mapping ? [mapping] : [])],
      context.knownLids,
    ),
    ...[...(events["contacts.upsert"] ?? []), ...(events["contacts.update"] ?? [])]
      .map(contactInfo)
      .filter(nonNull),
  ];
  for (const batch of chunks(contacts)) out.push({ kind: "contacts", contacts: batch });
  out.push(...groupEvents(events));
  out.push(...groupTimerEvents(upsert?.messages ?? []));
  const participants = events["group-participants.update"];
  if (participants) {
    const phoneOf = context.phoneOf ?? ((jid: string) => jid);
    const author = participants.authorPn ?? participants.author;
    out.push({
      kind: "group.participants",
      jid: participants.id,
      action: participants.action,
      // Objects since v7, not JIDs.
      participants: participants.participants.map((participant) => phoneOf(participantJid(participant))),
      ...(author ? { author: phoneOf(jidNormalizedUser(author)) } : {}),
    });
  }
  for (const call of events.call ?? []) out.push(callEvent(call));
  out.push(...limitEvents(events));
  const presence = events["presence.update"];
  if (presence) out.push(...presenceEvents(presence));
  return out;
}
