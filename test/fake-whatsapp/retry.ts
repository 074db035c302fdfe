/**
 * A resend request: the recipient could not decrypt a message (a lost session, a new phone) and asks
 * the sender's device for it again with `receipt type=retry`, carrying its current key bundle
 * (identity, signed pre-key, registration id) so the sender can open a fresh Signal session at once.
 * The sender must find the message itself (Baileys' `getMessage`), then sends it again.
 */
import type { FakeWhatsApp, LinkedDevice } from "./server.ts";
import type { PreKeyBundle } from "./signal-peer.ts";

/** Who asks for the resend (a contact, contact.ts): its address and the keys it offers for a fresh session. */
export interface ResendAsker {
  jid: string;
  retryKeys(): PreKeyBundle;
}

const uint = (value: number, bytes: number) => {
  const out = Buffer.alloc(bytes);
  out.writeUIntBE(value, 0, bytes);
  return out;
};

/** The contact asks `device` to send message `id` again, with its identity and signed pre-key. */
export function sendRetryReceipt(
  server: FakeWhatsApp,
  device: LinkedDevice,
  contact: ResendAsker,
  id: string,
): void {
  const keys = contact.retryKeys();
  const t = String(Math.floor(Date.now() / 1000));
  server.deliver(device.jid, {
    tag: "receipt",
    attrs: { from: contact.jid, id, type: "retry", t },
    content: [
      { tag: "retry", attrs: { count: "1", id, t, v: "1" } },
      { tag: "registration", attrs: {}, content: uint(keys.registrationId, 4) },
      {
        tag: "keys",
        attrs: {},
        content: [
          { tag: "type", attrs: {}, content: Buffer.from([5]) },
          { tag: "identity", attrs: {}, content: keys.identityKey },
          {
            tag: "skey",
            attrs: {},
            content: [
              { tag: "id", attrs: {}, content: uint(keys.signedPreKey.id, 3) },
              { tag: "value", attrs: {}, content: keys.signedPreKey.publicKey },
              { tag: "signature", attrs: {}, content: keys.signedPreKey.signature },
            ],
          },
        ],
      },
    ],
  });
}
