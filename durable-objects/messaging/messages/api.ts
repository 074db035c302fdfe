import type { Content, OutgoingContent } from "../../../bridge/src/protocol/messaging";
import { DownloadResultSchema } from "../../../bridge/src/protocol/operations";
import { limitOf, mediaLimits } from "../../../workers/media/limits";
import { mediaKey, newMediaRef } from "../../../workers/media/objects";
import { failure, type Outcome, type SessionContext, success } from "../context";
import { armRetention } from "../media/retention";
import { adoptDownloaded, deleteUpload, findMedia, recordMedia, type StoredMedia } from "../media/store";
import { recordSent, type SendRequest, sendMessage } from "./send";
import {
  attachMedia,
  findMessage,
  findMessageById,
  hasMedia,
  type MessageType,
  markDeleted,
  markEdited,
  refOf,
  type SearchQuery,
  search,
  setStarred,
} from "./store";
import { type MessageResource, newMessageId, toMessageResource } from "./view";

/** Sending and acting on single messages. Each handler is one SessionDO RPC (see ../../session/api.ts). */

interface MessageTarget {
  chat: string;
  messageId: string;
}

const notFoundMessage = failure(404, "Message not found in this chat");

function target(ctx: SessionContext, { chat, messageId }: MessageTarget) {
  return findMessage(ctx.sql, chat, messageId);
}

/** A file the Worker streamed into R2 as `ref` (its size already checked), to send to `to`. */
export interface MediaUpload {
  to: string;
  kind: "image" | "video" | "audio" | "voice" | "document" | "sticker";
  ref: string;
  size: number;
  mimetype: string;
  fileName: string;
  caption?: string;
}

function uploadContent(upload: MediaUpload): OutgoingContent {
  const media = { upload: upload.ref };
  switch (upload.kind) {
    case "image":
    case "video":
      return { type: upload.kind, media, ...(upload.caption ? { caption: upload.caption } : {}) };
    case "audio":
    case "voice":
      return { type: "audio", media, ptt: upload.kind === "voice" };
    case "document":
      return {
        type: "document",
        media,
        fileName: upload.fileName,
        mimetype: upload.mimetype,
        ...(upload.caption ? { caption: upload.caption } : {}),
      };
    case "sticker":
      return { type: "sticker", media };
  }
}

