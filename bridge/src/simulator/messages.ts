/**
 * The simulated WhatsApp's message and account operations: sending (delivered once per id), forwarding,
 * reactions, edits and deletes (relayed to the recipient), stars, reads, chat settings, presence,
 * media download, calls, the number check, blocking and the profile. What real WhatsApp would only
 * show on other phones is recorded in the account's state for `sim` `state` / `inbox`.
 */
import { createHash } from "node:crypto";
import type { Content, MediaInfo, MessageRef, OutgoingContent, WireMessage } from "../protocol/messaging.ts";
import {
  assertDeletable,
  assertEditable,
  assertSendable,
  type GroupOperation,
  isGroupJid,
} from "../protocol/operation-rules.ts";
import type { Operation } from "../protocol/operations.ts";
import { type MediaBytes, OperationError, type PerformResult } from "../protocol/seam.ts";
import { mediaKey, newMessageId, pictureUrl, pushBounded, type SimAccount, type SimWorld } from "./world.ts";

type Op<N extends Operation["op"]> = Extract<Operation, { op: N }>;

export interface SimContext {
  world: SimWorld;
  account: SimAccount;
  /** The account's own JID. */
  me: string;
}

export function mediaInfo(media: MediaBytes, fileName?: string): MediaInfo {
  const name = fileName ?? media.fileName;
  return {
    mimetype: media.mimetype,
    size: media.bytes.byteLength,
    sha256: createHash("sha256").update(media.bytes).digest("hex"),
    ...(name ? { fileName: name } : {}),
  };
}

/** What was sent, as the network describes it: media sources become facts about the bytes. */
function sentContent(content: OutgoingContent, media: MediaBytes | null): Content {
  if (!("media" in content)) return content;
  if (!media) throw new OperationError(400, "media missing for a media message");
  switch (content.type) {
    case "document":
      return { ...content, media: mediaInfo(media, content.fileName) };
    case "image":
    case "video":
    case "audio":
    case "sticker":
      return { ...content, media: mediaInfo(media) };
  }
}

function assertMayWrite({ world, me }: SimContext, chat: string): void {
  if (!isGroupJid(chat)) return;
  const group = world.memberGroup(me, chat);
  if (group.announce && !group.participants.get(me)) {
    throw new OperationError(403, "only admins can send messages to this group");
  }
}

function send(context: SimContext, op: Op<"send">, media: MediaBytes | null): PerformResult {
  assertSendable(op.content);
  assertMayWrite(context, op.to);
  const message: WireMessage = {
    id: op.messageId,
    chat: op.to,
    sender: context.me,
    fromMe: true,
    timestamp: Date.now(),
    content: sentContent(op.content, media),
    status: "SENT",
    ...(op.quoted ? { quotedId: op.quoted.id } : {}),
  };
  return { data: context.world.deliver(context.account, message, media) };
}

function forward(context: SimContext, op: Op<"forward">): PerformResult {
  assertMayWrite(context, op.to);
  const { world, account, me } = context;
  if (op.message.content.type === "reaction" || op.message.content.type === "unknown") {
    throw new OperationError(400, `a ${op.message.content.type} message cannot be forwarded`);
  }
  const media = account.media.get(mediaKey(op.message.chat, op.message.id)) ?? null;
  const message: WireMessage = {
    id: op.messageId,
    chat: op.to,
    sender: me,
    fromMe: true,
    timestamp: Date.now(),
    content: op.message.content,
    status: "SENT",
  };
  return { data: world.deliver(account, message, media) };
}

function inboxEntry({ account }: SimContext, target: MessageRef) {
  return target.fromMe ? account.inboxIndex.get(mediaKey(target.chat, target.id)) : undefined;
}

function react(context: SimContext, op: Op<"react">): PerformResult {
  const { world, account, me } = context;
  const { chat, id } = op.target;
  if (isGroupJid(chat)) world.memberGroup(me, chat);
  pushBounded(account.reactions, { chat, id, emoji: op.emoji });
  const entry = inboxEntry(context, op.target);
  if (entry) entry.reactions = op.emoji ? [op.emoji] : [];
  const reaction: Content = { type: "reaction", emoji: op.emoji, targetId: id };
  world.relay(account, chat, (seen) => ({
    kind: "message",
    message: {
      id: newMessageId(),
      chat: seen,
      sender: me,
      fromMe: false,
      timestamp: Date.now(),
      content: reaction,
    },
    live: true,
  }));
  return {};
}

function remove(context: SimContext, op: Op<"delete">): PerformResult {
  const { world, account, me } = context;
  const { target } = op;
  assertDeletable(target, Date.now());
  if (!target.fromMe) world.requireAdmin(world.memberGroup(me, target.chat), me);
  pushBounded(account.deletions, { chat: target.chat, id: target.id });
  const entry = inboxEntry(context, target);
  if (entry) entry.deleted = true;
  world.relay(account, target.chat, (seen) => ({
    kind: "message.deleted",
    id: target.id,
    chat: seen,
    fromMe: false,
  }));
  return {};
}

