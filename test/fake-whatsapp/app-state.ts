/**
 * App-state sync on the server (`iq set xmlns=w:sync:app:state`): each account's collections
 * (critical_block, critical_unblock_low, regular_high, regular_low, regular) as versioned lists of
 * `SyncdPatch`es. A device asks for the patches after the version it has; a companion sends a patch of
 * its own, which is accepted only on top of the current version and with MACs that verify under one of
 * the account's app-state keys, and the account's other devices are told (`notification type=server_sync`).
 * Real WhatsApp cannot read the patches (the keys stay on the devices); the fake holds them, as the
 * phone's stand-in, to check MACs and to show tests what the account's state is now.
 */
import { randomBytes } from "node:crypto";
import {
  type BinaryNode,
  decodeSyncdPatch,
  getBinaryNodeChild,
  getBinaryNodeChildren,
  hmacSign,
  jidDecode,
  type LTHashState,
  newLTHashState,
  proto,
  S_WHATSAPP_NET,
} from "@whiskeysockets/baileys";
import { expandAppStateKeys } from "whatsapp-rust-bridge";

/** What this needs of the server (server.ts, which builds it and routes `w:sync:app:state` to `answer`). */
export interface AppStateHost {
  devices: Map<string, { jid: string }>;
  isConnected(jid: string): boolean;
  deliver(jid: string, node: BinaryNode): void;
}

export const COLLECTIONS = [
  "critical_block",
  "critical_unblock_low",
  "regular_high",
  "regular_low",
  "regular",
] as const;
export type CollectionName = (typeof COLLECTIONS)[number];
const isCollection = (name: string): name is CollectionName => COLLECTIONS.some((known) => known === name);

/** One app-state sync key, as the phone shares it (`AppStateSyncKey`). */
export interface AppStateKey {
  id: Buffer;
  data: Buffer;
  timestamp: number;
}

/** A decoded mutation as it stands now: the latest value set under its index. */
export interface AppStateEntry {
  collection: CollectionName;
  index: string[];
  value: proto.ISyncActionValue;
}

/** Why the server refused a patch: the `<error code text>` WhatsApp answers in the collection. */
export class AppStateRefusal extends Error {
  constructor(
    readonly code: 400 | 409,
    readonly text: string,
  ) {
    super(`${code} ${text}`);
  }
}

interface Collection {
  /** Each with its `version`; patch n takes the collection from version n-1 to n. */
  patches: proto.ISyncdPatch[];
  state: LTHashState;
}

const bigEndian64 = (value: number) => {
  const buffer = Buffer.alloc(8);
  buffer.writeUInt32BE(value, 4);
  return buffer;
};

/** The account's app state: its keys, its collections, and the decoded state they add up to. */
export class AccountAppState {
  readonly keys = new Map<string, AppStateKey>();
  /** By index (JSON): the latest SET under it, removed by a REMOVE. */
  readonly entries = new Map<string, AppStateEntry>();
  /** Patches refused, newest last (a test checks a bad MAC or a stale version was turned away). */
  readonly refusals: AppStateRefusal[] = [];
  private readonly collections = new Map<CollectionName, Collection>();

  collection(name: CollectionName): Collection {
    let collection = this.collections.get(name);
    if (!collection) {
      collection = { patches: [], state: newLTHashState() };
      this.collections.set(name, collection);
    }
    return collection;
  }

  /** Baileys' key lookup (`getAppStateSyncKey`): the key by its base64 id. */
  readonly keyFor = async (id: string): Promise<proto.Message.IAppStateSyncKeyData | undefined> => {
    const key = this.keys.get(id);
    return key ? { keyData: key.data, timestamp: key.timestamp } : undefined;
  };

  /**
   * A patch on top of `fromVersion`: refused (409) unless that is the current version, and (400) unless
   * its patch MAC, each value MAC, each index MAC and the snapshot MAC (the LT hash after it) verify.
   */
  async accept(name: CollectionName, patch: proto.ISyncdPatch, fromVersion: number): Promise<number> {
    try {
      return await this.check(name, patch, fromVersion);
    } catch (error) {
      const refusal =
        error instanceof AppStateRefusal
          ? error
          : new AppStateRefusal(400, error instanceof Error ? error.message : String(error));
      this.refusals.push(refusal);
      throw refusal;
    }
  }

  /** Stores a patch unchecked: what a tampering server would serve (the client must refuse it). */
  storeUnchecked(name: CollectionName, patch: proto.ISyncdPatch): number {
    const collection = this.collection(name);
    const version = collection.patches.length + 1;
    collection.patches.push({ ...patch, version: { version } });
    collection.state = { ...collection.state, version };
    return version;
  }

  /** The patches after `version`, each carrying its own version. */
  patchesAfter(name: CollectionName, version: number): proto.ISyncdPatch[] {
    return this.collection(name).patches.slice(version);
  }

