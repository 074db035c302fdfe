/**
 * Linking by pairing code (`link_code_companion_reg`), as WhatsApp and the phone do it. The companion
 * shows an 8-character code and sends `companion_hello`: its ephemeral public key wrapped with a key
 * derived from the code (PBKDF2-SHA256, 2^17 rounds, random salt; AES-256-CTR). The server keeps it for
 * the phone number the companion named and answers a `link_code_pairing_ref`. On the phone the owner
 * types the code: the phone unwraps the companion's key, wraps its own ephemeral key the same way and
 * sends it with its identity key (`primary_hello`, a notification to the companion). The companion
 * answers `companion_finish`: its identity, the phone's and 32 random bytes, AES-GCM under a key from the
 * shared secret of the two ephemeral keys. Only with the right code do both sides hold the same secret,
 * so with a wrong one the phone cannot open that bundle and nothing is linked. Both then derive the
 * advSecret (HKDF of both shared secrets and the random bytes, `adv_secret`), and pairing ends as
 * with a QR: `pair-success` (server.ts `completePairing`).
 */

import { randomBytes } from "node:crypto";
import {
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  type BinaryNode,
  Curve,
  derivePairingCodeKey,
  getBinaryNodeChild,
  getBinaryNodeChildBuffer,
  hkdf,
  type KeyPair,
} from "@whiskeysockets/baileys";
import type { ClientConnection } from "./connection.ts";
import { userOf } from "./directory.ts";

const SERVER_JID = "s.whatsapp.net";

/** What the server knows of an unpaired companion (server.ts `Registration`). */
export interface PendingCompanion {
  connection: ClientConnection;
  /** Its pairing refs (QR refs, and the pairing code's once it asked for one). */
  refs: string[];
  noiseKey: Buffer;
  identityKey: Buffer;
}

/** A companion's `companion_hello`, waiting for the owner of `phoneNumber` to type the code. */
export interface LinkCodeRequest<R extends PendingCompanion = PendingCompanion> {
  /** The `link_code_pairing_ref` the server handed back; the pairing's ref from here on. */
  ref: string;
  phoneNumber: string;
  registration: R;
  /** salt (32) ‖ iv (16) ‖ AES-CTR of the companion's ephemeral public key. */
  wrappedCompanionEphemeral: Buffer;
  platform: string;
}

/** The companion's `companion_finish`. */
export interface CompanionFinish {
  /** salt (32) ‖ iv (12) ‖ AES-GCM of companion identity ‖ primary identity ‖ 32 random bytes. */
  wrappedKeyBundle: Buffer;
  companionIdentity: Buffer;
}

const error = (request: BinaryNode, code: string, text: string): BinaryNode => ({
  tag: "iq",
  attrs: { id: request.attrs.id ?? "", type: "error", from: SERVER_JID },
  content: [{ tag: "error", attrs: { code, text } }],
});
const result = (request: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: "iq",
  attrs: { id: request.attrs.id ?? "", type: "result", from: SERVER_JID },
  ...(content ? { content } : {}),
});

/** The server's part: keeps each companion's hello by number and relays the two later stages. */
export class LinkCodes<R extends PendingCompanion> {
  private readonly byNumber = new Map<string, LinkCodeRequest<R>>();
  private readonly finishes = new Map<string, (finish: CompanionFinish) => void>();

  /** `registrations`: the server's unpaired companions by pairing ref (`completePairing` looks there). */
  constructor(
    private readonly registrations: Map<string, R>,
    private readonly log: (line: string) => void,
  ) {}

  /** Answers an `iq xmlns=md` with a `link_code_companion_reg`; false for any other stanza. */
  handle(connection: ClientConnection, node: BinaryNode): boolean {
    const reg = node.tag === "iq" ? getBinaryNodeChild(node, "link_code_companion_reg") : undefined;
    if (!reg || node.attrs.xmlns !== "md") return false;
    const answer =
      reg.attrs.stage === "companion_hello"
        ? this.hello(connection, node, reg)
        : reg.attrs.stage === "companion_finish"
          ? this.finish(node, reg)
          : error(node, "400", "bad-request");
    connection.send(answer);
    return true;
  }

