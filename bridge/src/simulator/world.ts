/**
 * The simulated WhatsApp's shared state: one world per `simulatorNetwork()` (so one per bridge
 * process), holding every simulated account (by session), every group, and what each account did.
 * Accounts that are all simulated here also reach each other: a message to another session's number,
 * or to a group it is in, arrives there as a live `message` event.
 *
 * Everything is bounded: the logs kept for assertions (reads, presences, …) keep their newest entries.
 */
import { randomBytes, randomInt } from "node:crypto";
import type { Me } from "../protocol/link.ts";
import type { Content, GroupInfo, NetworkEvent, WireMessage } from "../protocol/messaging.ts";
import { isGroupJid } from "../protocol/operation-rules.ts";
import { type MediaBytes, OperationError } from "../protocol/seam.ts";

/** Entries kept per log, and media files kept per account (oldest dropped first). */
const LOG_LIMIT = 1000;
/** Deliveries remembered per account: enough for the dedup of a large broadcast and its retries. */
const INBOX_LIMIT = 10_000;
const MEDIA_LIMIT = 200;
/** Events held for an account whose socket is closed, as WhatsApp holds offline messages. */
const PENDING_LIMIT = 500;

export type AdminRole = "admin" | "superadmin" | null;

/** A message this account delivered to another chat, as `sim` `inbox` reports it. */
export type InboxEntry = {
  chat: string;
  id: string;
  /** When it was first delivered (epoch ms). */
  timestamp: number;
  content: Content;
  quotedId?: string;
  mentions?: string[];
  deleted?: boolean;
  editedText?: string;
  reactions?: string[];
};

export type SimContact = {
  name?: string;
  notify?: string;
  picture: boolean;
};

export interface SimAccount {
  readonly sessionId: string;
  me: Me | null;
  /** Emits to the account's open socket; null while it has none. */
  emit: ((event: NetworkEvent) => void) | null;
  pending: NetworkEvent[];
  inbox: InboxEntry[];
  inboxIndex: Map<string, InboxEntry>;
  blocked: Set<string>;
  reads: Array<{ chat: string; ids: string[] }>;
  chatModifications: Array<{ chat: string; action: string; muteUntil?: number }>;
  presences: Array<{ chat: string; presence: string }>;
  /** Each `availability` asked for (the session's alwaysOnline): true online, false not. */
  availability: boolean[];
  stars: Array<{ chat: string; id: string; star: boolean }>;
  reactions: Array<{ chat: string; id: string; emoji: string }>;
  deletions: Array<{ chat: string; id: string }>;
  edits: Array<{ chat: string; id: string; text: string }>;
  profile: { name: string | null; status: string | null; picture: boolean };
  rejectedCalls: string[];
  numberChecks: number;
  /** Bytes of media sent or received, by `chat\nid`, for `media.download`. */
  media: Map<string, MediaBytes>;
  contacts: Map<string, SimContact>;
}

export interface SimGroup {
  jid: string;
  subject: string;
  description: string | null;
  owner: string;
  /** Epoch seconds. */
  creation: number;
  announce: boolean;
  restrict: boolean;
  ephemeral: number;
  isCommunity: boolean;
  linkedParentJid: string | null;
  participants: Map<string, AdminRole>;
  inviteCode: string;
  picture: boolean;
}

export function randomDigits(count: number): string {
  let digits = "";
  for (let i = 0; i < count; i++) digits += String(randomInt(10));
  return digits;
}

/** WhatsApp-looking message ids (`3EB0` + hex), unique enough for a test run. */
export function newMessageId(): string {
  return `3EB0${randomBytes(8).toString("hex").toUpperCase()}`;
}

export function newInviteCode(): string {
  return randomBytes(16)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "")
    .slice(0, 22);
}

export function pushBounded<T>(list: T[], entry: T, limit = LOG_LIMIT): void {
  list.push(entry);
  if (list.length > limit) list.splice(0, list.length - limit);
}

export const mediaKey = (chat: string, id: string) => `${chat}\n${id}`;

export const pictureUrl = (jid: string) => `https://sim.invalid/pp/${jid}.jpg`;

function newAccount(sessionId: string): SimAccount {
  return {
    sessionId,
    me: null,
    emit: null,
    pending: [],
    inbox: [],
    inboxIndex: new Map(),
    blocked: new Set(),
    reads: [],
    chatModifications: [],
    presences: [],
    availability: [],
    stars: [],
    reactions: [],
    deletions: [],
    edits: [],
    profile: { name: null, status: null, picture: false },
    rejectedCalls: [],
    numberChecks: 0,
    media: new Map(),
    contacts: new Map(),
  };
}

export class SimWorld {
  private readonly accounts = new Map<string, SimAccount>();
  private readonly byJid = new Map<string, SimAccount>();
  readonly groups = new Map<string, SimGroup>();
  readonly invites = new Map<string, string>();

  account(sessionId: string): SimAccount {
    let account = this.accounts.get(sessionId);
    if (!account) {
      account = newAccount(sessionId);
      this.accounts.set(sessionId, account);
    }
    return account;
  }

  accountByJid(jid: string): SimAccount | undefined {
    return this.byJid.get(jid);
  }

