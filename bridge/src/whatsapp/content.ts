/**
 * Our message shapes to Baileys': keys that address a stored message, the WAMessage to quote or
 * forward, and the content of a send. Imported only by operations.ts, so it belongs to the
 * Baileys side that only whatsapp.ts loads (see the rule in mapping.ts).
 */
import { randomBytes } from "node:crypto";
import type { AnyMessageContent, WAMessage, WAMessageKey } from "@whiskeysockets/baileys";
import { isAnimatedWebp } from "../media/webp.ts";
import type { MessageRef, OutgoingContent } from "../protocol/messaging.ts";
import { UNKNOWN_MIMETYPE } from "../protocol/mime.ts";
import { assertSendable, isGroupJid } from "../protocol/operation-rules.ts";
import { OperationError, type PreparedMedia } from "../protocol/seam.ts";
import { fromJson } from "./mapping.ts";

export function keyOf(ref: MessageRef): WAMessageKey {
  return {
    remoteJid: ref.chat,
    fromMe: ref.fromMe,
    id: ref.id,
    ...(isGroupJid(ref.chat) && !ref.fromMe ? { participant: ref.sender } : {}),
  };
}

/** The original WAMessage when the edge kept it (`raw`), else the least Baileys can quote or forward. */
export function messageOf(ref: MessageRef): WAMessage {
  if (ref.raw !== undefined && ref.raw !== null) return fromJson(ref.raw) as WAMessage;
  const content = ref.content;
  const text = content.type === "text" ? content.text : "caption" in content ? (content.caption ?? "") : "";
  return {
    key: keyOf(ref),
    message: { conversation: text },
    messageTimestamp: Math.floor(ref.timestamp / 1000),
  };
}

/**
 * What to forward: only the original can carry media (its keys and URL). Text is rebuilt from what is
 * stored now, so an edited message forwards as it reads after the edit (the original record keeps the
 * first text, as WhatsApp sent it).
 */
export function forwardable(ref: MessageRef): WAMessage {
  if (ref.content.type === "text") {
    const { raw: _original, ...current } = ref;
    return messageOf(current);
  }
  if (ref.raw === undefined || ref.raw === null) {
    throw new OperationError(400, "this message cannot be forwarded: its original record is not stored");
  }
  return messageOf(ref);
}

/** Media held in memory (images, audio, stickers, profile pictures), as Baileys takes it. */
export function bytes(media: PreparedMedia | null): Buffer {
  if (!media) throw new OperationError(400, "media missing for a media message");
  if ("file" in media) throw new Error("this media was spooled to disk but is only sent from memory");
  return Buffer.from(media.bytes.buffer, media.bytes.byteOffset, media.bytes.byteLength);
}

/**
 * A video or document as Baileys takes it: a spooled file by its path (Baileys' getStream reads a
 * non-HTTP url with createReadStream, encrypts to its own temp file and uploads from there: never
 * whole in memory), or bytes already in memory.
 */
export function mediaInput(media: PreparedMedia | null): Buffer | { url: string } {
  if (media && "file" in media) return { url: media.file.path };
  return bytes(media);
}

export function messageContent(content: OutgoingContent, media: PreparedMedia | null): AnyMessageContent {
  assertSendable(content);
  switch (content.type) {
    case "text":
      return { text: content.text, ...(content.mentions ? { mentions: content.mentions } : {}) };
    case "image":
    case "video": {
      const common = {
        mimetype: media?.mimetype,
        ...(content.caption ? { caption: content.caption } : {}),
        ...(content.mentions ? { mentions: content.mentions } : {}),
      };
      // Given, Baileys does not try its own (ffmpeg from the PATH, usually absent: no preview at all).
      const thumbnail = media?.thumbnail
        ? { jpegThumbnail: Buffer.from(media.thumbnail).toString("base64") }
        : {};
      return content.type === "image"
        ? { image: bytes(media), ...common }
        : { video: mediaInput(media), ...common, ...thumbnail };
    }
    case "audio": {
      const audio = { audio: bytes(media), ptt: content.ptt, mimetype: media?.mimetype ?? UNKNOWN_MIMETYPE };
      // Baileys' types leave `waveform` out, but it sends one it is given instead of computing its own
      // (which needs the optional audio-decode package: without it, no waveform at all).
      return media?.waveform ? Object.assign(audio, { waveform: media.waveform }) : audio;
    }
    case "document":
      return {
        document: mediaInput(media),
        mimetype: content.mimetype,
        fileName: content.fileName,
        ...(content.caption ? { caption: content.caption } : {}),
      };
    case "sticker": {
      const webp = bytes(media);
      return { sticker: webp, mimetype: "image/webp", isAnimated: isAnimatedWebp(webp) };
    }
    case "poll":
      // Our own secret rather than Baileys' silent default: votes are decrypted with it (poll-votes.ts),
      // and it travels in the sent message's record (`messageContextInfo`), which the edge keeps.
      return {
        poll: {
          name: content.question,
          values: content.options,
          selectableCount: content.selectableCount,
          messageSecret: randomBytes(32),
        },
      };
    case "location":
      return {
        location: {
          degreesLatitude: content.latitude,
          degreesLongitude: content.longitude,
          ...(content.name ? { name: content.name } : {}),
          ...(content.address ? { address: content.address } : {}),
        },
      };
    case "contacts":
      return {
        contacts: {
          displayName:
            content.contacts.length === 1
              ? (content.contacts[0]?.displayName ?? "")
              : `${content.contacts.length} contacts`,
          contacts: content.contacts.map((card) => ({ displayName: card.displayName, vcard: card.vcard })),
        },
      };
    default:
      throw new OperationError(400, `${content.type} content cannot be sent`);
  }
}