  /** What the phone of `phoneNumber` shows after the companion asked for a code (if still connected). */
  requestFor(phoneNumber: string): LinkCodeRequest<R> | undefined {
    const request = this.byNumber.get(phoneNumber);
    return request?.registration.connection.isOpen ? request : undefined;
  }

  /** The request for `phoneNumber` once it arrives: a phone's owner types a code seconds after it shows. */
  async waitForRequest(phoneNumber: string, timeoutMs = 5_000): Promise<LinkCodeRequest<R> | undefined> {
    const deadline = Date.now() + timeoutMs;
    let request = this.requestFor(phoneNumber);
    while (!request && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      request = this.requestFor(phoneNumber);
    }
    return request;
  }

  /** The phone's `primary_hello` to the companion; resolves with the companion's `companion_finish`. */
  primaryHello(
    request: LinkCodeRequest<R>,
    primaryIdentity: Uint8Array,
    wrappedPrimaryEphemeral: Buffer,
    timeoutMs = 10_000,
  ): Promise<CompanionFinish> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.finishes.delete(request.ref);
        reject(new Error("the companion did not answer primary_hello"));
      }, timeoutMs);
      this.finishes.set(request.ref, (finish) => {
        clearTimeout(timer);
        resolve(finish);
      });
      request.registration.connection.send({
        tag: "notification",
        attrs: {
          from: SERVER_JID,
          type: "link_code_companion_reg",
          id: randomBytes(8).toString("hex").toUpperCase(),
          t: String(Math.floor(Date.now() / 1000)),
        },
        content: [
          {
            tag: "link_code_companion_reg",
            attrs: { stage: "primary_hello" },
            content: [
              { tag: "link_code_pairing_ref", attrs: {}, content: Buffer.from(request.ref) },
              { tag: "primary_identity_pub", attrs: {}, content: Buffer.from(primaryIdentity) },
              {
                tag: "link_code_pairing_wrapped_primary_ephemeral_pub",
                attrs: {},
                content: wrappedPrimaryEphemeral,
              },
            ],
          },
        ],
      });
    });
  }

  /** The companion was linked: its code can no longer be typed. */
  forget(request: LinkCodeRequest<R>): void {
    if (this.byNumber.get(request.phoneNumber) === request) this.byNumber.delete(request.phoneNumber);
  }

  private hello(connection: ClientConnection, node: BinaryNode, reg: BinaryNode): BinaryNode {
    const registration = [...this.registrations.values()].find((r) => r.connection === connection);
    const wrapped = getBinaryNodeChildBuffer(reg, "link_code_pairing_wrapped_companion_ephemeral_pub");
    const noiseKey = getBinaryNodeChildBuffer(reg, "companion_server_auth_key_pub");
    const phoneNumber = userOf(reg.attrs.jid);
    if (!registration) return error(node, "401", "not-authorized");
    // The hello must come from the companion that did the handshake with that Noise key.
    if (wrapped?.length !== 80 || !noiseKey || !registration.noiseKey.equals(Buffer.from(noiseKey))) {
      return error(node, "400", "bad-request");
    }
    const ref = `${randomBytes(16).toString("base64")}`;
    const platform = getBinaryNodeChild(reg, "companion_platform_display")?.content;
    this.byNumber.set(phoneNumber, {
      ref,
      phoneNumber,
      registration,
      wrappedCompanionEphemeral: Buffer.from(wrapped),
      platform: platform instanceof Uint8Array ? Buffer.from(platform).toString() : String(platform ?? ""),
    });
    registration.refs.push(ref);
    this.registrations.set(ref, registration);
    this.log(`pairing code requested for ${phoneNumber}`);
    return result(node, [
      {
        tag: "link_code_companion_reg",
        attrs: {},
        content: [{ tag: "link_code_pairing_ref", attrs: {}, content: Buffer.from(ref) }],
      },
    ]);
  }

  private finish(node: BinaryNode, reg: BinaryNode): BinaryNode {
    const ref = Buffer.from(getBinaryNodeChildBuffer(reg, "link_code_pairing_ref") ?? []).toString();
    const bundle = getBinaryNodeChildBuffer(reg, "link_code_pairing_wrapped_key_bundle");
    const identity = getBinaryNodeChildBuffer(reg, "companion_identity_public");
    const waiting = this.finishes.get(ref);
    if (!waiting || !bundle || !identity) return error(node, "404", "item-not-found");
    this.finishes.delete(ref);
    waiting({ wrappedKeyBundle: Buffer.from(bundle), companionIdentity: Buffer.from(identity) });
    return result(node);
  }
}

