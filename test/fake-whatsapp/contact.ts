/**
 * A fake contact: another WhatsApp user with its own Signal identity (device.ts, on Baileys' Signal
 * repository). It opens sessions to a linked device from the pre-keys that device uploaded and sends it
 * really encrypted messages (`pkmsg` until the device has answered on the session, then `msg`), decrypts
 * what the device sends it, answers with receipts, and writes in groups under its sender key (`skmsg`).
 */
import { createHash, randomBytes, randomInt } from "node:crypto";
import type { Readable } from "node:stream";
import {
  type AnyMediaMessageContent,
  aesEncryptGCM,
  type BinaryNode,
  hmacSign,
  jidNormalizedUser,
  prepareWAMessageMedia,
  proto,
} from "@whiskeysockets/baileys";
import { type ChatStateSeen, FakeDevice, type Received } from "./device.ts";
import { type Account, type Companion, companionBundle, lidJid, pnJid } from "./directory.ts";
import type { GroupSetting, ParticipantAction, ParticipantResult } from "./group-registry.ts";
import type { FakeGroup } from "./messages.ts";
import { sendRetryReceipt } from "./retry.ts";
import type { FakeWhatsApp } from "./server.ts";

export interface ReceiptOptions {
  /** `read` for a read receipt; a delivery receipt has no type. */
  type?: "read";
  /** Which of the contact's addresses the receipt comes from (WhatsApp uses the LID more and more). */
  via?: "lid" | "pn";
}

const now = () => String(Math.floor(Date.now() / 1000));
const jidOf = (member: Account | string) => (typeof member === "string" ? member : pnJid(member));
const messageId = () => randomBytes(10).toString("hex").toUpperCase();
const enc = (type: string, content: Uint8Array): BinaryNode => ({
  tag: "enc",
  attrs: { v: "2", type },
  content,
});

export interface ContactOptions {
  /** Device numbers of the contact's own companions (WhatsApp Web, desktop), each its own identity. */
  linkedDevices?: number[];
  /**
   * Whether its one-to-one messages carry its phone number (`sender_pn`) beside its LID (default).
   * WhatsApp leaves the number out when the sender has not shared it with the account (someone who
   * found it in a group or through an ad): Baileys then knows the chat only as `<lid>@lid`. Its group
   * messages here still carry `participant_pn`.
   */
  sharesNumber?: boolean;
}

export class FakeContact {
  /** The contact's LID user: messages come from `<lid>@lid`, with the phone number alongside. */
  readonly lidUser = String(randomInt(10 ** 13, 10 ** 14));
  readonly device = new FakeDevice(0);
  readonly account: Account;
  /** Groups whose sender key this contact already gave a companion (`<group> <companion>`). */
  private readonly senderKeysGiven = new Set<string>();

  private readonly sharesNumber: boolean;

  /** A sender must encrypt to every one of the contact's devices (`options.linkedDevices`). */
  constructor(
    private readonly server: FakeWhatsApp,
    readonly phoneNumber: string,
    readonly name = "Fake Contact",
    options: ContactOptions = {},
  ) {
    this.sharesNumber = options.sharesNumber ?? true;
    const devices = new Map([
      [0, this.device],
      ...(options.linkedDevices ?? []).map((id) => [id, new FakeDevice(id)] as const),
    ]);
    this.account = { pnUser: phoneNumber, lidUser: this.lidUser, devices };
    server.messaging.directory.register(this.account);
    this.device.onUndecryptable = (id, sender) => this.askToResend(id, sender);
  }

  /** Message ids this contact already asked a companion to send again. */
  private readonly resendAsked = new Set<string>();

  /**
   * What a phone does with a message it cannot decrypt (a session the sender's device and this phone
   * no longer share, e.g. both opened one at once): it asks the sending device to send it again with a
   * retry receipt carrying its keys, once per message; Baileys answers with a fresh session.
   */
  private askToResend(id: string, sender: string): void {
    const device = this.server.devices.get(sender);
    if (!device || this.resendAsked.has(id)) return;
    this.resendAsked.add(id);
    sendRetryReceipt(this.server, device, this, id);
  }

  get jid(): string {
    return pnJid(this.account);
  }

  get lid(): string {
    return lidJid(this.account);
  }

  /** What the contact decrypted, in order. */
  get inbox(): Received[] {
    return this.device.inbox;
  }

  /** The chat states (typing…) its phone was shown, in order (chat-states.ts). */
  get chatStates(): ChatStateSeen[] {
    return this.device.chatStates;
  }

  /**
   * Sends a text to a linked device, end-to-end encrypted; resolves with the message id and Signal type
   * (`pkmsg` until the device has answered on the session, as in Signal).
   */
  sendText(companion: Companion, text: string): Promise<{ id: string; type: string }> {
    return this.send(companion, { conversation: text });
  }

