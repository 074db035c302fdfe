/**
 * WhatsApp's server certificate, checked by the bridge. In the Noise handshake the server sends its
 * static key and a certificate chain (root → intermediate → leaf, the leaf certifying that static key).
 * Baileys 7.0.0-rc14 decodes the chain but its `Curve.verify` wraps libsignal's `verifySignature` in
 * `try { …; return true }`, and libsignal RETURNS false for a bad signature: any chain passes. It also
 * never compares the leaf's key with the server's static key. So we check the chain ourselves
 * (docs/decisions.md "WhatsApp's server certificate"), the way whatsmeow does.
 *
 * Baileys offers no hook into its handshake, so we read the server's hello as Baileys does: the
 * connection's ephemeral key pair is captured while `makeWASocket` runs (synchronously) and the first
 * frame (the hello, emitted as `frame` before Baileys acts on it) is decrypted with it. A bad chain ends
 * the socket before Baileys answers the hello, so nothing of ours (login, registration) reaches the peer.
 */
import {
  aesDecryptGCM,
  Curve,
  hkdf,
  type KeyPair,
  makeWASocket,
  NOISE_MODE,
  NOISE_WA_HEADER,
  proto,
  sha256,
  type UserFacingSocketConfig,
  type WASocket,
} from "@whiskeysockets/baileys";
import { verifySignature } from "libsignal/src/curve.js";

/**
 * WhatsApp's root certificate key ("WhatsAppLongTerm1", serial 0), pinned here rather than read from
 * Baileys (`WA_CERT_DETAILS.PUBLIC_KEY`, the same bytes: a test compares them) so that an upgrade
 * cannot change what we trust without a diff in our code.
 */
export const WHATSAPP_ROOT_KEY = Buffer.from(
  "142375574d0a587166aae71ebe516437c4a28b73e3695c6ce1f7f9545da8ee6b",
  "hex",
);
const ROOT_SERIAL = 0;

/** The server's certificate did not verify: the socket is ended with this error. */
export class ServerCertificateRefused extends Error {
  constructor(problem: string) {
    super(`WhatsApp's server certificate was refused: ${problem}`);
    this.name = "ServerCertificateRefused";
  }
}

/** A signature check that believes the answer (libsignal returns false for a bad signature). */
function signedBy(key: Uint8Array | null | undefined, message: Uint8Array, signature: Uint8Array): boolean {
  if (key?.length !== 32 || signature.length !== 64) return false;
  try {
    return verifySignature(Buffer.concat([Buffer.from([5]), key]), message, signature) === true;
  } catch {
    return false;
  }
}

/**
 * The chain's problem, or null when it is sound: the intermediate is signed by `root` and names it as
 * issuer (serial 0), the leaf is signed by the intermediate's key and names it as issuer, and the leaf
 * certifies `serverStatic`, the key this very handshake was made with (else a genuine chain could be
 * replayed by anyone).
 */
export function certificateChainProblem(
  chain: Uint8Array,
  serverStatic: Uint8Array,
  root: Uint8Array,
): string | null {
  // Never throws: it runs inside Baileys' frame dispatch, where a throw would stall the handshake.
  try {
    return chainProblem(proto.CertChain.decode(chain), serverStatic, root);
  } catch {
    return "the certificate chain does not decode";
  }
}

function chainProblem(
  { intermediate, leaf }: proto.CertChain,
  serverStatic: Uint8Array,
  root: Uint8Array,
): string | null {
  if (!intermediate?.details || !intermediate.signature) return "no intermediate certificate";
  if (!leaf?.details || !leaf.signature) return "no leaf certificate";
  if (!signedBy(root, intermediate.details, intermediate.signature)) {
    return "the intermediate certificate is not signed by WhatsApp's root key";
  }
  const issuer = proto.CertChain.NoiseCertificate.Details.decode(intermediate.details);
  // An absent serial is 0, as whatsmeow reads it (proto3 `optional`: protobufjs gives null).
  if ((issuer.issuerSerial ?? 0) !== ROOT_SERIAL) return "the intermediate certificate names another issuer";
  if (!signedBy(issuer.key, leaf.details, leaf.signature)) {
    return "the leaf certificate is not signed by the intermediate certificate's key";
  }
  const certified = proto.CertChain.NoiseCertificate.Details.decode(leaf.details);
  if ((certified.issuerSerial ?? 0) !== (issuer.serial ?? 0)) {
    return "the leaf certificate names another issuer";
  }
  if (!certified.key || !Buffer.from(certified.key).equals(Buffer.from(serverStatic))) {
    return "the leaf certificate is for another key than the server's";
  }
  return null;
}