export const messagesApi = {
  "message.send": (ctx: SessionContext, request: SendRequest) => sendMessage(ctx, request),

  /** Holds the upload in the object until the bridge has fetched and sent it. */
  "message.sendUpload": async (
    ctx: SessionContext,
    upload: MediaUpload,
  ): Promise<Outcome<MessageResource>> => {
    if (!ctx.isConnected()) {
      await ctx.env.MEDIA.delete(mediaKey(ctx.sessionId, upload.ref));
      return failure(503, "Session not ready: WhatsApp is not connected");
    }
    const { ref, mimetype, fileName, size } = upload;
    recordMedia(ctx.sql, "upload", { ref, mimetype, fileName, size }, ctx.now());
    await armRetention(ctx);
    const sent = await sendMessage(ctx, { to: upload.to, content: uploadContent(upload) });
    // A send that failed leaves nothing to retry from: the upload goes (a sent one went in sendMessage).
    if (!sent.ok) await deleteUpload(ctx, ref);
    return sent;
  },

  "message.forward": async (
    ctx: SessionContext,
    input: { fromJid: string; messageId: string; toJids: string[] },
  ): Promise<Outcome<{ forwarded: MessageResource[] }>> => {
    const original = findMessage(ctx.sql, input.fromJid, input.messageId);
    if (!original) return notFoundMessage;
    const forwarded: MessageResource[] = [];
    for (const to of input.toJids) {
      const result = await ctx.wa({ op: "forward", to, messageId: newMessageId(), message: refOf(original) });
      if (!result.ok) return result;
      const stored = await recordSent(ctx, result.data);
      if (!stored.ok) return stored;
      forwarded.push(stored.data);
    }
    return success({ forwarded });
  },

  "message.react": async (
    ctx: SessionContext,
    input: MessageTarget & { emoji: string },
  ): Promise<Outcome> => {
    const row = target(ctx, input);
    if (!row) return notFoundMessage;
    const result = await ctx.wa({ op: "react", target: refOf(row), emoji: input.emoji });
    return result.ok ? success(null) : result;
  },

  "message.star": async (ctx: SessionContext, input: MessageTarget & { star: boolean }): Promise<Outcome> => {
    const row = target(ctx, input);
    if (!row) return notFoundMessage;
    const result = await ctx.wa({ op: "star", target: refOf(row), star: input.star });
    if (!result.ok) return result;
    setStarred(ctx.sql, row, input.star);
    return success(null);
  },

  "message.delete": async (ctx: SessionContext, input: MessageTarget): Promise<Outcome> => {
    const row = target(ctx, input);
    if (!row) return notFoundMessage;
    if (row.from_me !== 1 && !input.chat.endsWith("@g.us"))
      return failure(400, "Only your own messages can be deleted for everyone in a direct chat");
    const result = await ctx.wa({ op: "delete", target: refOf(row) });
    if (!result.ok) return result;
    const { settings, slug } = await ctx.config();
    if (markDeleted(ctx.sql, row.chat, row.id, ctx.now(), settings.antiDelete)) {
      ctx.emit("message.deleted", {
        keyId: row.id,
        remoteJid: row.chat,
        fromMe: row.from_me === 1,
        session: slug,
      });
    }
    return success(null);
  },

  "message.edit": async (
    ctx: SessionContext,
    input: MessageTarget & { text: string },
  ): Promise<Outcome<MessageResource>> => {
    const row = target(ctx, input);
    if (!row) return notFoundMessage;
    if (row.from_me !== 1) return failure(400, "Only your own messages can be edited");
    const result = await ctx.wa({ op: "edit", target: refOf(row), text: input.text });
    if (!result.ok) return result;
    markEdited(ctx.sql, row.chat, row.id, input.text, ctx.now());
    ctx.emit("message.edited", { keyId: row.id, remoteJid: row.chat, fromMe: true, newContent: input.text });
    const { slug } = await ctx.config();
    const edited = findMessage(ctx.sql, row.chat, row.id);
    return edited ? success(toMessageResource(edited, slug)) : notFoundMessage;
  },

  /** One stored message (a poll with its current votes). Reactions are folded into their targets. */
  "message.get": async (ctx: SessionContext, input: MessageTarget): Promise<Outcome<MessageResource>> => {
    const row = target(ctx, input);
    if (!row || row.type === "REACTION") return notFoundMessage;
    const { slug } = await ctx.config();
    return success(toMessageResource(row, slug));
  },

  "message.search": async (
    ctx: SessionContext,
    query: SearchQuery,
  ): Promise<Outcome<{ items: MessageResource[]; total: number }>> => {
    const { slug } = await ctx.config();
    const { items, total } = search(ctx.sql, query);
    return success({ items: items.map((row) => toMessageResource(row, slug)), total });
  },

  /** Whether a stored message carries media (a signed link is made only for one that does). */
  "media.check": async (ctx: SessionContext, input: { messageId: string }): Promise<Outcome> => {
    const row = findMessageById(ctx.sql, input.messageId);
    if (!row || row.deleted_at !== null) return failure(404, "Message not found");
    if (!hasMedia(JSON.parse(row.content) as Content)) return failure(404, "This message has no media");
    return success(null);
  },

  /**
   * The media of a stored message, in R2: stored once, by the bridge (it needs WhatsApp connected
   * for that), then served from there until the retention sweep removes it. Answers where it is.
   */
  "media.download": async (
    ctx: SessionContext,
    input: { messageId: string },
  ): Promise<Outcome<StoredMedia>> => {
    const row = findMessageById(ctx.sql, input.messageId);
    if (!row || row.deleted_at !== null) return failure(404, "Message not found");
    const content = JSON.parse(row.content) as Content;
    if (!hasMedia(content)) return failure(404, "This message has no media");
    if (row.media_ref) {
      const stored = await findMedia(ctx, row.media_ref);
      if (stored) return success(stored);
    }
    const ref = newMediaRef();
    const maxBytes = downloadLimit(ctx, content);
    const declared = "media" in content ? content.media.size : undefined;
    const transfer = { bytes: Math.min(declared ?? maxBytes, maxBytes) };
    const result = await ctx.wa({ op: "media.download", message: refOf(row), ref, maxBytes }, transfer);
    if (!result.ok) return result;
    if (!DownloadResultSchema.safeParse(result.data).success) return failure(500, "Bad download answer");
    const stored = await adoptDownloaded(ctx, ref);
    if (!stored) return failure(500, "The bridge did not deliver the media");
    attachMedia(ctx.sql, row, ref);
    await armRetention(ctx);
    return success(stored);
  },
};

/** The limit of the received media's kind (a voice note is audio; anything else a document). */
function downloadLimit(ctx: SessionContext, content: Content): number {
  return limitOf(mediaLimits(ctx.env.MEDIA_LIMITS_MB), content.type);
}

export type { MessageType };