  /**
   * An image, as WhatsApp clients send one: encrypted with a fresh media key by Baileys' own
   * `prepareWAMessageMedia`, the file put on the media host (`messaging.enableMedia()` first).
   */
  async sendImage(
    companion: Companion,
    image: Buffer,
    caption: string,
  ): Promise<{ id: string; type: string }> {
    return this.sendMedia(companion, { image, caption });
  }

  /**
   * Media as a phone sends it (Baileys' `prepareWAMessageMedia`: encrypted, uploaded to the media host,
   * the message carrying its direct path and keys): `{ video, caption }`, `{ audio, ptt, mimetype }`…
   */
  async sendMedia(
    companion: Companion,
    content: AnyMediaMessageContent,
  ): Promise<{ id: string; type: string }> {
    const media = this.server.messaging.media;
    if (!media) throw new Error("no media host: call messaging.enableMedia() first");
    const message = await prepareWAMessageMedia(content, {
      // Baileys encrypts to a temp file; the host takes that file as it is (never read into memory).
      upload: (encFilePath) => media.storeFile(encFilePath),
    });
    return this.send(companion, message, "media");
  }

  /**
   * A large document or video as a phone sends it, from a file on disk (`source` a path) or a generated
   * stream: Baileys streams it through the encryption to a temp file the host keeps, so neither the
   * plaintext nor the ciphertext is ever whole in this process's memory.
   */
  async sendLargeFile(
    companion: Companion,
    kind: "document" | "video",
    source: string | Readable,
    details: { mimetype: string; fileName?: string; caption?: string },
  ): Promise<{ id: string; type: string }> {
    const media = typeof source === "string" ? { url: source } : { stream: source };
    const { mimetype, fileName, caption } = details;
    const extra = { mimetype, ...(caption ? { caption } : {}) };
    return kind === "document"
      ? this.sendMedia(companion, { document: media, fileName: fileName ?? "file", ...extra })
      : // A preview given up front: Baileys would otherwise keep a second copy to make one with ffmpeg.
        this.sendMedia(companion, { video: media, jpegThumbnail: "", ...extra });
  }

  /**
   * A vote on a poll the companion's account sent this contact (`poll`: the creation as it arrived in
   * `inbox`, with its `messageSecret`), as a phone casts it: the chosen option names hashed
   * (`sha256`), encrypted with a key derived from the poll's secret, its id, the creator's and the
   * voter's JIDs (HMAC-SHA256, then AES-256-GCM with `pollId\0voter` as associated data): the inverse of
   * Baileys' `decryptPollVote`. The phone's own forms by default: creator = the account's LID, voter =
   * this contact's number (`jids` picks others). `[]` takes the vote back. Resolves with the vote's id.
   */
  async sendPollVote(
    companion: Companion,
    poll: Received,
    optionNames: string[],
    jids: { creator?: "lid" | "pn"; voter?: "lid" | "pn" } = {},
  ): Promise<{ id: string; type: string }> {
    const secret = poll.message.messageContextInfo?.messageSecret;
    if (!secret?.length) throw new Error(`poll ${poll.id} arrived without a messageSecret`);
    const creator = jidNormalizedUser(jids.creator === "pn" ? companion.jid : companion.lid);
    const voter = jids.voter === "lid" ? this.lid : this.jid;
    const plaintext = proto.Message.PollVoteMessage.encode({
      selectedOptions: optionNames.map((name) => createHash("sha256").update(name).digest()),
    }).finish();
    const iv = randomBytes(12);
    const signed = Buffer.concat([
      Buffer.from(poll.id),
      Buffer.from(creator),
      Buffer.from(voter),
      Buffer.from("Poll Vote"),
      Buffer.from([1]),
    ]);
    const key = hmacSign(signed, hmacSign(secret, new Uint8Array(32)));
    const encPayload = aesEncryptGCM(plaintext, key, iv, Buffer.from(`${poll.id}\0${voter}`));
    return this.send(companion, {
      pollUpdateMessage: {
        pollCreationMessageKey: { remoteJid: creator, fromMe: false, id: poll.id },
        vote: { encPayload, encIv: iv },
        senderTimestampMs: Date.now(),
      },
    });
  }

  /**
   * Any message to a linked device, one-to-one, from the contact's LID (with its number unless it
   * does not share it); `kind` is the stanza's type.
   */
  send(
    companion: Companion,
    message: proto.IMessage,
    kind: "text" | "media" = "text",
  ): Promise<{ id: string; type: string }> {
    return this.sendMessage(companion, message, {
      from: this.lid,
      ...(this.sharesNumber ? { sender_pn: this.jid } : {}),
      addressing_mode: "lid",
      type: kind,
      notify: this.name,
    });
  }