  private async check(name: CollectionName, patch: proto.ISyncdPatch, fromVersion: number): Promise<number> {
    const collection = this.collection(name);
    if (fromVersion !== collection.state.version) {
      throw new AppStateRefusal(
        409,
        `conflict: ${name} is at ${collection.state.version}, not ${fromVersion}`,
      );
    }
    const keyId = Buffer.from(patch.keyId?.id ?? []).toString("base64");
    const key = this.keys.get(keyId);
    if (!key) throw new AppStateRefusal(400, `unknown app-state key ${keyId}`);
    const version = fromVersion + 1;
    const versioned: proto.ISyncdPatch = { ...patch, version: { version } };
    const decoded: AppStateEntry[] = [];
    // Baileys' own decoder with MAC checks on: a bad patch MAC or index MAC throws, a bad value MAC
    // skips the record (so fewer come back than were sent).
    const { hash, indexValueMap } = await decodeSyncdPatch(
      versioned as proto.SyncdPatch,
      name,
      collection.state,
      this.keyFor,
      ({ index, syncAction }) => decoded.push({ collection: name, index, value: syncAction.value ?? {} }),
      true,
    );
    if (decoded.length !== (patch.mutations ?? []).length) throw new AppStateRefusal(400, "bad value MAC");
    const snapshotMac = hmacSign(
      Buffer.concat([hash, bigEndian64(version), Buffer.from(name)]),
      Buffer.from(expandAppStateKeys(key.data).snapshotMacKey),
      "sha256",
    );
    if (!snapshotMac.equals(Buffer.from(patch.snapshotMac ?? []))) {
      throw new AppStateRefusal(400, "bad snapshot MAC");
    }
    collection.patches.push(versioned);
    collection.state = { version, hash, indexValueMap };
    this.apply(decoded, patch);
    return version;
  }

  private apply(decoded: AppStateEntry[], patch: proto.ISyncdPatch): void {
    decoded.forEach((entry, i) => {
      const key = JSON.stringify(entry.index);
      const operation = patch.mutations?.[i]?.operation;
      if (operation === proto.SyncdMutation.SyncdOperation.REMOVE) this.entries.delete(key);
      else this.entries.set(key, entry);
    });
  }
}

/** The server's side: collections per account (by phone number), answering `w:sync:app:state`. */
export class FakeAppState {
  private readonly accounts = new Map<string, AccountAppState>();
  /** Per device that was away: the collections that moved on meanwhile, with their latest version. */
  private readonly away = new Map<string, Map<CollectionName, number>>();

  constructor(private readonly server: AppStateHost) {}

  /** The app state of the account with this phone number. */
  account(phoneNumber: string): AccountAppState {
    let account = this.accounts.get(phoneNumber);
    if (!account) {
      account = new AccountAppState();
      this.accounts.set(phoneNumber, account);
    }
    return account;
  }

  /**
   * Tells the account's companions, but `except`, that `name` moved on (`server_sync`); one that is
   * away gets it when it next logs in (`loggedIn`), as WhatsApp keeps notifications for offline devices.
   */
  notify(phoneNumber: string, name: CollectionName, version: number, except?: string): void {
    for (const device of this.server.devices.values()) {
      if (device.jid === except || jidDecode(device.jid)?.user !== phoneNumber) continue;
      if (this.server.isConnected(device.jid)) this.server.deliver(device.jid, serverSync(name, version));
      else this.away.set(device.jid, new Map([...(this.away.get(device.jid) ?? []), [name, version]]));
    }
  }

  /** A device logged in: the collections that moved on while it was away. */
  loggedIn(jid: string): void {
    const missed = this.away.get(jid);
    this.away.delete(jid);
    for (const [name, version] of missed ?? []) this.server.deliver(jid, serverSync(name, version));
  }

  /** `iq set xmlns=w:sync:app:state`: patches after each asked version, or a companion's patch. */
  async answer(device: { jid: string }, iq: BinaryNode): Promise<BinaryNode[]> {
    const phoneNumber = jidDecode(device.jid)?.user ?? "";
    const account = this.account(phoneNumber);
    const requested = getBinaryNodeChildren(getBinaryNodeChild(iq, "sync"), "collection");
    const collections: BinaryNode[] = [];
    for (const node of requested) {
      const name = node.attrs.name ?? "";
      const version = Number(node.attrs.version ?? "0");
      if (!isCollection(name)) {
        collections.push(errorCollection(name, new AppStateRefusal(400, "unknown collection")));
        continue;
      }
      const patch = getBinaryNodeChild(node, "patch")?.content;
      if (patch instanceof Uint8Array) {
        collections.push(await this.receive(account, device, name, proto.SyncdPatch.decode(patch), version));
      } else collections.push(patchesNode(account, name, version));
    }
    return [{ tag: "sync", attrs: {}, content: collections }];
  }

  private async receive(
    account: AccountAppState,
    device: { jid: string },
    name: CollectionName,
    patch: proto.ISyncdPatch,
    fromVersion: number,
  ): Promise<BinaryNode> {
    try {
      const version = await account.accept(name, patch, fromVersion);
      this.notify(jidDecode(device.jid)?.user ?? "", name, version, device.jid);
      return { tag: "collection", attrs: { name, version: String(version) } };
    } catch (error) {
      if (error instanceof AppStateRefusal) return errorCollection(name, error);
      throw error;
    }
  }
}

function serverSync(name: CollectionName, version: number): BinaryNode {
  return {
    tag: "notification",
    attrs: {
      from: S_WHATSAPP_NET,
      type: "server_sync",
      id: randomBytes(8).toString("hex").toUpperCase(),
      t: String(Math.floor(Date.now() / 1000)),
    },
    content: [{ tag: "collection", attrs: { name, version: String(version) } }],
  };
}

function errorCollection(name: string, refusal: AppStateRefusal): BinaryNode {
  return {
    tag: "collection",
    attrs: { name, type: "error" },
    content: [{ tag: "error", attrs: { code: String(refusal.code), text: refusal.text } }],
  };
}

/** The patches after `version` (all of them, so `has_more_patches` is false). */
function patchesNode(account: AccountAppState, name: CollectionName, version: number): BinaryNode {
  const patches = account.patchesAfter(name, version);
  const current = account.collection(name).state.version;
  return {
    tag: "collection",
    attrs: { name, version: String(current), has_more_patches: "false" },
    content: [
      {
        tag: "patches",
        attrs: {},
        content: patches.map((patch) => ({
          tag: "patch",
          attrs: {},
          content: proto.SyncdPatch.encode(patch).finish(),
        })),
      },
    ],
  };
}