  /** A socket of `sessionId` is open as `me`: events reach it now, held ones first. */
  attach(sessionId: string, me: Me, emit: (event: NetworkEvent) => void): SimAccount {
    const account = this.account(sessionId);
    if (account.me && account.me.id !== me.id) this.byJid.delete(account.me.id);
    account.me = me;
    this.byJid.set(me.id, account);
    account.emit = emit;
    const held = account.pending;
    account.pending = [];
    for (const event of held) emit(event);
    return account;
  }

  detach(sessionId: string, emit: (event: NetworkEvent) => void): void {
    const account = this.accounts.get(sessionId);
    if (account?.emit === emit) account.emit = null;
  }

  emitTo(account: SimAccount, event: NetworkEvent): void {
    if (account.emit) account.emit(event);
    else pushBounded(account.pending, event, PENDING_LIMIT);
  }

  storeMedia(account: SimAccount, chat: string, id: string, media: MediaBytes): void {
    const key = mediaKey(chat, id);
    account.media.delete(key);
    account.media.set(key, media);
    if (account.media.size > MEDIA_LIMIT) {
      const oldest = account.media.keys().next();
      if (!oldest.done) account.media.delete(oldest.value);
    }
  }

  // ── Groups ────────────────────────────────────────────────────────────────────────────────

  groupsOf(jid: string): SimGroup[] {
    return [...this.groups.values()].filter((group) => group.participants.has(jid));
  }

  /** The group `jid` as `me` sees it: 404 unless it exists and `me` is in it. */
  memberGroup(me: string, jid: string): SimGroup {
    const group = this.groups.get(jid);
    if (!group?.participants.has(me)) throw new OperationError(404, "group not found");
    return group;
  }

  requireAdmin(group: SimGroup, me: string): void {
    if (!group.participants.get(me)) throw new OperationError(403, "Bot must be admin");
  }

  groupInfo(group: SimGroup): GroupInfo {
    return {
      jid: group.jid,
      subject: group.subject,
      description: group.description,
      owner: group.owner,
      creation: group.creation,
      announce: group.announce,
      restrict: group.restrict,
      ephemeral: group.ephemeral,
      isCommunity: group.isCommunity,
      linkedParentJid: group.linkedParentJid,
      participants: [...group.participants].map(([id, admin]) => ({ id, admin })),
    };
  }

  /** Tells every simulated account in the group (and those in `also`, e.g. just removed) about it. */
  notifyGroup(group: SimGroup, event: NetworkEvent, also: string[] = []): void {
    for (const jid of new Set([...group.participants.keys(), ...also])) {
      const account = this.byJid.get(jid);
      if (account) this.emitTo(account, event);
    }
  }

  // ── Messages between accounts ─────────────────────────────────────────────────────────────

  /** Simulated accounts that receive what `from` writes in `chat`, and the chat as each sees it. */
  recipients(from: SimAccount, chat: string): Array<{ account: SimAccount; chat: string }> {
    const me = from.me?.id;
    if (!me) return [];
    if (isGroupJid(chat)) {
      const group = this.groups.get(chat);
      if (!group) return [];
      return [...group.participants.keys()]
        .filter((jid) => jid !== me)
        .flatMap((jid) => {
          const account = this.byJid.get(jid);
          return account && !account.blocked.has(me) ? [{ account, chat }] : [];
        });
    }
    const account = this.byJid.get(chat);
    return account && account !== from && !account.blocked.has(me) ? [{ account, chat: me }] : [];
  }

  /**
   * Delivers `message` (written by `from`) to its chat, once: WhatsApp's receivers drop a stanza whose
   * id they already have, which is what makes a retried send safe. Returns the message as first
   * delivered, so a retry answers exactly what the first attempt did.
   */
  deliver(from: SimAccount, message: WireMessage, media: MediaBytes | null): WireMessage {
    const key = mediaKey(message.chat, message.id);
    const earlier = from.inboxIndex.get(key);
    if (earlier) return { ...message, timestamp: earlier.timestamp, content: earlier.content };
    const entry: InboxEntry = {
      chat: message.chat,
      id: message.id,
      timestamp: message.timestamp,
      content: message.content,
    };
    if (message.quotedId) entry.quotedId = message.quotedId;
    const mentions = "mentions" in message.content ? message.content.mentions : undefined;
    if (mentions?.length) entry.mentions = mentions;
    from.inboxIndex.set(key, entry);
    from.inbox.push(entry);
    if (from.inbox.length > INBOX_LIMIT) {
      const dropped = from.inbox.shift();
      if (dropped) from.inboxIndex.delete(mediaKey(dropped.chat, dropped.id));
    }
    if (media) this.storeMedia(from, message.chat, message.id, media);
    for (const { account, chat } of this.recipients(from, message.chat)) {
      if (media) this.storeMedia(account, chat, message.id, media);
      const { status: _status, ...received } = message;
      const pushName = from.profile.name ?? from.me?.name;
      this.emitTo(account, {
        kind: "message",
        message: { ...received, chat, fromMe: false, ...(pushName ? { pushName } : {}) },
        live: true,
      });
    }
    return message;
  }

  /** Sends a protocol event (edit, delete) about `from`'s message in `chat` to its recipients. */
  relay(from: SimAccount, chat: string, event: (chatAsSeen: string) => NetworkEvent): void {
    for (const recipient of this.recipients(from, chat))
      this.emitTo(recipient.account, event(recipient.chat));
  }
}
