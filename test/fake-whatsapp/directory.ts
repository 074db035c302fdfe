/**
 * Who is on the fake network: accounts (a phone number, a LID and their devices) and the companions
 * (real Baileys clients linked to an account). WhatsApp's server answers device lists and key fetches
 * from this, and routes messages by it.
 */
import { jidDecode } from "@whiskeysockets/baileys";
import type { FakeDevice } from "./device.ts";
import type { PreKeyBundle } from "./signal-peer.ts";

export interface Account {
  /** The phone number, as in `<pnUser>@s.whatsapp.net`. */
  pnUser: string;
  /** The LID user, as in `<lidUser>@lid`. */
  lidUser: string;
  /** The account's fake devices by device number (0 is the phone). */
  devices: Map<number, FakeDevice>;
}

/** A linked Baileys client as the server recorded it at pairing (server.ts's `LinkedDevice`). */
export interface Companion {
  jid: string;
  lid: string;
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: { id: number; publicKey: Buffer; signature: Buffer };
  preKeys: Map<number, Buffer>;
}

/** Where a device JID leads: a fake device, or a linked Baileys client. */
export type Target =
  | { kind: "device"; account: Account; device: FakeDevice }
  | { kind: "companion"; account: Account | undefined; companion: Companion };

export const pnJid = (account: Account, device = 0) =>
  `${account.pnUser}${device ? `:${device}` : ""}@s.whatsapp.net`;
/** The user part of any JID (`491555…:3@s.whatsapp.net` → `491555…`): an account's number or LID. */
export const userOf = (jid: string | undefined): string => (jid ?? "").split("@")[0]?.split(":")[0] ?? "";
export const lidJid = (account: Account, device = 0) => `${account.lidUser}${device ? `:${device}` : ""}@lid`;

export class Directory {
  private readonly accounts: Account[] = [];

  constructor(private readonly companions: () => Iterable<Companion>) {}

  register(account: Account): void {
    this.accounts.push(account);
  }

  /** An account by its phone number or LID user. */
  account(user: string): Account | undefined {
    return this.accounts.find((account) => account.pnUser === user || account.lidUser === user);
  }

  /**
   * The account a phone number reaches, as WhatsApp resolves it: the exact number, else the other form
   * of a number WhatsApp normalises (phoneForms), so a Brazilian mobile asked with or without its ninth
   * digit, or a Mexican one with or without the `1` after 52, finds the account registered either way.
   */
  byPhone(digits: string): Account | undefined {
    for (const form of phoneForms(digits)) {
      const account = this.accounts.find((candidate) => candidate.pnUser === form);
      if (account) return account;
    }
    return undefined;
  }

  companionsOf(account: Account): Companion[] {
    return [...this.companions()].filter((companion) => jidDecode(companion.jid)?.user === account.pnUser);
  }

  /** Every device number the account has, companions included (what a usync device list lists). */
  deviceIds(account: Account): number[] {
    const linked = this.companionsOf(account).map((companion) => jidDecode(companion.jid)?.device ?? 0);
    return [...account.devices.keys(), ...linked].sort((a, b) => a - b);
  }

  /** A device JID, by phone number or LID (`user[:device]@server`), to what holds that device. */
  resolve(jid: string): Target | undefined {
    const decoded = jidDecode(jid);
    if (!decoded?.user) return undefined;
    const deviceId = decoded.device ?? 0;
    const account = this.account(decoded.user);
    const device = account?.devices.get(deviceId);
    if (account && device) return { kind: "device", account, device };
    const companion = [...this.companions()].find((candidate) => {
      const pn = jidDecode(candidate.jid);
      const lid = jidDecode(candidate.lid);
      return (pn?.user === decoded.user || lid?.user === decoded.user) && (pn?.device ?? 0) === deviceId;
    });
    return companion ? { kind: "companion", account, companion } : undefined;
  }
}

/**
 * The number as asked, then the other form WhatsApp treats as the same line:
 * - Brazil (55): mobiles gained a ninth digit (a leading 9 after the two-digit area code); accounts
 *   registered before are still `55 AA XXXX-XXXX`, so `55 AA 9XXXX-XXXX` and that form are one line.
 * - Mexico (52): mobiles used to be dialled `52 1` + ten digits; `52` + ten digits is the same line.
 */
export function phoneForms(digits: string): string[] {
  const brazil = /^55(\d{2})(\d{8,9})$/.exec(digits);
  if (brazil) {
    const [, area, local = ""] = brazil;
    if (local.length === 9 && local.startsWith("9")) return [digits, `55${area}${local.slice(1)}`];
    if (local.length === 8 && /^[6-9]/.test(local)) return [digits, `55${area}9${local}`];
  }
  const mexico = /^52(1?)(\d{10})$/.exec(digits);
  if (mexico) return [digits, mexico[1] ? `52${mexico[2]}` : `521${mexico[2]}`];
  return [digits];
}

/** A companion's bundle from what it registered at pairing, with one of its uploaded one-time keys. */
export function companionBundle(companion: Companion): PreKeyBundle {
  const next = companion.preKeys.entries().next();
  if (!next.done) companion.preKeys.delete(next.value[0]);
  return {
    registrationId: companion.registrationId,
    identityKey: companion.identityKey,
    signedPreKey: companion.signedPreKey,
    ...(next.done ? {} : { preKey: { id: next.value[0], publicKey: next.value[1] } }),
  };
}