  /** Any message, encrypted for the device, in a `message` stanza with these attributes (`from`, …). */
  async sendMessage(
    companion: Companion,
    message: proto.IMessage,
    attrs: Record<string, string>,
  ): Promise<{ id: string; type: string }> {
    const { type, ciphertext } = await this.encryptFor(companion, message);
    const id = messageId();
    this.server.deliver(companion.jid, {
      tag: "message",
      attrs: { id, t: now(), ...attrs },
      content: [enc(type, ciphertext)],
    });
    return { id, type };
  }

  /** What the contact's device would put in a retry receipt (`keys`): its identity and signed pre-key. */
  retryKeys() {
    return this.device.peer.signedBundle();
  }

  /**
   * A text in a group, under this contact's sender key; each companion of the other members gets the
   * key first (a `pkmsg`/`msg` SenderKeyDistributionMessage in the same stanza), once, as WhatsApp does.
   */
  async sendGroupText(group: FakeGroup, text: string): Promise<{ id: string }> {
    const { ciphertext, senderKeyDistributionMessage } = await this.device.peer.encryptGroup(
      group.jid,
      this.lid,
      { conversation: text },
    );
    const id = messageId();
    const others = group.members.filter((member) => member !== this.account);
    for (const companion of others.flatMap((member) =>
      this.server.messaging.directory.companionsOf(member),
    )) {
      const encs: BinaryNode[] = [];
      const given = `${group.jid} ${companion.jid}`;
      if (!this.senderKeysGiven.has(given)) {
        const distribution = await this.encryptFor(companion, {
          senderKeyDistributionMessage: {
            groupId: group.jid,
            axolotlSenderKeyDistributionMessage: senderKeyDistributionMessage,
          },
        });
        encs.push(enc(distribution.type, distribution.ciphertext));
        this.senderKeysGiven.add(given);
      }
      encs.push(enc("skmsg", ciphertext));
      this.server.deliver(companion.jid, {
        tag: "message",
        attrs: {
          from: group.jid,
          participant: this.lid,
          participant_pn: this.jid,
          addressing_mode: "lid",
          id,
          type: "text",
          t: now(),
          notify: this.name,
        },
        content: encs,
      });
    }
    return { id };
  }

  /**
   * Group administration from this contact's phone, as its WhatsApp would ask the server: the change
   * is checked (an admin's, 403 otherwise), applied to the registry and announced to every member's
   * companions (`w:gp2`). Members are accounts or phone/LID JIDs.
   */
  createGroup(subject: string, members: Array<Account | string>): FakeGroup {
    return this.server.messaging.groups.create(this.account, subject, members.map(jidOf)).group;
  }

  changeGroupMembers(
    group: FakeGroup,
    action: ParticipantAction,
    members: Array<Account | string>,
  ): ParticipantResult[] {
    return this.server.messaging.groups.changeParticipants(this.account, group, action, members.map(jidOf));
  }

  addToGroup(group: FakeGroup, ...members: Array<Account | string>): ParticipantResult[] {
    return this.changeGroupMembers(group, "add", members);
  }

  removeFromGroup(group: FakeGroup, ...members: Array<Account | string>): ParticipantResult[] {
    return this.changeGroupMembers(group, "remove", members);
  }

  renameGroup(group: FakeGroup, subject: string): void {
    this.server.messaging.groups.setSubject(this.account, group, subject);
  }

  /** A new description (naming the current one as `prev`, as a phone does); `undefined` removes it. */
  describeGroup(group: FakeGroup, text: string | undefined): void {
    this.server.messaging.groups.setDescription(this.account, group, text, group.description?.id);
  }

  /** Disappearing messages in the group: seconds, 0 off. */
  setGroupTimer(group: FakeGroup, seconds: number): void {
    this.server.messaging.groups.setEphemeral(this.account, group, seconds);
  }

  setGroupSetting(group: FakeGroup, setting: GroupSetting): void {
    this.server.messaging.groups.setSetting(this.account, group, setting);
  }

  leaveGroup(group: FakeGroup): void {
    this.server.messaging.groups.leave(this.account, group);
  }

  /** A delivery (or read) receipt for a message this contact got, sent to the device that sent it. */
  sendReceipt(received: Received, options: ReceiptOptions = {}): void {
    const self = options.via === "pn" ? this.jid : this.lid;
    const inGroup = received.chat.endsWith("@g.us");
    this.server.deliver(received.sender, {
      tag: "receipt",
      attrs: {
        id: received.id,
        t: now(),
        ...(inGroup ? { from: received.chat, participant: self } : { from: self }),
        ...(options.type ? { type: options.type } : {}),
      },
    });
  }

  /** The first message: a session from the companion's bundle, consuming one of its one-time pre-keys. */
  private async encryptFor(companion: Companion, message: proto.IMessage) {
    const peer = this.device.peer;
    if (!(await peer.hasSession(companion.jid)))
      await peer.startSession(companion.jid, companionBundle(companion));
    return peer.encrypt(companion.jid, message);
  }
}
