/**
 * WhatsApp operations (operations.ts) on a Baileys socket. Imported only by whatsapp.ts (see the rule
 * in mapping.ts): the rest of the bridge reaches this through the seam's `perform`.
 */
import {
  downloadMediaMessage,
  jidNormalizedUser,
  type MiscMessageGenerationOptions,
  USyncQuery,
  USyncUser,
  type WAMessage,
  type WASocket,
} from "@whiskeysockets/baileys";
import type { Dispatcher } from "undici";
import { UNKNOWN_MIMETYPE } from "../protocol/mime.ts";
import {
  assertDeletable,
  assertEditable,
  type GroupOperation,
  isGroupOperation,
} from "../protocol/operation-rules.ts";
import type { Operation } from "../protocol/operations.ts";
import { OperationError, type PerformResult, type PreparedMedia } from "../protocol/seam.ts";
import { appStateChange } from "./app-state-patch.ts";
import { bytes, forwardable, keyOf, messageContent, messageOf } from "./content.ts";
import { fromJson, fullGroupInfo, operationError, participantJid, wireMessage } from "./mapping.ts";
import { answersByNumber, CONTACT_WITH_ECHO } from "./number-check.ts";

/** The part of a Baileys socket the operations use (tests pass a stand-in). */
export type BaileysSocket = Pick<
  WASocket,
  | "user"
  | "sendMessage"
  | "chatModify"
  | "readMessages"
  | "sendPresenceUpdate"
  | "presenceSubscribe"
  | "profilePictureUrl"
  | "executeUSyncQuery"
  | "updateBlockStatus"
  | "fetchStatus"
  | "updateProfileName"
  | "updateProfileStatus"
  | "updateProfilePicture"
  | "removeProfilePicture"
  | "groupCreate"
  | "groupMetadata"
  | "groupFetchAllParticipating"
  | "groupUpdateSubject"
  | "groupUpdateDescription"
  | "groupParticipantsUpdate"
  | "groupInviteCode"
  | "groupRevokeInvite"
  | "groupAcceptInvite"
  | "groupSettingUpdate"
  | "groupToggleEphemeral"
  | "groupLeave"
  | "updateMediaMessage"
  | "rejectCall"
  | "addLabel"
  | "addChatLabel"
  | "removeChatLabel"
  | "ws"
  | "authState"
>;

/** Baileys' logger type (its module does not export the name). */
export type BaileysLogger = NonNullable<Parameters<typeof downloadMediaMessage>[3]>["logger"];

type Op<N extends Operation["op"]> = Extract<Operation, { op: N }>;

const DEFAULT_MUTE_MS = 8 * 60 * 60 * 1000;

function meId(sock: BaileysSocket): string {
  const id = sock.user?.id;
  if (!id) throw new OperationError(503, "WhatsApp is not connected");
  return jidNormalizedUser(id);
}

/** A sent message as the edge stores it. sendMessage resolves once the stanza is on its way. */
function sent(message: WAMessage | undefined, sock: BaileysSocket): PerformResult {
  const wire = message ? wireMessage(message, meId(sock)) : null;
  if (!wire) throw new Error("WhatsApp did not return the sent message");
  return { data: { ...wire, status: "SENT" } };
}

async function send(
  sock: BaileysSocket,
  op: Op<"send">,
  media: PreparedMedia | null,
): Promise<PerformResult> {
  const options: MiscMessageGenerationOptions = {
    messageId: op.messageId,
    ...(op.quoted ? { quoted: messageOf(op.quoted) } : {}),
    ...(op.statusJidList ? { statusJidList: op.statusJidList } : {}),
    ...(op.backgroundColor ? { backgroundColor: op.backgroundColor } : {}),
    ...(op.font !== undefined ? { font: op.font } : {}),
  };
  return sent(await sock.sendMessage(op.to, messageContent(op.content, media), options), sock);
}

/**
 * Node's fetch takes any undici dispatcher; its `RequestInit` is typed from the undici-types copy bundled
 * with @types/node, the proxy's agent from undici itself: the same interface declared twice.
 */
export function fetchOptionsWith(dispatcher: Dispatcher): RequestInit {
  return { dispatcher } as unknown as RequestInit;
}

/**
 * A received message's media as Baileys decrypts it while it downloads: handed over as a stream, which
 * the caller uploads to the edge part by part (media/edge-upload.ts), so no file is ever whole in memory.
 */