/**
 * The client half of the handshake up to the server's hello (Baileys' `noise-handler.js`, step for
 * step): the server's static key and the certificate chain it sent. Throws if `ephemeral` is not the
 * key pair this connection said hello with (AES-GCM refuses to decrypt).
 */
export function readServerHello(
  hello: Uint8Array,
  ephemeral: KeyPair,
): { serverStatic: Buffer; certificates: Buffer } {
  const { serverHello } = proto.HandshakeMessage.decode(hello);
  if (!serverHello?.ephemeral || !serverHello.static || !serverHello.payload)
    throw new Error("no server hello");
  const mode = Buffer.from(NOISE_MODE);
  let hash = mode.byteLength === 32 ? mode : sha256(mode);
  let salt = hash;
  let key = hash;
  let counter = 0;
  const authenticate = (data: Uint8Array) => {
    hash = sha256(Buffer.concat([hash, data]));
  };
  const mixIntoKey = (material: Uint8Array) => {
    const expanded = Buffer.from(hkdf(Buffer.from(material), 64, { salt, info: "" }));
    salt = expanded.subarray(0, 32);
    key = expanded.subarray(32);
    counter = 0;
  };
  const decrypt = (ciphertext: Uint8Array) => {
    const iv = Buffer.alloc(12);
    iv.writeUInt32BE(counter++, 8);
    const plaintext = aesDecryptGCM(ciphertext, key, iv, hash);
    authenticate(ciphertext);
    return plaintext;
  };
  authenticate(NOISE_WA_HEADER);
  authenticate(ephemeral.public);
  authenticate(serverHello.ephemeral);
  mixIntoKey(Curve.sharedKey(ephemeral.private, serverHello.ephemeral));
  const serverStatic = decrypt(serverHello.static);
  mixIntoKey(Curve.sharedKey(ephemeral.private, serverStatic));
  return { serverStatic, certificates: decrypt(serverHello.payload) };
}

/** The problem with a server hello, read with whichever captured key pair opens it; null when sound. */
export function serverHelloProblem(
  hello: Uint8Array,
  candidates: KeyPair[],
  root: Uint8Array,
): string | null {
  for (const ephemeral of candidates) {
    let read: ReturnType<typeof readServerHello>;
    try {
      read = readServerHello(hello, ephemeral);
    } catch {
      continue;
    }
    return certificateChainProblem(read.certificates, read.serverStatic, root);
  }
  // Fail closed: if a Baileys upgrade moves the ephemeral key out of reach, nothing connects unchecked.
  return "the server's hello could not be read with this connection's key";
}

/** Runs `build` and answers every key pair Baileys generated meanwhile (one: the connection's ephemeral). */
function capturingKeyPairs<T>(build: () => T): { value: T; keyPairs: KeyPair[] } {
  const generate = Curve.generateKeyPair;
  const keyPairs: KeyPair[] = [];
  Curve.generateKeyPair = () => {
    const pair = generate();
    keyPairs.push(pair);
    return pair;
  };
  try {
    return { value: build(), keyPairs };
  } finally {
    Curve.generateKeyPair = generate;
  }
}

export interface CheckedSocket {
  sock: WASocket;
  /** True once the server's certificate chain verified; a QR or an open before that must not count. */
  readonly verified: boolean;
}

/**
 * `makeWASocket`, with the server's certificate chain checked against `root` before Baileys answers the
 * server's hello; a chain that fails ends the socket with `ServerCertificateRefused`.
 */
export function makeCheckedSocket(config: UserFacingSocketConfig, root: Uint8Array): CheckedSocket {
  const { value: sock, keyPairs } = capturingKeyPairs(() => makeWASocket(config));
  let verified = false;
  const onFrame = (frame: unknown) => {
    // Before the handshake is done every frame is raw bytes; the first one is the server's hello.
    if (!(frame instanceof Uint8Array)) return;
    sock.ws.off("frame", onFrame);
    const problem = serverHelloProblem(frame, keyPairs, root);
    if (problem === null) verified = true;
    // Synchronous up to closing the WebSocket: Baileys reads the hello only after this listener returns
    // (it resolves a promise), and then finds the socket closed and sends nothing.
    else sock.end(new ServerCertificateRefused(problem)).catch(() => {});
  };
  sock.ws.on("frame", onFrame);
  return {
    sock,
    get verified() {
      return verified;
    },
  };
}
