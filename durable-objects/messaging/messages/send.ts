import { allowedHostsOf, urlTargetProblem } from "../../../bridge/src/protocol/address-guard";
import {
  type OutgoingContent,
  STATUS_JID,
  type WireMessage,
  WireMessageSchema,
} from "../../../bridge/src/protocol/messaging";
import { limitKindOf, mediaLimits } from "../../../workers/media/limits";
import { failure, type Outcome, type SessionContext, type Transfer } from "../context";
import { newChatRefusal } from "../limits/store";
import { deleteUpload } from "../media/store";
import { paceSend } from "./pacing";
import { findMessage, findMessageById, type MessageRow, refOf, upsertMessage } from "./store";
import { type MessageResource, newMessageId, toMessageResource } from "./view";

/**
 * The one way a message leaves this session, whoever asks (API, broadcast, scheduler, bot): the
 * bridge performs the send, then the message is stored and handed to the outbox exactly once.
 */
export interface SendRequest {
  to: string;
  content: OutgoingContent;
  /** A message in the same chat to quote. */
  quotedId?: string;
  /** Chosen by the caller when a retry must be the same message (broadcast, scheduler). */
  messageId?: string;
  /** Status posts only. */
  statusJidList?: string[];
  backgroundColor?: string;
  font?: number;
}

export async function sendMessage(
  ctx: SessionContext,
  request: SendRequest,
): Promise<Outcome<MessageResource>> {
  const refused = mediaUrlProblem(ctx, request.content);
  if (refused) return failure(400, `media url: ${refused}`);
  const limited = newChatRefusal(ctx.sql, request.to, ctx.now());
  if (limited) return failure(403, limited);
  const quoted = request.quotedId ? findMessage(ctx.sql, request.to, request.quotedId) : null;
  if (request.quotedId && !quoted) return failure(404, "Quoted message not found in this chat");
  // A retry of a send that reached WhatsApp (the bridge reported it, its answer was lost): that message.
  const already = request.messageId ? alreadySent(ctx.sql, request.messageId) : null;
  if (already) return { ok: true, data: toMessageResource(already, (await ctx.config()).slug) };
  const paced = await paceSend(ctx, request.to);
  if (!paced.ok) return paced;
  let result: Awaited<ReturnType<SessionContext["wa"]>>;
  try {
    result = await ctx.wa(
      {
        op: "send",
        to: request.to,
        messageId: request.messageId ?? newMessageId(),
        content: request.content,
        ...(quoted ? { quoted: refOf(quoted) } : {}),
        ...(request.statusJidList ? { statusJidList: request.statusJidList } : {}),
        ...(request.backgroundColor ? { backgroundColor: request.backgroundColor } : {}),
        ...(request.font !== undefined ? { font: request.font } : {}),
        ...maxBytesOf(ctx, request.content),
      },
      transferOf(ctx, request.content),
    );
  } finally {
    paced.data();
  }
  if (!result.ok) return result;
  const upload = uploadRefOf(request.content);
  if (upload) await deleteUpload(ctx, upload);
  return recordSent(ctx, result.data);
}

/** This account's own message with `id`, if one was sent (ids are unique per sender). */
function alreadySent(sql: SqlStorage, id: string): MessageRow | null {
  const row = findMessageById(sql, id);
  return row?.from_me === 1 ? row : null;
}

/** Stores what the bridge says it sent; an answer outside the protocol is a 500, never stored. */
export async function recordSent(ctx: SessionContext, answer: unknown): Promise<Outcome<MessageResource>> {
  const parsed = WireMessageSchema.safeParse(answer);
  if (!parsed.success) return failure(500, "The bridge answered with a message outside the protocol");
  return { ok: true, data: await storeOwnMessage(ctx, parsed.data) };
}

export async function storeOwnMessage(ctx: SessionContext, message: WireMessage): Promise<MessageResource> {
  const { slug } = await ctx.config();
  const { inserted, row } = upsertMessage(ctx.sql, message, false);
  const resource = toMessageResource(row, slug);
  if (inserted) ctx.emit(message.chat === STATUS_JID ? "status.update" : "message.sent", resource);
  return resource;
}

/**
 * The edge's part of the SSRF guard for media by URL: what the URL's text shows (private literals,
 * internal names) is refused here, before the bridge is asked; the bridge checks DNS answers too.
 */
function mediaUrlProblem(ctx: SessionContext, content: OutgoingContent): string | null {
  if (!("media" in content) || !("url" in content.media)) return null;
  return urlTargetProblem(content.media.url, allowedHostsOf(ctx.env.WEBHOOK_ALLOWED_HOSTS));
}

function uploadRefOf(content: OutgoingContent): string | null {
  if (!("media" in content)) return null;
  return "upload" in content.media ? content.media.upload : null;
}

/** The edge's limit for the media this content carries, for the bridge to hold a URL's file to. */
function maxBytesOf(ctx: SessionContext, content: OutgoingContent): { maxBytes?: number } {
  const kind = limitKindOf(content.type);
  return kind ? { maxBytes: mediaLimits(ctx.env.MEDIA_LIMITS_MB)[kind] } : {};
}

/**
 * What the send moves, for the bridge's time to answer: an upload's stored size, or at most the kind's
 * limit for media the bridge fetches by URL. Nothing for a message without media.
 */
function transferOf(ctx: SessionContext, content: OutgoingContent): Transfer | undefined {
  const upload = uploadRefOf(content);
  if (upload) {
    const row = ctx.sql.exec<{ size: number }>("SELECT size FROM media WHERE ref = ?", upload).toArray()[0];
    if (row) return { bytes: row.size };
  }
  const limit = maxBytesOf(ctx, content).maxBytes;
  return limit === undefined ? undefined : { bytes: limit };
}
