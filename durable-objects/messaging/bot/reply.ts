import type { OutgoingContent } from "../../../bridge/src/protocol/messaging";
import type { SessionContext } from "../context";
import { sendMessage } from "../messages/send";
import { type MessageResource, newMessageId } from "../messages/view";
import { overChatLimit, rememberBotSend } from "./memory";

export type BotSend = { ok: true } | { ok: false; error: string };

function bodyOf(content: OutgoingContent): string | null {
  if (content.type === "text") return content.text;
  return "caption" in content ? (content.caption ?? null) : null;
}

/**
 * Every bot send goes through here: the chat's rate ceiling, then the send (the one way out, see
 * messages/send.ts) with an id chosen and remembered first, so its echo cannot trigger the bot again.
 */
export async function botSend(
  ctx: SessionContext,
  to: MessageResource,
  content: OutgoingContent,
  quote: boolean,
): Promise<BotSend> {
  const chat = to.remoteJid;
  const now = ctx.now();
  if (overChatLimit(ctx.sql, chat, now)) {
    console.warn(
      JSON.stringify({ msg: "bot reply skipped: chat over its rate", session: ctx.sessionId, chat }),
    );
    return { ok: false, error: "too many bot replies in this chat" };
  }
  const messageId = newMessageId();
  rememberBotSend(ctx.sql, chat, messageId, bodyOf(content), now);
  const sent = await sendMessage(ctx, {
    to: chat,
    content,
    messageId,
    ...(quote ? { quotedId: to.id } : {}),
  });
  if (sent.ok) return { ok: true };
  console.warn(
    JSON.stringify({
      msg: "bot reply failed",
      session: ctx.sessionId,
      chat,
      status: sent.status,
      error: sent.error,
    }),
  );
  return { ok: false, error: sent.error };
}

/** A text answer quoting the message it answers. */
export function botReply(ctx: SessionContext, to: MessageResource, text: string): Promise<BotSend> {
  return botSend(ctx, to, { type: "text", text }, true);
}
