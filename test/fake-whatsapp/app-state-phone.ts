/**
 * The phone's half of app-state sync. A phone holds the account's app-state sync keys and hands them to
 * each new companion in a `protocolMessage` APP_STATE_SYNC_KEY_SHARE, end-to-end encrypted one-to-one
 * from device 0, as WhatsApp phones do right after linking. Its own changes (archive, mute, pin, star,
 * labels, the push name) go up as patches with real MACs, encoded by Baileys' own `chatModificationToAppPatch` and
 * `encodeSyncdPatch`, and the account's companions are told (`server_sync`); what a companion changed
 * is read back from the account's decoded state.
 */
import { randomBytes } from "node:crypto";
import {
  type ChatModification,
  chatModificationToAppPatch,
  encodeSyncdPatch,
  proto,
} from "@whiskeysockets/baileys";
import type { AccountAppState, AppStateEntry, AppStateKey, CollectionName } from "./app-state.ts";
import type { FakeDevice } from "./device.ts";
import { companionBundle } from "./directory.ts";
import type { FakeWhatsApp, LinkedDevice } from "./server.ts";

/** The phone (phone.ts) as this sees it: its number, JID and its own Signal device (device 0). */
export interface PhoneIdentity {
  phoneNumber: string;
  jid: string;
  device: FakeDevice;
}

const messageId = () => randomBytes(10).toString("hex").toUpperCase();

/** A chat's state as the account's app state has it (what the phone shows). */
export interface ChatAppState {
  archived: boolean;
  pinned: boolean;
  /** Epoch ms; -1 is "always"; null when not muted. */
  mutedUntil: number | null;
  /** Ids of the labels on the chat. */
  labels: string[];
}

export class PhoneAppState {
  /** The account's current key: WhatsApp key ids are six bytes, the key data 32. */
  readonly key: AppStateKey = {
    id: Buffer.concat([Buffer.alloc(4), randomBytes(2)]),
    data: randomBytes(32),
    timestamp: Date.now(),
  };
  /** Companions the keys went to, by JID, with the key-share message id. */
  readonly shared = new Map<string, string>();

  constructor(
    private readonly server: FakeWhatsApp,
    private readonly phone: PhoneIdentity,
  ) {
    this.account.keys.set(this.key.id.toString("base64"), this.key);
  }

  get account(): AccountAppState {
    return this.server.appState.account(this.phone.phoneNumber);
  }

  /** As WhatsApp phones do: each companion gets the keys on its first login. */
  shareKeysOnPairing(): void {
    this.server.loginHooks.push((device, first) => {
      if (!first || !device.jid.startsWith(`${this.phone.phoneNumber}:`)) return;
      this.shareKeys(device).catch((error: unknown) => {
        throw error;
      });
    });
  }

  /** The APP_STATE_SYNC_KEY_SHARE, from the phone (device 0) to the companion, Signal-encrypted. */
  async shareKeys(device: LinkedDevice): Promise<string> {
    await waitForPreKeys(device);
    const peer = this.phone.device.peer;
    if (!(await peer.hasSession(device.jid))) await peer.startSession(device.jid, companionBundle(device));
    const { type, ciphertext } = await peer.encrypt(device.jid, {
      protocolMessage: {
        type: proto.Message.ProtocolMessage.Type.APP_STATE_SYNC_KEY_SHARE,
        appStateSyncKeyShare: {
          keys: [
            {
              keyId: { keyId: this.key.id },
              keyData: {
                keyData: this.key.data,
                fingerprint: { rawId: 1, currentIndex: 0, deviceIndexes: [0] },
                timestamp: this.key.timestamp,
              },
            },
          ],
        },
      },
    });
    const id = messageId();
    this.server.deliver(device.jid, {
      tag: "message",
      attrs: {
        id,
        from: this.phone.jid,
        type: "text",
        category: "peer",
        t: String(Math.floor(Date.now() / 1000)),
      },
      content: [{ tag: "enc", attrs: { v: "2", type }, content: ciphertext }],
    });
    this.shared.set(device.jid, id);
    return id;
  }

  archive(chat: string, archived = true): Promise<number> {
    return this.change({ archive: archived, lastMessages: [] }, chat);
  }

