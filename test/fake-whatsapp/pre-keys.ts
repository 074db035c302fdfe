/** The server's pre-key bookkeeping for a linked device (`iq xmlns=encrypt`), and the iq `result` reply. */
import { type BinaryNode, getBinaryNodeChild, getBinaryNodeChildren } from "@whiskeysockets/baileys";
import { bigEndian } from "./noise.ts";

export const SERVER_JID = "s.whatsapp.net";

export const result = (request: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: "iq",
  attrs: { id: request.attrs.id ?? "", type: "result", from: SERVER_JID },
  ...(content ? { content } : {}),
});

/**
 * Pre-key bookkeeping: `count` (how many are left), upload (`list`), and `digest`. `device` is the
 * server's LinkedDevice (server.ts), typed by the two fields used here so the files import one way.
 */
export function encryptIq(
  device: { jid: string; preKeys: Map<number, Buffer> },
  node: BinaryNode,
  log: (line: string) => void,
): BinaryNode {
  if (getBinaryNodeChild(node, "count")) {
    return result(node, [{ tag: "count", attrs: { value: String(device.preKeys.size) } }]);
  }
  const list = getBinaryNodeChild(node, "list");
  if (list) {
    for (const key of getBinaryNodeChildren(list, "key")) {
      const id = getBinaryNodeChild(key, "id")?.content;
      const value = getBinaryNodeChild(key, "value")?.content;
      if (id instanceof Uint8Array && value instanceof Uint8Array) {
        device.preKeys.set(bigEndian(id), Buffer.from(value));
      }
    }
    log(`${device.jid} uploaded pre-keys, now ${device.preKeys.size}`);
    return result(node);
  }
  if (getBinaryNodeChild(node, "digest")) return result(node, [{ tag: "digest", attrs: {} }]);
  return result(node);
}
