import type { PRESENCES } from "../../../bridge/src/protocol/messaging";
import { type NumberCheckResult, NumberCheckResultSchema } from "../../../bridge/src/protocol/operations";
import { failure, type Outcome, type SessionContext, success } from "../context";
import { history, lastMessage, type Page, parseCursor, refOf, unreadMessages } from "../messages/store";
import { type MessageResource, toMessageResource } from "../messages/view";
import { hasRoomFor, MAX_PRESENCE_SUBSCRIPTIONS, rememberSubscription } from "./presence";
import { findChat, listChats, updateChat } from "./store";

/** Chats: the list, each chat's history, and the chat-level actions (read, archive, mute, pin). */

export interface ChatResource {
  jid: string;
  name: string | null;
  isGroup: boolean;
  unreadCount: number;
  archived: boolean;
  pinned: boolean;
  mutedUntil: string | null;
  lastMessage: { content: string | null; type: string; timestamp: string; fromMe: boolean } | null;
}

export type ChatAction = "archive" | "unarchive" | "mute" | "unmute" | "pin" | "unpin";

/** WhatsApp's default mute, and what the reference uses when no duration is given. */
const DEFAULT_MUTE_SECONDS = 8 * 60 * 60;

export const chatsApi = {
  "chat.list": (ctx: SessionContext, input: { limit: number; offset: number }): Outcome<ChatResource[]> =>
    success(
      listChats(ctx.sql, input.limit, input.offset).map(({ chat, last }) => ({
        jid: chat.jid,
        name: chat.name,
        isGroup: chat.jid.endsWith("@g.us"),
        unreadCount: chat.unread,
        archived: chat.archived === 1,
        pinned: chat.pinned === 1,
        mutedUntil:
          chat.muted_until && chat.muted_until > ctx.now() ? new Date(chat.muted_until).toISOString() : null,
        lastMessage: last
          ? {
              content: last.body,
              type: last.type,
              timestamp: new Date(last.timestamp).toISOString(),
              fromMe: last.from_me === 1,
            }
          : null,
      })),
    ),

  "chat.history": async (
    ctx: SessionContext,
    input: { chat: string; limit: number; before: string | null },
  ): Promise<Outcome<Page<MessageResource>>> => {
    const { slug } = await ctx.config();
    const before = input.before === null ? null : parseCursor(input.before);
    if (input.before !== null && !before) return failure(400, "before must be a cursor from a previous page");
    const page = history(ctx.sql, input.chat, input.limit, before);
    return success({
      items: page.items.map((row) => toMessageResource(row, slug)),
      nextCursor: page.nextCursor,
    });
  },

  /** Marks the given messages (or the chat's latest 100 received ones) read, on the phone too. */
  "chat.read": async (
    ctx: SessionContext,
    input: { chat: string; messageIds?: string[] },
  ): Promise<Outcome<{ read: number }>> => {
    const rows = input.messageIds
      ? unreadMessages(ctx.sql, input.chat, 1000).filter((row) => input.messageIds?.includes(row.id))
      : unreadMessages(ctx.sql, input.chat, 100);
    if (input.messageIds && rows.length === 0) return failure(404, "None of these messages is in this chat");
    if (rows.length > 0) {
      const result = await ctx.wa({ op: "read", chat: input.chat, targets: rows.map(refOf) });
      if (!result.ok) return result;
    }
    updateChat(ctx.sql, input.chat, { unread: 0 });
    return success({ read: rows.length });
  },

  "chat.modify": async (
    ctx: SessionContext,
    input: { chat: string; action: ChatAction; muteSeconds?: number },
  ): Promise<Outcome<{ mutedUntil: string | null }>> => {
    const muteUntil =
      input.action === "mute" ? ctx.now() + (input.muteSeconds ?? DEFAULT_MUTE_SECONDS) * 1000 : undefined;
    const last = lastMessage(ctx.sql, input.chat);
    const result = await ctx.wa({
      op: "chat.modify",
      chat: input.chat,
      action: input.action,
      ...(muteUntil !== undefined ? { muteUntil } : {}),
      ...(last ? { lastMessage: refOf(last) } : {}),
    });
    if (!result.ok) return result;
    if (input.action === "archive" || input.action === "unarchive")
      updateChat(ctx.sql, input.chat, { archived: input.action === "archive" ? 1 : 0 });
    if (input.action === "pin" || input.action === "unpin")
      updateChat(ctx.sql, input.chat, { pinned: input.action === "pin" ? 1 : 0 });
    if (input.action === "mute" || input.action === "unmute")
      updateChat(ctx.sql, input.chat, { muted_until: muteUntil ?? null });
    const chat = findChat(ctx.sql, input.chat);
    return success({ mutedUntil: chat?.muted_until ? new Date(chat.muted_until).toISOString() : null });
  },

  "chat.presence": async (
    ctx: SessionContext,
    input: { chat: string; presence: (typeof PRESENCES)[number] },
  ): Promise<Outcome> => {
    const result = await ctx.wa({ op: "presence", chat: input.chat, presence: input.presence });
    return result.ok ? success(null) : result;
  },

  /** WhatsApp tells this session the contact's presence from now on (`presence.update` webhooks), also after reconnects. */
  "chat.presence.subscribe": async (ctx: SessionContext, input: { jid: string }): Promise<Outcome> => {
    if (!hasRoomFor(ctx.sql, input.jid)) {
      return failure(409, `A session follows at most ${MAX_PRESENCE_SUBSCRIPTIONS} contacts' presence`);
    }
    const result = await ctx.wa({ op: "presence.subscribe", jid: input.jid });
    if (!result.ok) return result;
    rememberSubscription(ctx.sql, input.jid, ctx.now());
    return success(null);
  },

  "chat.picture": async (
    ctx: SessionContext,
    input: { jid: string },
  ): Promise<Outcome<{ url: string | null }>> => {
    const result = await ctx.wa({ op: "profile.picture.url", jid: input.jid });
    if (!result.ok) return result;
    const url = (result.data as { url?: unknown } | null)?.url;
    return success({ url: typeof url === "string" ? url : null });
  },

  /** One batched lookup on the network for up to 50 numbers (the reference asks once per number). */
  "numbers.check": async (
    ctx: SessionContext,
    input: { numbers: string[] },
  ): Promise<Outcome<NumberCheckResult>> => {
    const result = await ctx.wa({ op: "numbers.check", numbers: input.numbers });
    if (!result.ok) return result;
    const parsed = NumberCheckResultSchema.safeParse(result.data);
    return parsed.success ? success(parsed.data) : failure(500, "The bridge answered outside the protocol");
  },
};
