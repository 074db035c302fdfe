import type { Content } from "../../../bridge/src/protocol/messaging";
import type { BotConfigValues } from "../config/session";
import { otherAddress } from "../contacts/store";
import type { SessionContext } from "../context";
import type { MessageResource } from "../messages/view";
import { answeringRule, replyContent } from "./auto-replies";
import { isBotEcho } from "./memory";
import { botReply, botSend } from "./reply";
import {
  AUTO_REPLY_BUDGET_MS,
  bareJid,
  type CommandName,
  commandEnabled,
  formatUptime,
  mayRunCommand,
  menuText,
  parseCommand,
  triggersAutoReply,
  usesLists,
} from "./rules";
import { stickerCommand } from "./sticker";

/** Only text and captions speak to the bot: a poll question or a contact's name is not a command. */
function textOf(content: Content): string | null {
  switch (content.type) {
    case "text":
      return content.text;
    case "image":
    case "video":
    case "document":
      return content.caption ?? null;
    default:
      return null;
  }
}

/** People and groups; never status, broadcast lists or newsletters. */
const isConversation = (chat: string) =>
  chat.endsWith("@s.whatsapp.net") || chat.endsWith("@g.us") || chat.endsWith("@lid");

function connectedAt(ctx: SessionContext): number | null {
  const row = ctx.sql
    .exec<{ connected_at: number | null }>("SELECT connected_at FROM session WHERE k = 1")
    .toArray()[0];
  return row?.connected_at ?? null;
}

async function runCommand(
  ctx: SessionContext,
  bot: BotConfigValues,
  command: CommandName,
  message: MessageResource,
): Promise<void> {
  switch (command) {
    case "ping":
      await botReply(ctx, message, "Pong! 🏓");
      return;
    case "uptime": {
      const since = connectedAt(ctx);
      await botReply(
        ctx,
        message,
        since === null ? "⏱️ Not connected" : `⏱️ Uptime: ${formatUptime(ctx.now() - since)}`,
      );
      return;
    }
    case "id":
      await botReply(ctx, message, message.remoteJid);
      return;
    case "menu":
      await botReply(ctx, message, menuText(bot));
      return;
    case "sticker":
      await stickerCommand(ctx, bot, message);
      return;
  }
}

/** The auto-reply for `text`; rules the matching budget left unexamined are logged, not silent. */
async function matchingRule(ctx: SessionContext, message: MessageResource, text: string) {
  const search = await answeringRule(ctx, message.remoteJid, text);
  if (search.skipped > 0)
    console.warn(
      JSON.stringify({
        msg: "auto-reply rules skipped: the message's matching budget is spent",
        session: ctx.sessionId,
        chat: message.remoteJid,
        message: message.id,
        budgetMs: AUTO_REPLY_BUDGET_MS,
        tried: search.tried,
        skipped: search.skipped,
      }),
    );
  return search.rule;
}

/**
 * Bot commands and keyword auto-replies for one live message (received, or sent from the phone).
 * A command the sender may run and the config enables is answered and goes no further; anything else
 * (ordinary text, a disabled command, a command from someone not allowed) may match an auto-reply.
 */
export async function reactToLiveMessage(ctx: SessionContext, message: MessageResource): Promise<void> {
  if (!isConversation(message.remoteJid) || message.deletedAt !== null) return;
  const { bot } = await ctx.config();
  if (!bot.enabled) return;
  const text = textOf(message.message);
  const seen = { chat: message.remoteJid, id: message.id, fromMe: message.fromMe, text };
  if (isBotEcho(ctx.sql, seen, ctx.now())) return;
  // Lists may name a person by phone number or by LID, whichever the message came from.
  const lookup = !message.fromMe && (usesLists(bot.botMode) || usesLists(bot.autoReplyMode));
  const author = {
    fromMe: message.fromMe,
    sender: message.sender,
    alias: lookup ? otherAddress(ctx.sql, bareJid(message.sender)) : null,
  };
  const command = text === null ? null : parseCommand(text, bot.prefix);
  if (command && commandEnabled(bot, command) && mayRunCommand(bot, author)) {
    await runCommand(ctx, bot, command, message);
    return;
  }
  if (text === null || !triggersAutoReply(bot, author)) return;
  const rule = await matchingRule(ctx, message, text);
  const content = rule ? replyContent(rule) : null;
  // A macro typed on the phone is replaced in spirit, not answered: quoting it would look odd.
  if (content) await botSend(ctx, message, content, !message.fromMe);
}
