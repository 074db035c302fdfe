/**
 * A fake contact: another WhatsApp user with its own Signal identity (libsignal, Baileys' Signal
 * dependency). It opens a session to a linked device from the pre-keys that device uploaded, and sends
 * it really encrypted messages (`pkmsg`, then `msg`).
 */
import { randomBytes, randomInt } from "node:crypto";
import { proto, writeRandomPadMax16 } from "@whiskeysockets/baileys";
import {
  ProtocolAddress,
  SessionBuilder,
  SessionCipher,
  type SessionRecord,
  type SignalStorage,
} from "libsignal";
import { generateKeyPair } from "libsignal/src/curve.js";
import { type FakeWhatsApp, type LinkedDevice, SERVER_JID } from "./server.ts";

interface LibsignalKeyPair {
  pubKey: Buffer;
  privKey: Buffer;
}

const keyPair = (): LibsignalKeyPair => {
  const { pubKey, privKey } = generateKeyPair();
  return { pubKey: Buffer.from(pubKey), privKey: Buffer.from(privKey) };
};
/** Baileys keeps 32-byte keys; libsignal wants the 33-byte form with the 0x05 type prefix. */
const withType = (key: Uint8Array): Buffer =>
  key.length === 33 ? Buffer.from(key) : Buffer.concat([Buffer.from([5]), key]);

export class FakeContact {
  readonly identity = keyPair();
  readonly registrationId = randomInt(1, 16380);
  /** The contact's LID user: messages come from `<lid>@lid`, with the phone number alongside. */
  readonly lidUser = String(randomInt(10 ** 13, 10 ** 14));
  /** Kept as live records: libsignal's `serialize()` returns an object, not the bytes its types claim. */
  private readonly sessions = new Map<string, SessionRecord>();
  private readonly storage: SignalStorage;

  constructor(
    private readonly server: FakeWhatsApp,
    readonly phoneNumber: string,
    readonly name = "Fake Contact",
  ) {
    const identity = this.identity;
    this.storage = {
      loadSession: async (id) => this.sessions.get(id),
      storeSession: async (id, record) => {
        this.sessions.set(id, record);
      },
      isTrustedIdentity: () => true,
      loadPreKey: async () => undefined,
      removePreKey: () => {},
      loadSignedPreKey: () => identity,
      getOurRegistrationId: () => this.registrationId,
      getOurIdentity: () => identity,
    };
  }

  get jid(): string {
    return `${this.phoneNumber}@${SERVER_JID}`;
  }

  get lid(): string {
    return `${this.lidUser}@lid`;
  }

  /**
   * Sends a text to a linked device, end-to-end encrypted; resolves with the message id and Signal type
   * (`pkmsg` until the device has answered on the session, as in Signal).
   */
  async sendText(device: LinkedDevice, text: string): Promise<{ id: string; type: string }> {
    return this.sendMessage(
      device,
      { conversation: text },
      { from: this.lid, sender_pn: this.jid, addressing_mode: "lid", type: "text", notify: this.name },
    );
  }

  /** Any message, encrypted for the device, in a `message` stanza with these attributes (`from`, …). */
  async sendMessage(
    device: LinkedDevice,
    message: proto.IMessage,
    attrs: Record<string, string>,
  ): Promise<{ id: string; type: string }> {
    const { type, body } = await this.encryptFor(device, proto.Message.encode(message).finish());
    const id = randomBytes(10).toString("hex").toUpperCase();
    this.server.deliver(device.jid, {
      tag: "message",
      attrs: { id, t: String(Math.floor(Date.now() / 1000)), ...attrs },
      content: [{ tag: "enc", attrs: { v: "2", type }, content: body }],
    });
    return { id, type };
  }

  /** First message: a session from the device's bundle, consuming one of its one-time pre-keys. */
  private async encryptFor(device: LinkedDevice, plaintext: Uint8Array) {
    const address = new ProtocolAddress(device.jid.split("@")[0] ?? device.jid, 0);
    if (!this.sessions.has(address.toString())) {
      const [preKeyId, preKey] = this.server.takePreKey(device);
      await new SessionBuilder(this.storage, address).initOutgoing({
        registrationId: device.registrationId,
        identityKey: withType(device.identityKey),
        signedPreKey: {
          keyId: device.signedPreKey.id,
          publicKey: withType(device.signedPreKey.publicKey),
          signature: device.signedPreKey.signature,
        },
        preKey: { keyId: preKeyId, publicKey: withType(preKey) },
      });
    }
    const { type, body } = await new SessionCipher(this.storage, address).encrypt(
      writeRandomPadMax16(plaintext),
    );
    return { type: type === 3 ? "pkmsg" : "msg", body: Buffer.from(body, "binary") };
  }
}