  /** `until` in epoch ms (-1: always); null unmutes. */
  mute(chat: string, until: number | null): Promise<number> {
    return this.change({ mute: until }, chat);
  }

  pin(chat: string, pinned = true): Promise<number> {
    return this.change({ pin: pinned }, chat);
  }

  star(chat: string, message: { id: string; fromMe: boolean }, starred = true): Promise<number> {
    return this.change({ star: { messages: [message], star: starred } }, chat);
  }

  /** Creates or edits a label (WhatsApp label ids are small numbers as strings). */
  editLabel(label: { id: string; name: string; color: number; deleted?: boolean }): Promise<number> {
    return this.change({ addLabel: { ...label, deleted: label.deleted ?? false } }, "");
  }

  labelChat(chat: string, labelId: string, labeled = true): Promise<number> {
    return this.change(labeled ? { addChatLabel: { labelId } } : { removeChatLabel: { labelId } }, chat);
  }

  /** The account's display name (push name): the `setting_pushName` entry of critical_block. */
  setPushName(name: string): Promise<number> {
    return this.change({ pushNameSetting: name }, "");
  }

  /**
   * One change as a patch on top of the collection's current version, with real MACs under the
   * account's key; the server checks and stores it and tells the companions. `tamper` flips a bit of
   * the patch MAC and stores it unchecked: what a client must refuse when it syncs.
   */
  async change(mod: ChatModification, chat: string, options: { tamper?: boolean } = {}): Promise<number> {
    const create = chatModificationToAppPatch(mod, chat);
    const name = create.type as CollectionName;
    const state = this.account.collection(name).state;
    const { patch } = await encodeSyncdPatch(
      create,
      this.key.id.toString("base64"),
      state,
      this.account.keyFor,
    );
    let version: number;
    if (options.tamper) {
      const mac = Buffer.from(patch.patchMac ?? []);
      mac[0] = (mac[0] ?? 0) ^ 1;
      version = this.account.storeUnchecked(name, { ...patch, patchMac: mac });
    } else version = await this.account.accept(name, patch, state.version);
    this.server.appState.notify(this.phone.phoneNumber, name, version);
    return version;
  }

  /** The entry set under `index` now, if any. */
  entry(...index: string[]): AppStateEntry | undefined {
    return this.account.entries.get(JSON.stringify(index));
  }

  /** The account's display name as its app state has it (set by the phone or a companion). */
  pushName(): string | undefined {
    return this.entry("setting_pushName")?.value.pushNameSetting?.name ?? undefined;
  }

  /** What the phone shows for a chat. */
  chat(jid: string): ChatAppState {
    const mute = this.entry("mute", jid)?.value.muteAction;
    const labels = [...this.account.entries.values()]
      .filter(
        ({ index, value }) =>
          index[0] === "label_jid" && index[2] === jid && value.labelAssociationAction?.labeled,
      )
      .map(({ index }) => index[1] ?? "");
    return {
      archived: this.entry("archive", jid)?.value.archiveChatAction?.archived === true,
      pinned: this.entry("pin_v1", jid)?.value.pinAction?.pinned === true,
      mutedUntil: mute?.muted ? Number(mute.muteEndTimestamp ?? -1) : null,
      labels,
    };
  }

  /** Whether a message is starred on the phone. */
  starred(chat: string, message: { id: string; fromMe: boolean }): boolean {
    return (
      this.entry("star", chat, message.id, message.fromMe ? "1" : "0", "0")?.value.starAction?.starred ===
      true
    );
  }

  /** The account's labels by id (deleted ones left out). */
  labels(): Map<string, { name: string; color: number }> {
    const labels = new Map<string, { name: string; color: number }>();
    for (const { index, value } of this.account.entries.values()) {
      const edit = value.labelEditAction;
      if (index[0] !== "label_edit" || !edit || edit.deleted) continue;
      labels.set(index[1] ?? "", { name: edit.name ?? "", color: edit.color ?? 0 });
    }
    return labels;
  }
}

/** Baileys uploads its one-time pre-keys right after `success`; the first message needs one. */
async function waitForPreKeys(device: LinkedDevice, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (device.preKeys.size === 0) {
    if (Date.now() > deadline) throw new Error(`${device.jid} uploaded no pre-keys`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