function edit(context: SimContext, op: Op<"edit">): PerformResult {
  const { world, account } = context;
  assertEditable(op.target, Date.now());
  pushBounded(account.edits, { chat: op.target.chat, id: op.target.id, text: op.text });
  const entry = inboxEntry(context, op.target);
  if (entry) entry.editedText = op.text;
  world.relay(account, op.target.chat, (seen) => ({
    kind: "message.edited",
    id: op.target.id,
    chat: seen,
    fromMe: false,
    text: op.text,
  }));
  return {};
}

/** How the simulated download hands bytes over: in chunks, as a network stream would. */
const DOWNLOAD_CHUNK_BYTES = 1024 * 1024;

async function* chunksOf(bytes: Uint8Array): AsyncGenerator<Uint8Array, void, undefined> {
  for (let at = 0; at < bytes.byteLength; at += DOWNLOAD_CHUNK_BYTES)
    yield bytes.subarray(at, at + DOWNLOAD_CHUNK_BYTES);
}

/** The stored bytes as a stream: the bridge uploads them to the edge as it does real WhatsApp's. */
function download({ account }: SimContext, op: Op<"media.download">): PerformResult {
  const media = account.media.get(mediaKey(op.message.chat, op.message.id));
  if (!media) throw new OperationError(404, "media not found");
  const { mimetype, fileName } = media;
  return { download: { mimetype, ...(fileName ? { fileName } : {}), chunks: chunksOf(media.bytes) } };
}

/** `sim` control `numbers.check` says how often this ran: the edge must batch, never loop. */
function checkNumbers({ account }: SimContext, op: Op<"numbers.check">): PerformResult {
  account.numberChecks++;
  return {
    data: op.numbers.map((number) => {
      const exists = !number.startsWith("999");
      return { number, exists, jid: exists ? `${number}@s.whatsapp.net` : null };
    }),
  };
}

/** Whose picture a JID has, as far as this account can tell. */
function pictureOf({ world, account, me }: SimContext, jid: string): string | null {
  let has: boolean;
  if (jid === me) has = account.profile.picture;
  else if (isGroupJid(jid)) has = world.groups.get(jid)?.picture ?? false;
  else has = account.contacts.get(jid)?.picture ?? world.accountByJid(jid)?.profile.picture ?? false;
  return has ? pictureUrl(jid) : null;
}

function setPicture(context: SimContext, jid: string | undefined, picture: boolean): PerformResult {
  const { world, account, me } = context;
  if (!jid) {
    account.profile.picture = picture;
    return {};
  }
  const group = world.memberGroup(me, jid);
  world.requireAdmin(group, me);
  group.picture = picture;
  return {};
}

export function performMessaging(
  context: SimContext,
  op: Exclude<Operation, GroupOperation>,
  media: MediaBytes | null,
): PerformResult {
  const { account } = context;
  switch (op.op) {
    case "send":
      return send(context, op, media);
    case "forward":
      return forward(context, op);
    case "react":
      return react(context, op);
    case "delete":
      return remove(context, op);
    case "edit":
      return edit(context, op);
    case "star":
      pushBounded(account.stars, { chat: op.target.chat, id: op.target.id, star: op.star });
      return {};
    case "read":
      pushBounded(account.reads, { chat: op.chat, ids: op.targets.map((target) => target.id) });
      return {};
    case "chat.modify":
      pushBounded(account.chatModifications, {
        chat: op.chat,
        action: op.action,
        ...(op.muteUntil !== undefined ? { muteUntil: op.muteUntil } : {}),
      });
      return {};
    case "presence":
      pushBounded(account.presences, { chat: op.chat, presence: op.presence });
      return {};
    case "presence.subscribe":
      // Simulated contacts have no presence to report.
      return {};
    case "availability":
      pushBounded(account.availability, op.online);
      return {};
    case "profile.picture.url":
      return { data: { url: pictureOf(context, op.jid) } };
    case "numbers.check":
      return checkNumbers(context, op);
    case "contact.block":
      if (op.block) account.blocked.add(op.jid);
      else account.blocked.delete(op.jid);
      return {};
    case "profile.get":
      return {
        data: {
          name: account.profile.name ?? account.me?.name ?? null,
          status: account.profile.status,
          pictureUrl: pictureOf(context, context.me),
        },
      };
    case "profile.name":
      account.profile.name = op.name;
      return {};
    case "profile.status":
      account.profile.status = op.status;
      return {};
    case "picture.set":
      if (!media?.mimetype.startsWith("image/")) throw new OperationError(400, "a picture must be an image");
      return setPicture(context, op.jid, true);
    case "picture.remove":
      return setPicture(context, op.jid, false);
    case "media.download":
      return download(context, op);
    case "call.reject":
      pushBounded(account.rejectedCalls, op.id);
      return {};
    // The simulated network keeps no app state beyond what chat.modify and star record.
    case "label.edit":
    case "label.chat":
      return {};
  }
}
