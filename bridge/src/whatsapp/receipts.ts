/**
 * Delivery and read receipts as `message.status` events, beyond the one-to-one `messages.update`
 * (mapping.ts `statusEvents`). Baileys' side of the bridge (see the rule in mapping.ts).
 *
 * - Groups: Baileys reports a receipt per participant as `message-receipt.update`, never as
 *   `messages.update`. A message's status moves with the first participant that got (or read) it.
 * - LIDs: WhatsApp sends a contact's receipts from its LID (`<lid>@lid`) with no phone number alongside,
 *   while the message was sent to, and is stored under, the phone number.
 */
import {
  areJidsSameUser,
  isLidUser,
  jidNormalizedUser,
  type MessageUserReceiptUpdate,
  type proto,
} from "@whiskeysockets/baileys";
import type { MessageStatus, NetworkEvent } from "../protocol/messaging.ts";

type Timestamp = number | { toNumber(): number } | null | undefined;
const isSet = (timestamp: Timestamp) =>
  timestamp !== null &&
  timestamp !== undefined &&
  (typeof timestamp === "number" ? timestamp : timestamp.toNumber()) > 0;

function receiptStatus(receipt: proto.IUserReceipt): MessageStatus | null {
  if (isSet(receipt.readTimestamp) || isSet(receipt.playedTimestamp)) return "READ";
  if (isSet(receipt.receiptTimestamp)) return "DELIVERED";
  return null;
}

/**
 * Per-participant receipts for our own messages (groups, status posts) as status events. Receipts from
 * the account's own devices (`own`: its number and LID) are not a recipient's: Baileys even turns an own
 * device's `sender` receipt into a read timestamp.
 */
export function receiptEvents(updates: MessageUserReceiptUpdate[], own: string[] = []): NetworkEvent[] {
  const isOwn = (jid: string | null | undefined) => !!jid && own.some((me) => me && areJidsSameUser(jid, me));
  return updates.flatMap(({ key, receipt }): NetworkEvent[] => {
    const status = receiptStatus(receipt);
    if (!status || !key.id || !key.remoteJid || key.fromMe === false || isOwn(receipt.userJid)) return [];
    return [{ kind: "message.status", id: key.id, chat: key.remoteJid, status }];
  });
}

/** The phone-number JID behind a LID, as far as the account knows it (Baileys' LID mapping store). */
export type PhoneNumberOf = (lid: string) => Promise<string | null>;

/** The phone-number JID for a LID when the mapping is known; anything else unchanged. */
async function preferPhoneNumber(jid: string, phoneNumberOf: PhoneNumberOf): Promise<string> {
  if (!isLidUser(jid)) return jid;
  const phoneNumber = await phoneNumberOf(jid).catch(() => null);
  return phoneNumber ? jidNormalizedUser(phoneNumber) : jid;
}

/**
 * Status events addressed to a contact's LID, moved to its phone number when the mapping is known, so
 * they match the message as the edge stored it; a contact's presence likewise, so it names the chat as
 * the edge knows it. Any other event, or an unknown LID, passes unchanged.
 */
export async function withPhoneNumberChats(
  events: NetworkEvent[],
  phoneNumberOf: PhoneNumberOf,
): Promise<NetworkEvent[]> {
  return Promise.all(
    events.map(async (event) => {
      if (event.kind === "message.status") {
        return { ...event, chat: await preferPhoneNumber(event.chat, phoneNumberOf) };
      }
      if (event.kind === "presence") {
        const [chat, participant] = await Promise.all([
          preferPhoneNumber(event.chat, phoneNumberOf),
          preferPhoneNumber(event.participant, phoneNumberOf),
        ]);
        return { ...event, chat, participant };
      }
      return event;
    }),
  );
}

/** Whether a batch needs the (asynchronous) LID lookup at all; most batches do not. */
export const needsPhoneNumbers = (events: NetworkEvent[]) =>
  events.some(
    (event) =>
      (event.kind === "message.status" && isLidUser(event.chat)) ||
      (event.kind === "presence" && (isLidUser(event.chat) || isLidUser(event.participant))),
  );

/**
 * Hands each batch of events to `emit` in order. A batch with LID receipts waits for the lookup, and
 * every batch after it waits behind it; otherwise (nearly always) events go out at once.
 */
export function inOrderWithPhoneNumbers(
  phoneNumberOf: PhoneNumberOf,
  emit: (event: NetworkEvent) => void,
): (events: NetworkEvent[]) => void {
  let waiting = 0;
  let queue: Promise<void> = Promise.resolve();
  return (events) => {
    if (waiting === 0 && !needsPhoneNumbers(events)) {
      for (const event of events) emit(event);
      return;
    }
    waiting++;
    queue = queue
      .then(() => withPhoneNumberChats(events, phoneNumberOf))
      .then((resolved) => {
        for (const event of resolved) emit(event);
      })
      .finally(() => {
        waiting--;
      });
  };
}
