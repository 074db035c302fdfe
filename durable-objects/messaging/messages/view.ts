import type { Content, MessageStatus } from "../../../bridge/src/protocol/messaging";
import { type PollTally, pollTally } from "./polls";
import { hasMedia, type MessageRow, type MessageType } from "./store";

/** A stored message as the API shows it (history, search, send responses, webhooks). */
export interface MessageResource {
  /** WhatsApp's message id: what react, reply, star, edit and delete take in their paths. */
  id: string;
  remoteJid: string;
  sender: string;
  fromMe: boolean;
  pushName: string | null;
  type: MessageType;
  /** The message's text: body, caption, poll question, location name or contact names. */
  content: string | null;
  /** The structured message (media described, never inlined). */
  message: Content;
  /** Where to download the media, or null when the message has none. */
  mediaUrl: string | null;
  /** In the message's own events only: a signed link to the media (workers/media/signed-url.ts). */
  signedMediaUrl?: string;
  status: MessageStatus | null;
  timestamp: string;
  quotedId: string | null;
  starred: boolean;
  reactions: Record<string, string>;
  editedAt: string | null;
  deletedAt: string | null;
  /** A poll's current votes: each option with who chose it; null for any other message. */
  poll: PollTally | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function toMessageResource(row: MessageRow, slug: string): MessageResource {
  const message = JSON.parse(row.content) as Content;
  return {
    id: row.id,
    remoteJid: row.chat,
    sender: row.sender,
    fromMe: row.from_me === 1,
    pushName: row.push_name,
    type: row.type,
    content: row.body,
    message,
    mediaUrl:
      hasMedia(message) && row.deleted_at === null
        ? `/api/messages/${encodeURIComponent(slug)}/download/${encodeURIComponent(row.id)}/media`
        : null,
    status: row.status,
    timestamp: new Date(row.timestamp).toISOString(),
    quotedId: row.quoted_id,
    starred: row.starred === 1,
    reactions: row.reactions ? (JSON.parse(row.reactions) as Record<string, string>) : {},
    editedAt: iso(row.edited_at),
    deletedAt: iso(row.deleted_at),
    poll: pollTally(row, message),
  };
}

/** A fresh WhatsApp-style message id (Baileys' own are `3EB0` + hex). */
export function newMessageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  return `3EB0${[...bytes]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .toUpperCase()}`;
}
