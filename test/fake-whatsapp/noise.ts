/**
 * The server's half of WhatsApp's Noise_XX_25519_AESGCM_SHA256 handshake and transport, mirroring
 * Baileys' client half (`lib/Utils/noise-handler.js`) step for step, built from Baileys' own primitives.
 */
import {
  aesDecryptGCM,
  aesEncryptGCM,
  Curve,
  hkdf,
  type KeyPair,
  NOISE_MODE,
  NOISE_WA_HEADER,
  proto,
  sha256,
} from "@whiskeysockets/baileys";

const EMPTY = Buffer.alloc(0);

/** AES-GCM nonce: 12 bytes, the message counter big-endian in the last four. */
function nonce(counter: number): Buffer {
  const iv = Buffer.alloc(12);
  iv.writeUInt32BE(counter, 8);
  return iv;
}

/** After the handshake: one key per direction, each with its own counter. */
/** A big-endian unsigned integer of up to six bytes (registration ids, key ids on the wire). */
export const bigEndian = (bytes: Uint8Array | null | undefined): number =>
  bytes ? Buffer.from(bytes).readUIntBE(0, bytes.length) : 0;

export class Transport {
  private readCounter = 0;
  private writeCounter = 0;
  constructor(
    private readonly encKey: Buffer,
    private readonly decKey: Buffer,
  ) {}
  encrypt(plaintext: Uint8Array): Buffer {
    return aesEncryptGCM(plaintext, this.encKey, nonce(this.writeCounter++), EMPTY);
  }
  decrypt(ciphertext: Uint8Array): Buffer {
    return aesDecryptGCM(ciphertext, this.decKey, nonce(this.readCounter++), EMPTY);
  }
}

/**
 * Which certificate chain the server presents: `proper` (as WhatsApp's, but from the fake's own root),
 * or one a client must refuse: `intermediate-not-from-root` (the intermediate is signed by a stranger's
 * key, not the root), `leaf-not-from-intermediate` (the leaf is signed by a key other than the one the
 * intermediate certifies), `leaf-for-another-key` (a properly signed chain for a different server key:
 * what replaying a genuine chain with your own Noise key looks like).
 */
export type CertificateChainKind =
  | "proper"
  | "intermediate-not-from-root"
  | "leaf-not-from-intermediate"
  | "leaf-for-another-key";

/**
 * A certificate chain shaped like WhatsApp's: an intermediate signed by the root (issuer serial 0)
 * carrying the key that signs the leaf, whose key is the server's static Noise key.
 * Our root is our own: WhatsApp's root private key is not ours to have (see README: Baileys 7.0.0-rc14
 * accepts any root because its `Curve.verify` ignores the verification result; the bridge checks it).
 */
export function certificateChain(
  serverStatic: KeyPair,
  root: KeyPair = Curve.generateKeyPair(),
  kind: CertificateChainKind = "proper",
): Uint8Array {
  const now = Math.floor(Date.now() / 1000);
  const intermediateKey = Curve.generateKeyPair();
  const stranger = Curve.generateKeyPair();
  const intermediateDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 1,
    issuerSerial: 0,
    key: intermediateKey.public,
    notBefore: now - 3600,
    notAfter: now + 365 * 86400,
  }).finish();
  const leafDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: kind === "leaf-for-another-key" ? stranger.public : serverStatic.public,
    notBefore: now - 3600,
    notAfter: now + 30 * 86400,
  }).finish();
  const intermediateSigner = kind === "intermediate-not-from-root" ? stranger : root;
  const leafSigner = kind === "leaf-not-from-intermediate" ? stranger : intermediateKey;
  return proto.CertChain.encode({
    intermediate: {
      details: intermediateDetails,
      signature: Curve.sign(intermediateSigner.private, intermediateDetails),
    },
    leaf: { details: leafDetails, signature: Curve.sign(leafSigner.private, leafDetails) },
  }).finish();
}

export interface ClientFinish {
  /** The client's static Noise key: `creds.noiseKey.public`, the key a paired device is known by. */
  clientStatic: Buffer;
  payload: proto.ClientPayload;
}

/** The responder's handshake state: symmetric key, chaining key (salt) and transcript hash. */
export class ServerHandshake {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private readonly ephemeral = Curve.generateKeyPair();

  constructor(private readonly serverStatic: KeyPair) {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.byteLength === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    // The prologue is the "WA" header even when an edge-routing intro precedes it on the wire.
    this.authenticate(NOISE_WA_HEADER);
  }