async function downloadMedia(
  sock: BaileysSocket,
  op: Op<"media.download">,
  logger: BaileysLogger,
  dispatcher: Dispatcher | undefined,
): Promise<PerformResult> {
  if (op.message.raw === undefined || op.message.raw === null)
    throw new OperationError(404, "media not found");
  const message = fromJson(op.message.raw) as WAMessage;
  const stream = await downloadMediaMessage(
    message,
    "stream",
    dispatcher ? { options: fetchOptionsWith(dispatcher) } : {},
    { logger, reuploadRequest: sock.updateMediaMessage },
  );
  const content = op.message.content;
  const info = "media" in content ? content.media : {};
  const mimetype = ("mimetype" in content ? content.mimetype : info.mimetype) ?? UNKNOWN_MIMETYPE;
  const fileName = "fileName" in content ? content.fileName : info.fileName;
  return { download: { mimetype, ...(fileName ? { fileName } : {}), chunks: stream } };
}

async function chatModify(sock: BaileysSocket, op: Op<"chat.modify">): Promise<void> {
  switch (op.action) {
    case "archive":
    case "unarchive": {
      if (!op.lastMessage) throw new OperationError(400, "archiving needs lastMessage");
      const last = {
        key: keyOf(op.lastMessage),
        messageTimestamp: Math.floor(op.lastMessage.timestamp / 1000),
      };
      return sock.chatModify({ archive: op.action === "archive", lastMessages: [last] }, op.chat);
    }
    case "mute":
      return sock.chatModify({ mute: op.muteUntil ?? Date.now() + DEFAULT_MUTE_MS }, op.chat);
    case "unmute":
      return sock.chatModify({ mute: null }, op.chat);
    case "pin":
    case "unpin":
      return sock.chatModify({ pin: op.action === "pin" }, op.chat);
  }
}

/** Profile pictures that are hidden or absent are "no picture", not a failure. */
async function pictureUrl(sock: BaileysSocket, jid: string): Promise<string | null> {
  try {
    return (await sock.profilePictureUrl(jid, "image")) ?? null;
  } catch (error) {
    const mapped = operationError(error);
    if (mapped instanceof OperationError && (mapped.status === 404 || mapped.status === 403)) return null;
    throw mapped;
  }
}

async function profile(sock: BaileysSocket): Promise<PerformResult> {
  const me = meId(sock);
  const [statuses, url] = await Promise.all([
    sock.fetchStatus(me).catch(() => undefined),
    pictureUrl(sock, me),
  ]);
  const entry = statuses?.[0]?.status as { status?: unknown } | undefined;
  const status = typeof entry?.status === "string" ? entry.status : null;
  return { data: { name: sock.user?.name ?? sock.user?.notify ?? null, status, pictureUrl: url } };
}

async function checkNumbers(sock: BaileysSocket, numbers: string[]): Promise<PerformResult> {
  // ONE query for the whole batch. WhatsApp answers a number it normalises (Brazil's ninth digit,
  // Mexico's 1 after 52) under the account's own JID, so answers are matched by the number it echoes.
  const query = new USyncQuery();
  query.protocols.push(CONTACT_WITH_ECHO);
  for (const number of numbers) query.withUser(new USyncUser().withPhone(`+${number}`));
  const result = await sock.executeUSyncQuery(query);
  const byNumber = answersByNumber(result?.list ?? []);
  return {
    data: numbers.map((number) => {
      const jid = byNumber.get(number);
      return { number, exists: jid !== undefined, jid: jid ?? null };
    }),
  };
}

/**
 * Who a participant result is about, by phone number as asked: WhatsApp answers a LID-addressed group
 * by LID, with the number alongside (`phone_number`).
 */
function resultJid(result: {
  jid?: string | undefined;
  content?: { attrs: Record<string, string> };
}): string {
  return participantJid({ id: result.jid ?? "", phoneNumber: result.content?.attrs.phone_number });
}

function codeOf(code: string | undefined): string {
  if (!code) throw new Error("WhatsApp answered without an invite code");
  return code;
}

