/**
 * What an account keeps on WhatsApp's servers and changes by plain iq (lib/Socket/chats.js): its
 * blocklist (`iq xmlns=blocklist`: `get` answers `<list><item jid/>…`; `set` takes `<item action jid
 * [pn_jid]>`, LID-addressed as Baileys 7 sends it, the number alongside for a block), its about text
 * (`iq set xmlns=status` `<status>`) and its profile picture (`iq set xmlns=w:profile:picture`: a JPEG
 * in `<picture type=image>`, or no child to remove it). Each account by its number.
 */
import { type BinaryNode, getBinaryNodeChild } from "@whiskeysockets/baileys";
import { userOf } from "./directory.ts";
import type { FakeWhatsApp, LinkedDevice } from "./server.ts";

export interface BlockedEntry {
  /** As the companion named it: the contact's LID. */
  lid: string;
  /** The number WhatsApp needs with a block (`pn_jid`). */
  pn: string | undefined;
}

export interface AccountProfile {
  blocked: Map<string, BlockedEntry>;
  about: string | undefined;
  /** The JPEG last set, or null once removed. */
  picture: Buffer | null | undefined;
}

const accountOf = (device: LinkedDevice) => userOf(device.jid);
const children = (node: BinaryNode): BinaryNode[] => (Array.isArray(node.content) ? node.content : []);
const text = (node: BinaryNode | undefined) =>
  node?.content instanceof Uint8Array ? Buffer.from(node.content).toString("utf8") : undefined;

export class AccountSettings {
  private readonly accounts = new Map<string, AccountProfile>();

  constructor(server: FakeWhatsApp) {
    server.iqHandlers.set("blocklist", (device, iq) => this.blocklist(accountOf(device), iq));
    server.iqHandlers.set("status", (device, iq) => this.status(accountOf(device), iq));
    server.iqHandlers.set("w:profile:picture", (device, iq) => this.picture(accountOf(device), iq));
  }

  /** The account's state as WhatsApp holds it. */
  of(account: string): AccountProfile {
    let profile = this.accounts.get(account);
    if (!profile) {
      profile = { blocked: new Map(), about: undefined, picture: undefined };
      this.accounts.set(account, profile);
    }
    return profile;
  }

  private blocklist(account: string, iq: BinaryNode): BinaryNode[] | undefined {
    const profile = this.of(account);
    if (iq.attrs.type === "get") {
      const items = [...profile.blocked.values()].map((entry) => ({
        tag: "item",
        attrs: { jid: entry.lid },
      }));
      return [{ tag: "list", attrs: {}, content: items }];
    }
    for (const item of children(iq).filter((child) => child.tag === "item")) {
      const lid = item.attrs.jid ?? "";
      if (item.attrs.action === "block") profile.blocked.set(lid, { lid, pn: item.attrs.pn_jid });
      else if (item.attrs.action === "unblock") profile.blocked.delete(lid);
    }
    return undefined;
  }

  private status(account: string, iq: BinaryNode): BinaryNode[] | undefined {
    if (iq.attrs.type === "set") this.of(account).about = text(getBinaryNodeChild(iq, "status"));
    return undefined;
  }

  private picture(account: string, iq: BinaryNode): BinaryNode[] | undefined {
    // `target` is a group (or another chat) the account administers; the fake keeps its own picture only.
    if (iq.attrs.type !== "set" || iq.attrs.target) return undefined;
    const picture = getBinaryNodeChild(iq, "picture");
    this.of(account).picture = picture?.content instanceof Uint8Array ? Buffer.from(picture.content) : null;
    return picture ? [{ tag: "picture", attrs: { id: String(Date.now()) } }] : undefined;
  }
}
