/**
 * Poll votes. Baileys 7.0.0-rc14 no longer decrypts them (its vote branch in processMessage is
 * commented out): a vote reaches us as a raw `messages.upsert` carrying `pollUpdateMessage`, and is
 * decrypted here with Baileys' exported `decryptPollVote` and the poll's own message secret.
 *
 * The secret, and the option names a vote's hashes stand for, live in the poll's own record: the
 * socket's memory of recent sends, else the edge's stored copy (what a resend request is answered from),
 * so a vote that arrives after a restart or a failover still decrypts.
 *
 * WhatsApp derives the vote's key from the poll creator's and the voter's JIDs as strings, in whichever
 * form the voter's phone chose (phone number or LID, never with a device): each pair is tried, and a
 * wrong pair fails the GCM check rather than giving a wrong answer.
 * Baileys' side of the bridge (see the rule in mapping.ts).
 */
import { createHash } from "node:crypto";
import {
  decryptPollVote,
  isLidUser,
  isPnUser,
  jidNormalizedUser,
  normalizeMessageContent,
  proto,
  type WAMessage,
} from "@whiskeysockets/baileys";
import type { NetworkEvent, PollVote } from "../protocol/messaging.ts";

/** What decrypting a vote on one poll needs, from the poll as it was sent. */
export interface PollRecord {
  secret: Uint8Array;
  /** The option names exactly as sent: a vote carries `sha256(name)` for each one chosen. */
  options: string[];
}

export interface VoteContext {
  /** The account's own phone-number and LID JIDs (any form: they are normalised here). */
  own: { pn: string; lid: string };
  /** The poll's record, or null when neither memory nor the edge has it. */
  pollRecord(chat: string, pollId: string): Promise<PollRecord | null>;
  /** The phone-number JID behind a LID, as far as the account knows it. */
  phoneNumberOf(lid: string): Promise<string | null>;
}

/** A vote that could not be read: no record of the poll, or no JID pair that opens it. */
export class UndecryptableVote extends Error {
  constructor(
    readonly voteId: string,
    readonly pollId: string,
    reason: string,
  ) {
    super(`poll vote ${voteId} on poll ${pollId} could not be decrypted: ${reason}`);
    this.name = "UndecryptableVote";
  }
}

export const isPollVote = (message: WAMessage): boolean =>
  Boolean(normalizeMessageContent(message.message)?.pollUpdateMessage);

/**
 * A poll's secret and options from its message (a protobuf object, or the edge's JSON copy, where the
 * secret is a base64 string: `fromObject` turns it back into bytes); null if it is not a poll.
 */
export function pollRecordOf(message: unknown): PollRecord | null {
  if (typeof message !== "object" || message === null) return null;
  const decoded = proto.Message.fromObject(message as Record<string, unknown>);
  const secret = decoded.messageContextInfo?.messageSecret;
  const content = normalizeMessageContent(decoded);
  const poll =
    content?.pollCreationMessage ?? content?.pollCreationMessageV2 ?? content?.pollCreationMessageV3;
  if (!poll || !secret?.length) return null;
  return { secret, options: (poll.options ?? []).map((option) => option.optionName ?? "") };
}

const sha256Hex = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

/** The voter's phone-number and LID JIDs, as far as the vote's key and the LID store tell. */
async function voterJids(
  message: WAMessage,
  context: VoteContext,
): Promise<{ pn: string | null; lid: string | null }> {
  const key = message.key;
  if (key.fromMe)
    return { pn: jidNormalizedUser(context.own.pn), lid: jidNormalizedUser(context.own.lid) || null };
  const inGroup = Boolean(key.participant);
  const jid = jidNormalizedUser((inGroup ? key.participant : key.remoteJid) ?? "");
  const alt = (inGroup ? key.participantAlt : key.remoteJidAlt) ?? "";
  const normalisedAlt = alt ? jidNormalizedUser(alt) : "";
  const lid = [jid, normalisedAlt].find((candidate) => isLidUser(candidate)) ?? null;
  let pn = [normalisedAlt, jid].find((candidate) => isPnUser(candidate)) ?? null;
  if (!pn && lid) {
    const found = await context.phoneNumberOf(lid).catch(() => null);
    pn = found ? jidNormalizedUser(found) : null;
  }
  return { pn, lid };
}

