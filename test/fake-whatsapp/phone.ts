/**
 * A fake phone: the primary device of an account. It "scans" a companion's QR and approves it the way
 * WhatsApp's phone app does: it signs the companion's identity with the account's identity key
 * (`ADVSignedDeviceIdentity`) and authenticates that with the QR's advSecret (the HMAC), then checks
 * the companion's counter-signature.
 */
import { randomInt } from "node:crypto";
import {
  type BinaryNode,
  Curve,
  getBinaryNodeChild,
  hmacSign,
  type KeyPair,
  proto,
  WA_ADV_ACCOUNT_SIG_PREFIX,
  WA_ADV_DEVICE_SIG_PREFIX,
} from "@whiskeysockets/baileys";
import { verifySignature } from "libsignal/src/curve.js";
import { PhoneAppState } from "./app-state-phone.ts";
import { FakeDevice } from "./device.ts";
import type { Account } from "./directory.ts";
import { typeCode } from "./link-code.ts";
import { type FakeWhatsApp, type LinkedDevice, SERVER_JID } from "./server.ts";

const QR_PREFIX = "https://wa.me/settings/linked_devices#";

/** What a companion's QR carries: `ref,noiseKey,identityKey,advSecret,platform` after the URL. */
export interface QrContent {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
  platform: string;
}

export function parseQr(qr: string): QrContent {
  const body = qr.startsWith(QR_PREFIX) ? qr.slice(QR_PREFIX.length) : qr;
  const [ref, noiseKey, identityKey, advSecret, platform] = body.split(",");
  if (!ref || !noiseKey || !identityKey || !advSecret) throw new Error(`not a WhatsApp pairing QR: ${qr}`);
  return {
    ref,
    noiseKey: Buffer.from(noiseKey, "base64"),
    identityKey: Buffer.from(identityKey, "base64"),
    advSecret: Buffer.from(advSecret, "base64"),
    platform: platform ?? "",
  };
}

/**
 * A real signature check. Baileys' `Curve.verify` (7.0.0-rc14) returns true for any 64-byte signature
 * because it ignores libsignal's boolean result, so the fake checks with libsignal directly.
 */
export function signatureValid(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  return verifySignature(Buffer.concat([Buffer.from([5]), publicKey]), message, signature);
}

export class FakePhone {
  readonly identity: KeyPair = Curve.generateKeyPair();
  /** The account's LID user (WhatsApp's privacy-preserving id), fixed per account. */
  readonly lidUser = String(randomInt(10 ** 13, 10 ** 14));
  /** The phone's own Signal device (device 0): a companion's sends to anyone fan out to it too. */
  readonly device: FakeDevice;
  readonly account: Account;
  /** The account's app-state keys and the phone's own changes (archive, pin, labels …). */
  readonly appState: PhoneAppState;
  private nextDeviceId = 1;
  private keyIndex = 0;

  constructor(
    private readonly server: FakeWhatsApp,
    readonly phoneNumber: string,
  ) {
    this.device = new FakeDevice(0, this.identity);
    this.account = { pnUser: phoneNumber, lidUser: this.lidUser, devices: new Map([[0, this.device]]) };
    server.messaging.directory.register(this.account);
    this.appState = new PhoneAppState(server, this);
  }

  get jid(): string {
    return `${this.phoneNumber}@${SERVER_JID}`;
  }

  /** Scans the QR and links the companion; resolves once the server has it as a linked device. */
  async scan(qr: string): Promise<LinkedDevice> {
    const content = parseQr(qr);
    const registration = this.server.registrationFor(content.ref);
    if (!registration) throw new Error(`the QR's ref is unknown or expired: ${content.ref}`);
    if (
      !registration.noiseKey.equals(content.noiseKey) ||
      !registration.identityKey.equals(content.identityKey)
    ) {
      throw new Error("the QR's keys are not the ones the companion registered with");
    }
    return this.approve(content.ref, content.identityKey, content.advSecret);
  }

  /**
   * Links the companion that asked for a pairing code for this number, as when the owner types `code`
   * under Linked devices → Link with phone number (link-code.ts). A wrong code throws and links nothing.
   */
  async enterCode(code: string): Promise<LinkedDevice> {
    const request = await this.server.linkCodes.waitForRequest(this.phoneNumber);
    if (!request) throw new Error(`no companion asked for a pairing code for ${this.phoneNumber}`);
    const { companionIdentity, advSecret } = await typeCode(
      this.server.linkCodes,
      request,
      code,
      this.identity,
    );
    const device = await this.approve(request.ref, companionIdentity, advSecret);
    this.server.linkCodes.forget(request);
    return device;
  }

  /**
   * Approves the companion waiting under `ref`: signs its identity with the account's key, authenticates
   * that with the pairing's advSecret and has the server send `pair-success`.
   */
  private async approve(ref: string, identityKey: Buffer, advSecret: Buffer): Promise<LinkedDevice> {
    const deviceId = this.nextDeviceId++;
    const keyIndex = ++this.keyIndex;
    const details = proto.ADVDeviceIdentity.encode({
      rawId: randomInt(2 ** 31),
      timestamp: Math.floor(Date.now() / 1000),
      keyIndex,
      accountType: proto.ADVEncryptionType.E2EE,
      deviceType: proto.ADVEncryptionType.E2EE,
    }).finish();
    const accountSignature = Curve.sign(
      this.identity.private,
      Buffer.concat([WA_ADV_ACCOUNT_SIG_PREFIX, details, identityKey]),
    );
    const signed = proto.ADVSignedDeviceIdentity.encode({
      details,
      accountSignatureKey: this.identity.public,
      accountSignature,
    }).finish();
    const deviceIdentity = proto.ADVSignedDeviceIdentityHMAC.encode({
      details: signed,
      hmac: hmacSign(signed, advSecret),
      accountType: proto.ADVEncryptionType.E2EE,
    }).finish();
    const jid = `${this.phoneNumber}:${deviceId}@${SERVER_JID}`;
    const reply = await this.server.completePairing(ref, {
      deviceIdentity,
      jid,
      lid: `${this.lidUser}:${deviceId}@lid`,
      platform: "android",
    });
    this.checkCompanionSignature(reply, details, identityKey);
    const device = this.server.devices.get(jid);
    if (!device) throw new Error("the server did not record the linked device");
    return device;
  }

  /** The companion must counter-sign its identity with its own identity key (`deviceSignature`). */
  private checkCompanionSignature(reply: BinaryNode, details: Uint8Array, companionIdentity: Buffer): void {
    const identityNode = getBinaryNodeChild(getBinaryNodeChild(reply, "pair-device-sign"), "device-identity");
    if (!(identityNode?.content instanceof Uint8Array)) throw new Error("pair-device-sign without identity");
    const account = proto.ADVSignedDeviceIdentity.decode(identityNode.content);
    if (!account.details || !Buffer.from(account.details).equals(Buffer.from(details))) {
      throw new Error("the companion signed different device details");
    }
    const message = Buffer.concat([
      WA_ADV_DEVICE_SIG_PREFIX,
      details,
      companionIdentity,
      this.identity.public,
    ]);
    if (!account.deviceSignature || !signatureValid(companionIdentity, message, account.deviceSignature)) {
      throw new Error("the companion's device signature does not verify");
    }
  }
}
