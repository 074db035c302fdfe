import {
  type NetworkEvent,
  PERSON_JID,
  STATUS_JID,
  type WireMessage,
} from "../../bridge/src/protocol/messaging";
import { signMediaLink, WEBHOOK_LINK_SECONDS } from "../../workers/media/signed-url";
import { reactToLiveMessage } from "../messaging/bot/bot";
import { applyChatUpdate, applyStarred } from "../messaging/chats/app-state";
import { applyContactsEvent } from "../messaging/contacts/store";
import type { SessionContext } from "../messaging/context";
import { applyGroupsEvent, applyParticipantsEvent } from "../messaging/groups/store";
import { applyLabelAssociation, applyLabelEdit } from "../messaging/labels/sync";
import { applyLimitsEvent } from "../messaging/limits/store";
import { applyPollVote } from "../messaging/messages/polls";
import {
  findMessage,
  hasMedia,
  markDeleted,
  markEdited,
  refOf,
  setStatus,
  upsertMessage,
} from "../messaging/messages/store";
import { toMessageResource } from "../messaging/messages/view";

/**
 * What the SessionDO does with each network event from the bridge. The stored change and its outbox
 * entry are written synchronously (one transaction, before the event is acked). Anything that needs
 * the network again (read receipts, rejecting a call, a bot reply) is returned as a follow-up, which
 * the object runs after the ack so the bridge's event stream never waits on a round trip.
 */
export type FollowUp = () => Promise<void>;

export async function applyNetworkEvent(ctx: SessionContext, event: NetworkEvent): Promise<FollowUp[]> {
  switch (event.kind) {
    case "message":
      return onMessage(ctx, event.message, event.live);
    case "message.status":
      if (setStatus(ctx.sql, event.chat, event.id, event.status)) {
        const reason = event.reason ? { reason: event.reason } : {};
        ctx.emit("message.status", {
          keyId: event.id,
          remoteJid: event.chat,
          status: event.status,
          ...reason,
        });
      }
      return [];
    case "message.edited": {
      const before = findMessage(ctx.sql, event.chat, event.id);
      const unchanged = before?.body === event.text && before.edited_at !== null;
      if (!unchanged && markEdited(ctx.sql, event.chat, event.id, event.text, ctx.now())) {
        ctx.emit("message.edited", {
          keyId: event.id,
          remoteJid: event.chat,
          fromMe: event.fromMe,
          newContent: event.text,
        });
      }
      return [];
    }
    case "message.deleted": {
      const { settings } = await ctx.config();
      if (markDeleted(ctx.sql, event.chat, event.id, ctx.now(), settings.antiDelete)) {
        ctx.emit("message.deleted", { keyId: event.id, remoteJid: event.chat, fromMe: event.fromMe });
      }
      return [];
    }
    case "poll.vote": {
      const { vote } = event;
      const poll = applyPollVote(ctx.sql, vote);
      if (poll) {
        ctx.emit("poll.vote", {
          keyId: vote.id,
          pollId: vote.pollId,
          remoteJid: poll.chat,
          voter: vote.voter,
          voterPhone: vote.voterPhone,
          selectedOptions: vote.selectedOptions,
          // Epoch milliseconds, as the vote carries it.
          timestamp: vote.timestamp,
        });
      }
      return [];
    }
    case "contacts":
      applyContactsEvent(ctx, event);
      return [];
    case "groups":
      applyGroupsEvent(ctx, event);
      return [];
    case "group.participants":
      applyParticipantsEvent(ctx, event);
      return [];
    case "account.limits":
      applyLimitsEvent(ctx, event.limits);
      return [];
    case "call":
      return onCall(ctx, event);
    case "presence":
      ctx.emit("presence.update", {
        chat: event.chat,
        participant: event.participant,
        presence: event.presence,
        lastSeen: event.lastSeen ?? null,
      });
      return [];
    case "chat.update":
      applyChatUpdate(ctx, event);
      return [];
    case "message.starred":
      applyStarred(ctx, event);
      return [];
    case "label.edit":
      applyLabelEdit(ctx, event);
      return [];
    case "label.association":
      applyLabelAssociation(ctx, event);
      return [];
  }
}

/**
 * A call offer is announced (`call.received`) and, with `rejectCalls`, declined. The rejection goes to
 * the JID the call came from (`caller`: a LID for a caller known by LID), which is what WhatsApp matches
 * it against; `from` (the number, preferred) is what the webhook shows.
 */
async function onCall(
  ctx: SessionContext,
  event: Extract<NetworkEvent, { kind: "call" }>,
): Promise<FollowUp[]> {
  if (event.status !== "offer") return [];
  const { settings } = await ctx.config();
  const phone = PERSON_JID.test(event.from) ? event.from.split("@")[0] : null;
  ctx.emit("call.received", {
    callId: event.id,
    from: event.from,
    callerPhone: phone ?? null,
    isVideo: event.isVideo,
    isGroup: event.isGroup ?? false,
    timestamp: event.timestamp ?? ctx.now(),
    rejected: settings.rejectCalls,
  });
  if (!settings.rejectCalls) return [];
  return [
    async () => {
      await ctx.wa({ op: "call.reject", id: event.id, from: event.caller ?? event.from });
    },
  ];
}

async function onMessage(ctx: SessionContext, message: WireMessage, live: boolean): Promise<FollowUp[]> {
  const { settings, slug } = await ctx.config();
  // Signed before the write, so the write and its event stay one step with nothing awaited between.
  const link = live && hasMedia(message.content) ? await webhookMediaLink(ctx, message.id) : null;
  const { inserted, statusMoved, row } = upsertMessage(ctx.sql, message, live);
  if (statusMoved && message.status) {
    ctx.emit("message.status", { keyId: message.id, remoteJid: message.chat, status: message.status });
  }
  if (!inserted) return [];
  const resource = toMessageResource(row, slug);
  if (link && resource.mediaUrl) resource.signedMediaUrl = link;
  if (message.chat === STATUS_JID) ctx.emit("status.update", resource);
  else if (live) ctx.emit(message.fromMe ? "message.sent" : "message.received", resource);
  learnPushName(ctx, message);
  if (!live || message.chat === STATUS_JID) return [];
  const followUps: FollowUp[] = [];
  if (settings.readReceipts && !message.fromMe) {
    followUps.push(async () => {
      await ctx.wa({ op: "read", chat: message.chat, targets: [refOf(row)] });
    });
  }
  followUps.push(() => reactToLiveMessage(ctx, resource));
  return followUps;
}

/** A person's push name arrives with each message they send: it updates the contact (and says so once). */
function learnPushName(ctx: SessionContext, message: WireMessage): void {
  if (message.fromMe || !message.pushName || !PERSON_JID.test(message.sender)) return;
  applyContactsEvent(ctx, {
    kind: "contacts",
    contacts: [{ jid: message.sender, notify: message.pushName }],
  });
}

/** The signed link a message's webhook carries to its media (null without SECRETS_MASTER_KEY). */
async function webhookMediaLink(ctx: SessionContext, messageId: string): Promise<string | null> {
  const link = await signMediaLink(ctx.env, ctx.sessionId, messageId, WEBHOOK_LINK_SECONDS, ctx.now());
  return link?.url ?? null;
}
