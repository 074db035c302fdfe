/**
 * Privacy settings on the fake server (`iq xmlns=privacy`), per account, as WhatsApp answers them: a
 * `get` gets `<privacy>` with one `<category name value>` per setting (what Baileys' fetchPrivacySettings
 * reduces to a dictionary, and readMessages reads `readreceipts` from); a `set` (Baileys' privacyQuery)
 * stores the new value, which every later `get` answers. Also what a companion's read receipts become
 * for the contact: WhatsApp passes `read` on to the sender, while `read-self` (readreceipts `none`)
 * only syncs the account's own devices, so the contact sees no blue ticks.
 */
import {
  type BinaryNode,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  jidDecode,
} from "@whiskeysockets/baileys";
import { type Account, type Directory, lidJid, pnJid } from "./directory.ts";

/** What a new account has (WhatsApp's defaults); values are WhatsApp's own (`all`, `contacts`, `none`, …). */
export const DEFAULT_PRIVACY: Readonly<Record<string, string>> = {
  last: "all",
  online: "all",
  profile: "all",
  status: "contacts",
  readreceipts: "all",
  groupadd: "all",
  calladd: "all",
  messages: "all",
};

/** A receipt a companion sent that WhatsApp hands on to the contact it names. */
export interface RelayedReceipt {
  /** The message id(s) it covers (the first, then any `list/item`). */
  ids: string[];
  /** `read`, or undefined for a delivery receipt. */
  type: string | undefined;
  /** How the companion addressed the contact (`to`): its number or its LID. */
  to: string;
  /** The companion that sent it. */
  from: string | undefined;
}

export class FakePrivacy {
  private readonly byAccount = new Map<string, Map<string, string>>();
  /** Every `set` received, in order: `{ account, name, value }`. */
  readonly changes: Array<{ account: string; name: string; value: string }> = [];

  /** The account's settings (its phone number, digits), defaults filled in. */
  settingsOf(number: string): Record<string, string> {
    return { ...DEFAULT_PRIVACY, ...Object.fromEntries(this.byAccount.get(number) ?? []) };
  }

  /** What the account's phone would do in Settings → Privacy. */
  set(number: string, name: string, value: string): void {
    const settings = this.byAccount.get(number) ?? new Map<string, string>();
    settings.set(name, value);
    this.byAccount.set(number, settings);
  }

  /** The content of the answer to a companion's `iq xmlns=privacy` (server.ts wraps it in the result). */
  answer(deviceJid: string, iq: BinaryNode): BinaryNode[] | undefined {
    const number = jidDecode(deviceJid)?.user ?? "";
    const asked = getBinaryNodeChild(iq, "privacy");
    if (iq.attrs.type === "set") {
      for (const { attrs } of getBinaryNodeChildren(asked, "category")) {
        if (!attrs.name || attrs.value === undefined) continue;
        this.set(number, attrs.name, attrs.value);
        this.changes.push({ account: number, name: attrs.name, value: attrs.value });
      }
      return undefined;
    }
    const categories = Object.entries(this.settingsOf(number)).map(([name, value]) => ({
      tag: "category",
      attrs: { name, value },
    }));
    return [{ tag: "privacy", attrs: {}, content: categories }];
  }
}

/**
 * The receipts companions sent that reach `account` (a contact), in order: those addressed to its number
 * or LID, except `read-self`, which WhatsApp keeps to the reader's own devices.
 */
export function receiptsReaching(
  received: ReadonlyArray<{ jid: string | undefined; node: BinaryNode }>,
  account: Account,
  directory: Directory,
): RelayedReceipt[] {
  const addresses = new Set([pnJid(account), lidJid(account)]);
  return received
    .filter(({ node }) => node.tag === "receipt" && node.attrs.type !== "read-self")
    .filter(({ node }) => {
      const to = node.attrs.to ?? "";
      return addresses.has(to) || directory.resolve(to)?.account === account;
    })
    .map(({ jid, node }) => ({
      ids: [
        node.attrs.id ?? "",
        ...getBinaryNodeChildren(getBinaryNodeChild(node, "list"), "item").map((item) => item.attrs.id ?? ""),
      ],
      type: node.attrs.type,
      to: node.attrs.to ?? "",
      from: jid,
    }));
}