  /** Answers the client's `clientHello` with `serverHello`: our ephemeral, static key and certificates. */
  serverHello(clientHello: Uint8Array, certificates: Uint8Array): Uint8Array {
    const { clientHello: hello } = proto.HandshakeMessage.decode(clientHello);
    const clientEphemeral = hello?.ephemeral;
    if (clientEphemeral?.length !== 32) throw new Error("clientHello without ephemeral");
    this.authenticate(clientEphemeral);
    this.authenticate(this.ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientEphemeral));
    const encryptedStatic = this.encrypt(this.serverStatic.public);
    this.mixIntoKey(Curve.sharedKey(this.serverStatic.private, clientEphemeral));
    const payload = this.encrypt(certificates);
    return proto.HandshakeMessage.encode({
      serverHello: { ephemeral: this.ephemeral.public, static: encryptedStatic, payload },
    }).finish();
  }

  /** Reads `clientFinish`: the client's static key (decrypting it proves the client holds it) and login. */
  clientFinish(message: Uint8Array): ClientFinish {
    const { clientFinish } = proto.HandshakeMessage.decode(message);
    if (!clientFinish?.static || !clientFinish.payload) throw new Error("expected clientFinish");
    const clientStatic = this.decrypt(clientFinish.static);
    this.mixIntoKey(Curve.sharedKey(this.ephemeral.private, clientStatic));
    const payload = proto.ClientPayload.decode(this.decrypt(clientFinish.payload));
    return { clientStatic, payload };
  }

  /** Split: the client writes with the first half and reads with the second, so we do the opposite. */
  transport(): Transport {
    const [clientWrite, clientRead] = this.expand(EMPTY);
    return new Transport(clientRead, clientWrite);
  }

  private authenticate(data: Uint8Array): void {
    this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const result = aesEncryptGCM(plaintext, this.key, nonce(this.counter++), this.hash);
    this.authenticate(result);
    return result;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const result = aesDecryptGCM(ciphertext, this.key, nonce(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return result;
  }

  private expand(material: Uint8Array): [Buffer, Buffer] {
    const key = Buffer.from(hkdf(Buffer.from(material), 64, { salt: this.salt, info: "" }));
    return [key.subarray(0, 32), key.subarray(32)];
  }

  private mixIntoKey(material: Uint8Array): void {
    const [salt, key] = this.expand(material);
    this.salt = salt;
    this.key = key;
    this.counter = 0;
  }
}

/**
 * Splits the client's byte stream into frames (3-byte big-endian length, then the body). The very first
 * bytes carry the intro: the 4-byte "WA" header, or "ED" + edge routing info + that header.
 */
export class FrameReader {
  private buffered = EMPTY;
  private introSkipped = false;

  push(data: Uint8Array): Buffer[] {
    this.buffered = Buffer.concat([this.buffered, data]);
    if (!this.introSkipped) {
      const introLength = this.introLength();
      if (introLength === undefined) return [];
      this.buffered = this.buffered.subarray(introLength);
      this.introSkipped = true;
    }
    const frames: Buffer[] = [];
    while (this.buffered.length >= 3) {
      const size = this.buffered.readUIntBE(0, 3);
      if (this.buffered.length < size + 3) break;
      frames.push(this.buffered.subarray(3, size + 3));
      this.buffered = this.buffered.subarray(size + 3);
    }
    return frames;
  }

  private introLength(): number | undefined {
    const head = this.buffered;
    if (head.length < 4) return undefined;
    if (head.subarray(0, 2).toString("latin1") === "WA") {
      if (!head.subarray(0, 4).equals(NOISE_WA_HEADER)) throw new Error("unexpected WA header version");
      return 4;
    }
    if (head.subarray(0, 2).toString("latin1") !== "ED" || head.length < 7) {
      throw new Error("client did not start with the WA intro");
    }
    const routingLength = (head[4] ?? 0) * 65536 + head.readUInt16BE(5);
    return head.length < 7 + routingLength + 4 ? undefined : 7 + routingLength + 4;
  }
}

/** One outgoing frame: 3-byte length, then the body. */
export function frame(body: Uint8Array): Buffer {
  const header = Buffer.alloc(3);
  header.writeUIntBE(body.length, 0, 3);
  return Buffer.concat([header, body]);
}
