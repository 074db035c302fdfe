import type { RelayedEvent } from "../../../../durable-objects/messaging/line/relay";

/**
 * An inbound WhatsApp message that may answer one of the line's notices, as the line's session
 * reported it: a reply quoting a notice, a reaction to one, or a vote in a notice's poll. `answers`
 * is the WhatsApp id of the message it answers (a reply's quotedId, a reaction's target, a vote's poll).
 */
export type Inbound =
  | { kind: "reply"; id: string; phone: string | null; answers: string; text: string }
  | { kind: "reaction"; id: string; phone: string | null; answers: string; emoji: string }
  | { kind: "vote"; id: string; phone: string | null; answers: string; options: string[] };

/**
 * Digits of a phone-number JID (`15551234567@s.whatsapp.net`, with or without a device suffix), or
 * null for anything else (a LID the bridge could not map to a number, a group): such a sender can
 * never be matched to a member's verified number.
 */
export function phoneOf(jid: unknown): string | null {
  if (typeof jid !== "string") return null;
  const match = /^(\d{5,20})(?::\d+)?@s\.whatsapp\.net$/.exec(jid.trim());
  return match?.[1] ?? null;
}

const digitsOnly = (value: unknown): string | null =>
  typeof value === "string" && /^\+?\d{5,20}$/.test(value.trim()) ? value.trim().replace(/^\+/, "") : null;

type Fields = Record<string, unknown>;
const isFields = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === "string" && value !== "" ? value : null);

/** A received message (the message resource of `message.received`) that quotes or reacts to something. */
function fromMessage(data: Fields): Inbound | null {
  const id = str(data.id);
  if (id === null || data.fromMe === true) return null;
  // A LID-only sender arrives with the number the session paired it with (messaging/line/relay.ts).
  const phone = phoneOf(data.sender) ?? digitsOnly(data.senderPhone);
  const content = isFields(data.message) ? data.message : {};
  if (content.type === "reaction") {
    const target = str(content.targetId);
    const emoji = typeof content.emoji === "string" ? content.emoji : "";
    return target === null ? null : { kind: "reaction", id, phone, answers: target, emoji };
  }
  const quoted = str(data.quotedId);
  if (quoted === null) return null;
  return {
    kind: "reply",
    id,
    phone,
    answers: quoted,
    text: typeof data.content === "string" ? data.content : "",
  };
}

/** A `poll.vote` event: `{keyId, pollId, voter, voterPhone, selectedOptions}`. */
function fromVote(data: Fields): Inbound | null {
  const id = str(data.keyId);
  const pollId = str(data.pollId);
  if (id === null || pollId === null) return null;
  const options = Array.isArray(data.selectedOptions)
    ? data.selectedOptions.filter((o): o is string => typeof o === "string")
    : [];
  const phone = digitsOnly(data.voterPhone) ?? phoneOf(data.voterPhone) ?? phoneOf(data.voter);
  return { kind: "vote", id, phone, answers: pollId, options };
}

/** The answer an outbox entry may carry, or null when it answers nothing. */
export function inboundOf(entry: RelayedEvent): Inbound | null {
  if (!isFields(entry.data)) return null;
  if (entry.event === "message.received") return fromMessage(entry.data);
  if (entry.event === "poll.vote") return fromVote(entry.data);
  return null;
}
