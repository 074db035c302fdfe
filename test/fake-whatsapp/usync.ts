/**
 * The directory queries a client makes before it encrypts: usync (`iq get usync`: device lists, the
 * LID of a phone number, whether a number is on WhatsApp) and pre-key bundle fetches (`iq get encrypt`
 * with `key/user`), in the shapes Baileys 7 parses (`WAUSync/`, `parseAndInjectE2ESessions`).
 */
import {
  type BinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  isLidUser,
  jidDecode,
  S_WHATSAPP_NET,
} from "@whiskeysockets/baileys";
import { type Account, companionBundle, type Directory, lidJid } from "./directory.ts";
import { bundleNode } from "./signal-peer.ts";

export const iqResult = (request: BinaryNode, content?: BinaryNode[]): BinaryNode => ({
  tag: "iq",
  attrs: { id: request.attrs.id ?? "", type: "result", from: request.attrs.to ?? S_WHATSAPP_NET },
  ...(content ? { content } : {}),
});

const children = (node: BinaryNode | undefined): BinaryNode[] =>
  Array.isArray(node?.content) ? node.content : [];

/** The phone number a usync `user` node asks about in `contact` (`+1555…`), as sent. */
function askedPhone(user: BinaryNode): string | undefined {
  const content = getBinaryNodeChild(user, "contact")?.content;
  if (typeof content === "string") return content;
  return content instanceof Uint8Array ? Buffer.from(content).toString() : undefined;
}

/**
 * Who a usync `user` node asks about: by `jid`, or by phone number, which WhatsApp resolves to the
 * account's own JID (a normalised number: directory.ts `phoneForms`) and answers under that JID.
 */
function asked(
  user: BinaryNode,
  directory: Directory,
): { jid: string; account: Account | undefined } | undefined {
  if (user.attrs.jid) {
    return { jid: user.attrs.jid, account: directory.account(jidDecode(user.attrs.jid)?.user ?? "") };
  }
  const digits = askedPhone(user)?.replace(/\D/g, "") ?? "";
  if (!digits) return undefined;
  const account = directory.byPhone(digits);
  return { jid: `${account?.pnUser ?? digits}${S_WHATSAPP_NET}`, account };
}

function protocolNode(
  protocol: string,
  user: BinaryNode,
  jid: string,
  account: Account | undefined,
  directory: Directory,
): BinaryNode | undefined {
  switch (protocol) {
    case "devices": {
      const ids = account ? directory.deviceIds(account) : [];
      const devices = ids.map(
        (id): BinaryNode => ({
          tag: "device",
          // Baileys skips a non-zero device without a key index (WhatsApp would refuse to take it).
          attrs: id === 0 ? { id: "0" } : { id: String(id), "key-index": String(id) },
        }),
      );
      return { tag: "devices", attrs: {}, content: [{ tag: "device-list", attrs: {}, content: devices }] };
    }
    case "lid":
      // Asked by phone number: the LID behind it; asked by LID there is nothing to add.
      return account && !isLidUser(jid) ? { tag: "lid", attrs: { val: lidJid(account) } } : undefined;
    case "contact": {
      // WhatsApp echoes the number as it was asked, which is how a client matches each answer to its
      // question when the JID it answers under is a normalised form (whatsmeow reads it as `Query`).
      const phone = askedPhone(user);
      return {
        tag: "contact",
        attrs: { type: account ? "in" : "out" },
        ...(phone ? { content: phone } : {}),
      };
    }
    default:
      return undefined;
  }
}

export function usyncReply(request: BinaryNode, directory: Directory): BinaryNode {
  const usync = getBinaryNodeChild(request, "usync");
  const protocols = children(getBinaryNodeChild(usync, "query")).map((node) => node.tag);
  const users = getBinaryNodeChildren(getBinaryNodeChild(usync, "list"), "user").flatMap((user) => {
    const found = asked(user, directory);
    if (!found) return [];
    const { jid, account } = found;
    const content = protocols.flatMap((protocol) => {
      const node = protocolNode(protocol, user, jid, account, directory);
      return node ? [node] : [];
    });
    return [{ tag: "user", attrs: { jid }, content }];
  });
  return iqResult(request, [
    {
      tag: "usync",
      attrs: { ...(usync?.attrs ?? {}) },
      content: [
        { tag: "result", attrs: {} },
        { tag: "list", attrs: {}, content: users },
      ],
    },
  ]);
}

/** One bundle per requested device; a device nobody has is left out (an `error` node would fail the lot). */
export async function keyFetchReply(request: BinaryNode, directory: Directory): Promise<BinaryNode> {
  const asked = getBinaryNodeChildren(getBinaryNodeChild(request, "key"), "user");
  const users: BinaryNode[] = [];
  for (const { attrs } of asked) {
    const jid = attrs.jid ?? "";
    const target = directory.resolve(jid);
    if (!target) continue;
    const bundle =
      target.kind === "device" ? await target.device.peer.bundle() : companionBundle(target.companion);
    users.push(bundleNode(jid, bundle));
  }
  return iqResult(request, [{ tag: "list", attrs: {}, content: users }]);
}

export const isUsyncQuery = (node: BinaryNode) =>
  node.tag === "iq" && node.attrs.xmlns === "usync" && !!getBinaryNodeChild(node, "usync");
export const isKeyFetch = (node: BinaryNode) =>
  node.tag === "iq" && node.attrs.xmlns === "encrypt" && !!getBinaryNodeChild(node, "key");