/** The selected options' hashes, trying every creator × voter JID pair the phone may have used. */
function decryptWithAnyPair(
  vote: proto.Message.IPollEncValue,
  pollId: string,
  secret: Uint8Array,
  creators: string[],
  voters: string[],
): Uint8Array[] | null {
  for (const pollCreatorJid of creators) {
    for (const voterJid of voters) {
      try {
        const decrypted = decryptPollVote(vote, {
          pollCreatorJid,
          pollMsgId: pollId,
          pollEncKey: secret,
          voterJid,
        });
        return decrypted.selectedOptions ?? [];
      } catch {
        // A wrong pair fails authentication: try the next.
      }
    }
  }
  return null;
}

/** The digits of a phone-number JID, when they look like one (the protocol refuses anything else). */
function phoneDigits(jid: string | null): string | null {
  const digits = jid?.split("@")[0] ?? "";
  return /^\d{5,20}$/.test(digits) ? digits : null;
}

const epochMs = (value: number | { toNumber(): number } | null | undefined): number | undefined =>
  value === null || value === undefined ? undefined : typeof value === "number" ? value : value.toNumber();

/**
 * A `pollUpdateMessage` as a `poll.vote` event. Throws UndecryptableVote when it cannot be read (the
 * caller logs it: one unreadable vote must not stop the session).
 */
export async function pollVoteEvent(message: WAMessage, context: VoteContext): Promise<NetworkEvent> {
  const update = normalizeMessageContent(message.message)?.pollUpdateMessage;
  const voteId = message.key.id ?? "";
  const pollId = update?.pollCreationMessageKey?.id ?? "";
  if (!update?.vote || !voteId || !pollId) throw new UndecryptableVote(voteId, pollId, "incomplete vote");
  const voter = await voterJids(message, context);
  const chat = jidNormalizedUser(message.key.remoteJid ?? "");
  const chatAlt = message.key.remoteJidAlt ? jidNormalizedUser(message.key.remoteJidAlt) : "";
  // The poll's chat as the edge stored it: by phone number when known (a group keeps its own JID).
  const oneToOneFromPeer = !message.key.fromMe && !message.key.participant;
  const pollChat = isPnUser(chatAlt) ? chatAlt : oneToOneFromPeer && voter.pn ? voter.pn : chat;
  const record = await context.pollRecord(pollChat, pollId);
  if (!record) throw new UndecryptableVote(voteId, pollId, "the poll's record (its secret) is not known");
  const creators = [context.own.lid, context.own.pn].filter(Boolean).map(jidNormalizedUser);
  const voters = [voter.pn, voter.lid].filter((jid): jid is string => Boolean(jid));
  const hashes = decryptWithAnyPair(update.vote, pollId, record.secret, creators, voters);
  if (!hashes) throw new UndecryptableVote(voteId, pollId, "no creator/voter JID pair opens it");
  const byHash = new Map(record.options.map((name) => [sha256Hex(name), name]));
  const selectedOptions = hashes.flatMap((hash) => {
    const name = byHash.get(Buffer.from(hash).toString("hex"));
    return name === undefined ? [] : [name];
  });
  const seconds = epochMs(message.messageTimestamp);
  const vote: PollVote = {
    id: voteId,
    chat: pollChat,
    pollId,
    voter: voter.pn ?? voter.lid ?? chat,
    voterPhone: phoneDigits(voter.pn),
    selectedOptions,
    timestamp: epochMs(update.senderTimestampMs) ?? (seconds !== undefined ? seconds * 1000 : Date.now()),
  };
  return { kind: "poll.vote", vote };
}