async function group(sock: BaileysSocket, op: GroupOperation): Promise<PerformResult> {
  switch (op.op) {
    case "group.create":
      return { data: fullGroupInfo(await sock.groupCreate(op.subject, op.participants)) };
    case "group.metadata":
      return { data: fullGroupInfo(await sock.groupMetadata(op.jid)) };
    case "group.list":
      return { data: Object.values(await sock.groupFetchAllParticipating()).map(fullGroupInfo) };
    case "group.subject":
      await sock.groupUpdateSubject(op.jid, op.subject);
      return {};
    case "group.description":
      await sock.groupUpdateDescription(op.jid, op.description || undefined);
      return {};
    case "group.participants": {
      const results = await sock.groupParticipantsUpdate(op.jid, op.participants, op.action);
      return { data: results.map((result) => ({ jid: resultJid(result), status: result.status })) };
    }
    case "group.invite":
      return { data: { code: codeOf(await sock.groupInviteCode(op.jid)) } };
    case "group.invite.revoke":
      return { data: { code: codeOf(await sock.groupRevokeInvite(op.jid)) } };
    case "group.invite.accept": {
      const jid = await sock.groupAcceptInvite(op.code);
      if (!jid) throw new OperationError(400, "invalid or expired invite code");
      return { data: { jid } };
    }
    case "group.setting":
      await sock.groupSettingUpdate(op.jid, op.setting);
      return {};
    case "group.ephemeral":
      await sock.groupToggleEphemeral(op.jid, op.expiration);
      return {};
    case "group.leave":
      await sock.groupLeave(op.jid);
      return {};
  }
}

async function run(
  sock: BaileysSocket,
  op: Operation,
  media: PreparedMedia | null,
  logger: BaileysLogger,
  dispatcher: Dispatcher | undefined,
): Promise<PerformResult> {
  if (isGroupOperation(op)) return group(sock, op);
  switch (op.op) {
    case "send":
      return send(sock, op, media);
    case "forward": {
      const original = forwardable(op.message);
      return sent(await sock.sendMessage(op.to, { forward: original }, { messageId: op.messageId }), sock);
    }
    case "react":
      await sock.sendMessage(op.target.chat, { react: { text: op.emoji, key: keyOf(op.target) } });
      return {};
    case "delete":
      assertDeletable(op.target, Date.now());
      await sock.sendMessage(op.target.chat, { delete: keyOf(op.target) });
      return {};
    case "edit":
      assertEditable(op.target, Date.now());
      await sock.sendMessage(op.target.chat, { text: op.text, edit: keyOf(op.target) });
      return {};
    case "star":
      await appStateChange(sock, () =>
        sock.chatModify(
          { star: { messages: [{ id: op.target.id, fromMe: op.target.fromMe }], star: op.star } },
          op.target.chat,
        ),
      );
      return {};
    case "read":
      await sock.readMessages(op.targets.map(keyOf));
      return {};
    case "chat.modify":
      await appStateChange(sock, () => chatModify(sock, op));
      return {};
    case "presence":
      await sock.sendPresenceUpdate(op.presence, op.chat);
      return {};
    case "presence.subscribe":
      await sock.presenceSubscribe(op.jid);
      return {};
    case "availability":
      // `<presence type="available|unavailable" name=…>`, what WhatsApp Web sends when it comes to
      // the foreground or leaves it (whatsapp.ts repeats it once the account's push name is known).
      await sock.sendPresenceUpdate(op.online ? "available" : "unavailable");
      return {};
    case "profile.picture.url":
      return { data: { url: await pictureUrl(sock, op.jid) } };
    case "numbers.check":
      return checkNumbers(sock, op.numbers);
    case "contact.block":
      await sock.updateBlockStatus(op.jid, op.block ? "block" : "unblock");
      return {};
    case "profile.get":
      return profile(sock);
    case "profile.name":
      // The push-name app-state setting (critical_block): refused like any other app-state change.
      await appStateChange(sock, () => sock.updateProfileName(op.name));
      return {};
    case "profile.status":
      await sock.updateProfileStatus(op.status);
      return {};
    case "picture.set":
      await sock.updateProfilePicture(op.jid ?? meId(sock), bytes(media));
      return {};
    case "picture.remove":
      await sock.removeProfilePicture(op.jid ?? meId(sock));
      return {};
    case "media.download":
      return downloadMedia(sock, op, logger, dispatcher);
    case "call.reject":
      await sock.rejectCall(op.id, op.from);
      return {};
    case "label.edit":
      // A label edit is not about a chat: Baileys' index is ["label_edit", id].
      await appStateChange(sock, () => sock.addLabel("", op.label));
      return {};
    case "label.chat":
      await appStateChange(sock, () =>
        op.labeled ? sock.addChatLabel(op.chat, op.labelId) : sock.removeChatLabel(op.chat, op.labelId),
      );
      return {};
  }
}

export async function performOperation(
  sock: BaileysSocket,
  op: Operation,
  media: PreparedMedia | null,
  logger: BaileysLogger,
  /** The session proxy's dispatcher for media downloads (global fetch), when it has one. */
  dispatcher?: Dispatcher,
): Promise<PerformResult> {
  try {
    return await run(sock, op, media, logger, dispatcher);
  } catch (error) {
    throw operationError(error);
  }
}