/** Unwraps a code-wrapped ephemeral key: with a wrong code this yields other 32 bytes, not an error. */
async function unwrapKey(wrapped: Buffer, code: string): Promise<Buffer> {
  const key = await derivePairingCodeKey(code, wrapped.subarray(0, 32));
  return aesDecryptCTR(wrapped.subarray(48, 80), key, wrapped.subarray(32, 48));
}

async function wrapKey(publicKey: Uint8Array, code: string): Promise<Buffer> {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const key = await derivePairingCodeKey(code, salt);
  return Buffer.concat([salt, iv, aesEncryptCTR(publicKey, key, iv)]);
}

/** What the phone learns from a completed exchange: whom it links, and the secret for `pair-success`. */
export interface CodeExchange {
  companionIdentity: Buffer;
  advSecret: Buffer;
}

/**
 * The phone's side once its owner typed `code`: unwraps the companion's ephemeral key, sends its own
 * (`primary_hello`), opens the companion's key bundle and derives the advSecret. A wrong code fails here
 * (the bundle does not authenticate), before anything is linked.
 */
export async function typeCode<R extends PendingCompanion>(
  codes: LinkCodes<R>,
  request: LinkCodeRequest<R>,
  code: string,
  identity: KeyPair,
): Promise<CodeExchange> {
  const companionEphemeral = await unwrapKey(request.wrappedCompanionEphemeral, code);
  const ephemeral = Curve.generateKeyPair();
  const finish = await codes.primaryHello(request, identity.public, await wrapKey(ephemeral.public, code));
  const shared = Buffer.from(Curve.sharedKey(ephemeral.private, companionEphemeral));
  const bundle = openKeyBundle(finish.wrappedKeyBundle, shared);
  const companionIdentity = bundle.subarray(0, 32);
  if (
    !companionIdentity.equals(finish.companionIdentity) ||
    !companionIdentity.equals(request.registration.identityKey) ||
    !bundle.subarray(32, 64).equals(Buffer.from(identity.public))
  ) {
    throw new Error("the companion's key bundle names other identities");
  }
  const identityShared = Buffer.from(Curve.sharedKey(identity.private, companionIdentity));
  const advSecret = Buffer.from(
    hkdf(Buffer.concat([shared, identityShared, bundle.subarray(64, 96)]), 32, { info: "adv_secret" }),
  );
  return { companionIdentity, advSecret };
}

function openKeyBundle(wrapped: Buffer, shared: Buffer): Buffer {
  const key = hkdf(shared, 32, {
    salt: wrapped.subarray(0, 32),
    info: "link_code_pairing_key_bundle_encryption_key",
  });
  try {
    return Buffer.from(aesDecryptGCM(wrapped.subarray(44), key, wrapped.subarray(32, 44), Buffer.alloc(0)));
  } catch {
    throw new Error("wrong pairing code: the companion's key bundle does not decrypt");
  }
}
