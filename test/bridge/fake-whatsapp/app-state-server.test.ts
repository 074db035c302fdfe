/**
 * The fake WhatsApp's app-state collections as a companion sees them over `iq w:sync:app:state`: a patch
 * on the current version with MACs under the account's key is accepted (version + 1) and served to
 * whoever asks after the old version; one on a stale version is refused 409, one with a bad MAC or under
 * an unknown key 400, in the collection, as WhatsApp answers. Patches are Baileys' own encoding.
 */
import { randomBytes } from "node:crypto";
import {
  type BinaryNode,
  chatModificationToAppPatch,
  encodeSyncdPatch,
  extractSyncdPatches,
  getBinaryNodeChild,
  type LTHashState,
  newLTHashState,
  proto,
} from "@whiskeysockets/baileys";
import { afterEach, describe, expect, it } from "vitest";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";

let whatsapp: FakeWhatsApp | undefined;
afterEach(async () => {
  await whatsapp?.close();
  whatsapp = undefined;
});

const CHAT = "4915550001111@s.whatsapp.net";
const COMPANION = { jid: "4915550009999:1@s.whatsapp.net" };

function syncIq(collection: BinaryNode): BinaryNode {
  return {
    tag: "iq",
    attrs: { type: "set", xmlns: "w:sync:app:state" },
    content: [{ tag: "sync", attrs: {}, content: [collection] }],
  };
}

/** A companion's patch node, as Baileys' appPatch sends it (version = the one it is built on). */
function patchNode(patch: proto.ISyncdPatch, fromVersion: number): BinaryNode {
  return {
    tag: "collection",
    attrs: { name: "regular_low", version: String(fromVersion), return_snapshot: "false" },
    content: [{ tag: "patch", attrs: {}, content: proto.SyncdPatch.encode(patch).finish() }],
  };
}

async function world() {
  whatsapp = await FakeWhatsApp.start();
  const phone = new FakePhone(whatsapp, "4915550009999");
  const server = whatsapp.appState;
  const key = phone.appState.key;
  const encode = (archived: boolean, state: LTHashState, keyId = key.id.toString("base64")) =>
    encodeSyncdPatch(
      chatModificationToAppPatch({ archive: archived, lastMessages: [] }, CHAT),
      keyId,
      state,
      phone.appState.account.keyFor,
    );
  const send = async (collection: BinaryNode) => {
    const [sync] = await server.answer(COMPANION, syncIq(collection));
    return getBinaryNodeChild(sync, "collection");
  };
  return { phone, encode, send };
}

describe("the fake WhatsApp's app-state collections", () => {
  it("accepts a patch on the current version and serves it to a device asking from the version before", async () => {
    const { phone, encode, send } = await world();
    const { patch, state } = await encode(true, newLTHashState());
    expect((await send(patchNode(patch, 0)))?.attrs).toEqual({ name: "regular_low", version: "1" });
    expect(phone.appState.chat(CHAT).archived).toBe(true);

    const asked = await send({ tag: "collection", attrs: { name: "regular_low", version: "0" } });
    const served = await extractSyncdPatches(
      { tag: "iq", attrs: {}, content: [{ tag: "sync", attrs: {}, content: asked ? [asked] : [] }] },
      {},
    );
    expect(served.regular_low?.patches.map((p) => Number(p.version?.version))).toEqual([1]);
    expect(Buffer.from(served.regular_low?.patches[0]?.patchMac ?? [])).toEqual(
      Buffer.from(patch.patchMac ?? []),
    );
    expect(state.version).toBe(1);
  });

  it("refuses a stale version (409), a bad MAC or an unknown key (400), and keeps the state", async () => {
    const { phone, encode, send } = await world();
    const first = await encode(true, newLTHashState());
    await send(patchNode(first.patch, 0));

    // Built on version 0 again: another device moved the collection on meanwhile.
    const stale = await encode(false, newLTHashState());
    const conflict = await send(patchNode(stale.patch, 0));
    expect(conflict?.attrs).toEqual({ name: "regular_low", type: "error" });
    expect(getBinaryNodeChild(conflict, "error")?.attrs.code).toBe("409");

    const next = await encode(false, first.state);
    const tampered = Buffer.from(next.patch.patchMac ?? []);
    tampered[3] = (tampered[3] ?? 0) ^ 0xff;
    const badMac = await send(patchNode({ ...next.patch, patchMac: tampered }, 1));
    expect(getBinaryNodeChild(badMac, "error")?.attrs.code).toBe("400");

    const foreignKey = randomBytes(6).toString("base64");
    phone.appState.account.keys.set(foreignKey, {
      id: Buffer.from(foreignKey, "base64"),
      data: randomBytes(32),
      timestamp: 0,
    });
    const underForeignKey = await encode(false, first.state, foreignKey);
    phone.appState.account.keys.delete(foreignKey);
    const unknownKey = await send(patchNode(underForeignKey.patch, 1));
    expect(getBinaryNodeChild(unknownKey, "error")?.attrs.code).toBe("400");

    expect(phone.appState.account.refusals.map((refusal) => refusal.code)).toEqual([409, 400, 400]);
    expect(phone.appState.chat(CHAT).archived).toBe(true);
    expect(phone.appState.account.collection("regular_low").state.version).toBe(1);

    // The same change on the current version goes through.
    expect((await send(patchNode(next.patch, 1)))?.attrs).toEqual({ name: "regular_low", version: "2" });
    expect(phone.appState.chat(CHAT).archived).toBe(false);
  });
});
