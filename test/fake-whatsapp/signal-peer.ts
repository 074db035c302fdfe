/**
 * One fake device's end of Signal: Baileys' own Signal repository (`makeSignalRepository`, libsignal
 * underneath) over in-memory keys, so the fake encrypts and decrypts exactly as a WhatsApp client does:
 * sessions from pre-key bundles (`pkmsg`, then `msg`), and sender keys for groups (`skmsg`).
 */

import {
  type AuthenticationCreds,
  addTransactionCapability,
  type BinaryNode,
  DEFAULT_CONNECTION_CONFIG,
  encodeBigEndian,
  encodeWAMessage,
  getNextPreKeys,
  initAuthCreds,
  type KeyPair,
  parseAndInjectE2ESessions,
  proto,
  signedKeyPair,
  unpadRandomMax16,
} from "@whiskeysockets/baileys";
import { pino } from "pino";
import { memoryKeyStore } from "./memory-keys.ts";

const logger = pino({ level: "silent" });

/** What a key fetch (`iq get encrypt` / `key`) hands out for one device. */
export interface PreKeyBundle {
  registrationId: number;
  /** 32-byte Curve25519 public keys, as WhatsApp sends them. */
  identityKey: Uint8Array;
  signedPreKey: { id: number; publicKey: Uint8Array; signature: Uint8Array };
  preKey?: { id: number; publicKey: Uint8Array };
}

/** The `user` node of a key-fetch reply, in the layout Baileys' `parseAndInjectE2ESessions` reads. */
export function bundleNode(jid: string, bundle: PreKeyBundle): BinaryNode {
  const key = (id: number, publicKey: Uint8Array, signature?: Uint8Array): BinaryNode[] => [
    { tag: "id", attrs: {}, content: encodeBigEndian(id, 3) },
    { tag: "value", attrs: {}, content: publicKey },
    ...(signature ? [{ tag: "signature", attrs: {}, content: signature }] : []),
  ];
  const { signedPreKey, preKey } = bundle;
  return {
    tag: "user",
    attrs: { jid },
    content: [
      { tag: "registration", attrs: {}, content: encodeBigEndian(bundle.registrationId, 4) },
      { tag: "type", attrs: {}, content: Buffer.from([5]) },
      { tag: "identity", attrs: {}, content: bundle.identityKey },
      {
        tag: "skey",
        attrs: {},
        content: key(signedPreKey.id, signedPreKey.publicKey, signedPreKey.signature),
      },
      ...(preKey ? [{ tag: "key", attrs: {}, content: key(preKey.id, preKey.publicKey) }] : []),
    ],
  };
}

export class SignalPeer {
  private readonly creds: AuthenticationCreds;
  private readonly keys = addTransactionCapability(memoryKeyStore(), logger, {
    maxCommitRetries: 1,
    delayBetweenTriesMs: 0,
  });
  private readonly repository;
  /** One-time pre-keys not handed out yet, by id. */
  private readonly unusedPreKeys = new Map<number, KeyPair>();

  /** `identity`: the account's identity key for a primary device (the phone signs with it too). */
  constructor(identity?: KeyPair) {
    const fresh = initAuthCreds();
    this.creds = identity
      ? { ...fresh, signedIdentityKey: identity, signedPreKey: signedKeyPair(identity, 1) }
      : fresh;
    this.repository = DEFAULT_CONNECTION_CONFIG.makeSignalRepository(
      { creds: this.creds, keys: this.keys },
      logger,
    );
  }

  get registrationId(): number {
    return this.creds.registrationId;
  }

  /** The next bundle a key fetch hands out; each one-time pre-key is handed out once, as on WhatsApp. */
  async bundle(): Promise<PreKeyBundle> {
    if (this.unusedPreKeys.size === 0) {
      const { update, preKeys } = await getNextPreKeys({ creds: this.creds, keys: this.keys }, 10);
      Object.assign(this.creds, update);
      for (const [id, pair] of Object.entries(preKeys)) this.unusedPreKeys.set(Number(id), pair);
    }
    const [id, pair] = this.unusedPreKeys.entries().next().value as [number, KeyPair];
    this.unusedPreKeys.delete(id);
    return { ...this.signedBundle(), preKey: { id, publicKey: pair.public } };
  }

  /** The long-lived part of a bundle (no one-time pre-key): what a retry receipt carries. */
  signedBundle(): PreKeyBundle {
    const { signedPreKey } = this.creds;
    return {
      registrationId: this.creds.registrationId,
      identityKey: this.creds.signedIdentityKey.public,
      signedPreKey: {
        id: signedPreKey.keyId,
        publicKey: signedPreKey.keyPair.public,
        signature: signedPreKey.signature,
      },
    };
  }

  hasSession(jid: string): Promise<boolean> {
    return this.repository.validateSession(jid).then((result) => result.exists);
  }

  /** Starts an outgoing session to `jid` from its bundle, as Baileys does after a key fetch. */
  async startSession(jid: string, bundle: PreKeyBundle): Promise<void> {
    const reply: BinaryNode = {
      tag: "iq",
      attrs: {},
      content: [{ tag: "list", attrs: {}, content: [bundleNode(jid, bundle)] }],
    };
    await parseAndInjectE2ESessions(reply, this.repository);
  }

  encrypt(jid: string, message: proto.IMessage) {
    return this.repository.encryptMessage({ jid, data: encodeWAMessage(message) });
  }

  async decrypt(jid: string, type: "pkmsg" | "msg", ciphertext: Uint8Array): Promise<proto.IMessage> {
    const padded = await this.repository.decryptMessage({ jid, type, ciphertext });
    return proto.Message.decode(unpadRandomMax16(padded));
  }

  /** A group message under this device's sender key, and the distribution message new members need. */
  encryptGroup(group: string, meId: string, message: proto.IMessage) {
    return this.repository.encryptGroupMessage({ group, meId, data: encodeWAMessage(message) });
  }

  acceptSenderKey(authorJid: string, item: proto.Message.ISenderKeyDistributionMessage): Promise<void> {
    return this.repository.processSenderKeyDistributionMessage({ authorJid, item });
  }

  async decryptGroup(group: string, authorJid: string, ciphertext: Uint8Array): Promise<proto.IMessage> {
    const padded = await this.repository.decryptGroupMessage({ group, authorJid, msg: ciphertext });
    return proto.Message.decode(unpadRandomMax16(padded));
  }
}
