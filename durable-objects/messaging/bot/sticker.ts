import type { Content } from "../../../bridge/src/protocol/messaging";
import type { BotConfigValues } from "../config/session";
import type { SessionContext } from "../context";
import { messagesApi } from "../messages/api";
import { findMessage } from "../messages/store";
import type { MessageResource } from "../messages/view";
import { botReply, botSend } from "./reply";

type StickerSource = { id: string; content: Extract<Content, { type: "image" | "video" }> };

const asSource = (id: string, content: Content): StickerSource | null =>
  content.type === "image" || content.type === "video" ? { id, content } : null;

/** The image or video the command came with (as its caption), else the one it quotes. */
function stickerSource(ctx: SessionContext, message: MessageResource): StickerSource | null {
  const own = asSource(message.id, message.message);
  if (own) return own;
  if (!message.quotedId) return null;
  const quoted = findMessage(ctx.sql, message.remoteJid, message.quotedId);
  if (!quoted || quoted.deleted_at !== null) return null;
  return asSource(quoted.id, JSON.parse(quoted.content) as Content);
}

/**
 * `#sticker`: the source's bytes come into the object's media store (as `media.download` does for
 * the API), are copied to an upload, and the bridge converts them to WebP while sending. A copy,
 * because a send consumes its upload while the downloaded original stays attached to its message.
 */
export async function stickerCommand(
  ctx: SessionContext,
  bot: BotConfigValues,
  message: MessageResource,
): Promise<void> {
  const source = stickerSource(ctx, message);
  if (!source) {
    await botReply(
      ctx,
      message,
      `Send an image or a short video with the caption ${bot.prefix}sticker, or reply ${bot.prefix}sticker to one.`,
    );
    return;
  }
  if (source.content.type === "video") {
    if (!bot.enableVideoSticker) {
      await botReply(ctx, message, "Video stickers are turned off for this bot: send an image instead.");
      return;
    }
    const seconds = source.content.media.seconds;
    if (seconds !== undefined && seconds > bot.maxStickerDuration) {
      await botReply(
        ctx,
        message,
        `That video is ${seconds} s long: video stickers can be at most ${bot.maxStickerDuration} s.`,
      );
      return;
    }
  }
  const downloaded = await messagesApi["media.download"](ctx, { messageId: source.id });
  if (!downloaded.ok) {
    await botReply(ctx, message, `Could not get the media for the sticker: ${downloaded.error}`);
    return;
  }
  // The received file itself is the sticker's source: the bridge reads it from R2 as it would an
  // upload, and it stays the message's media afterwards (only uploads are removed once sent).
  const sent = await botSend(
    ctx,
    message,
    { type: "sticker", media: { upload: downloaded.data.ref }, pack: bot.botName, author: bot.botName },
    true,
  );
  if (!sent.ok) await botReply(ctx, message, `Could not make the sticker: ${sent.error}`);
}
