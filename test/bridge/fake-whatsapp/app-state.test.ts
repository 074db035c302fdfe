/**
 * App-state sync through the bridge on real Baileys against the fake WhatsApp: the phone shares its
 * app-state keys with the new companion (APP_STATE_SYNC_KEY_SHARE); the edge's archive, mute, pin,
 * star, label and profile-name operations go up as patches the phone decodes; the phone's own changes come down as
 * network events the edge stores, also those made while the bridge was away; a patch whose MAC was
 * tampered with is refused by Baileys; a patch WhatsApp refuses as stale fails the operation with 409.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, restartBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "as1";
const stored = <K extends SessionEvent["kind"]>(edge: FakeEdge, kind: K) => storedEvents(edge, SESSION, kind);

/** The companion's copy of the account's key id, as the edge stores its creds. */
const keyIdOf = (edge: FakeEdge): unknown =>
  (edge.session(SESSION).auth.creds as { myAppStateKeyId?: unknown } | null)?.myAppStateKeyId;

/** A linked bridge that has the account's keys, and a contact that wrote first (Baileys flushes then). */
async function withKeys() {
  const linked = await linkedBridge(cleanup, { session: SESSION, appState: true });
  const { whatsapp, edge, device, phone } = linked;
  await waitFor(() => keyIdOf(edge), "the app-state key share", 15_000);
  expect(keyIdOf(edge)).toBe(phone.appState.key.id.toString("base64"));
  const alice = new FakeContact(whatsapp, "4915550001111", "Alice");
  const hello = await alice.sendText(device, "hello");
  const [message] = await waitFor(
    () => stored(edge, "message").length > 0 && stored(edge, "message"),
    "alice's message",
    10_000,
  );
  // The key share is a protocol message: it is no chat message of the account's.
  expect(stored(edge, "message").map((event) => event.message.id)).toEqual([hello.id]);
  return { ...linked, alice, hello, ref: { ...message?.message, content: message?.message.content } };
}

describe("app-state sync through the bridge on real Baileys against the fake WhatsApp", () => {
  it("archive, mute, pin and star from the edge reach the phone, which decodes each patch", async () => {
    const { edge, phone, alice, ref } = await withKeys();
    const wa = (args: Record<string, unknown>) => edge.command(SESSION, "wa", args as never);
    const lastMessage = {
      id: ref.id,
      chat: ref.chat,
      fromMe: ref.fromMe,
      sender: ref.sender,
      timestamp: ref.timestamp,
      content: ref.content,
    };

    expect(await wa({ op: "chat.modify", chat: alice.jid, action: "archive", lastMessage })).toMatchObject({
      ok: true,
    });
    expect(phone.appState.chat(alice.jid).archived).toBe(true);

    const until = Date.now() + 3_600_000;
    expect(await wa({ op: "chat.modify", chat: alice.jid, action: "mute", muteUntil: until })).toMatchObject({
      ok: true,
    });
    expect(await wa({ op: "chat.modify", chat: alice.jid, action: "pin" })).toMatchObject({ ok: true });
    expect(await wa({ op: "star", target: lastMessage, star: true })).toMatchObject({ ok: true });
    expect(phone.appState.chat(alice.jid)).toMatchObject({ archived: true, pinned: true, mutedUntil: until });
    expect(phone.appState.starred(alice.jid, { id: ref.id ?? "", fromMe: false })).toBe(true);

    expect(await wa({ op: "chat.modify", chat: alice.jid, action: "unarchive", lastMessage })).toMatchObject({
      ok: true,
    });
    expect(await wa({ op: "chat.modify", chat: alice.jid, action: "unmute" })).toMatchObject({ ok: true });
    expect(phone.appState.chat(alice.jid)).toMatchObject({ archived: false, pinned: true, mutedUntil: null });

    const vip = { id: "3", name: "VIP", color: 5, deleted: false };
    expect(await wa({ op: "label.edit", label: vip })).toMatchObject({ ok: true });
    expect(await wa({ op: "label.chat", chat: alice.jid, labelId: "3", labeled: true })).toMatchObject({
      ok: true,
    });
    expect(phone.appState.labels().get("3")).toEqual({ name: "VIP", color: 5 });
    expect(phone.appState.chat(alice.jid).labels).toEqual(["3"]);
    expect(await wa({ op: "label.edit", label: { ...vip, deleted: true } })).toMatchObject({ ok: true });
    expect(phone.appState.labels().has("3")).toBe(false);
    expect(phone.appState.account.refusals).toEqual([]);
  });

  it("archive, mute, pin, star and labels made on the phone reach the edge as network events", async () => {
    const { edge, phone, alice, hello } = await withKeys();
    await phone.appState.archive(alice.jid);
    await phone.appState.pin(alice.jid);
    const until = Date.now() + 3_600_000;
    await phone.appState.mute(alice.jid, until);
    await phone.appState.star(alice.jid, { id: hello.id, fromMe: false });
    await phone.appState.editLabel({ id: "7", name: "VIP", color: 3 });
    await phone.appState.labelChat(alice.jid, "7");

    await waitFor(() => stored(edge, "label.association").length > 0, "the label on the chat", 15_000);
    // One resync may carry several patches: Baileys merges a chat's changes into one update.
    const changes = stored(edge, "chat.update").filter(({ jid }) => jid === alice.jid);
    expect(Object.assign({}, ...changes)).toEqual({
      kind: "chat.update",
      jid: alice.jid,
      archived: true,
      pinned: true,
      mutedUntil: until,
    });
    expect(stored(edge, "message.starred")).toEqual([
      { kind: "message.starred", id: hello.id, chat: alice.jid, fromMe: false, starred: true },
    ]);
    expect(stored(edge, "label.edit")).toEqual([
      { kind: "label.edit", label: { id: "7", name: "VIP", color: 3, deleted: false } },
    ]);
    expect(stored(edge, "label.association")).toEqual([
      { kind: "label.association", labelId: "7", chat: alice.jid, labeled: true },
    ]);

    await phone.appState.archive(alice.jid, false);
    await phone.appState.labelChat(alice.jid, "7", false);
    await waitFor(() => stored(edge, "label.association").length === 2, "the label taken off", 15_000);
    expect(stored(edge, "chat.update").at(-1)).toMatchObject({ jid: alice.jid, archived: false });
  });

  it("a profile name set from the edge reaches the phone as the push-name setting; the edge keeps it as `me`", async () => {
    const { edge, phone } = await withKeys();
    const named = await edge.command(SESSION, "wa", { op: "profile.name", name: "Acme Support" });
    expect(named).toMatchObject({ ok: true });
    expect(phone.appState.pushName()).toBe("Acme Support");
    expect(phone.appState.account.refusals).toEqual([]);
    // Baileys applies its own patch too (emitOwnEvents): the session's own name follows.
    const [me] = await waitFor(
      () => stored(edge, "me").length > 0 && stored(edge, "me"),
      "the new name",
      10_000,
    );
    expect(me).toEqual({ kind: "me", me: { id: expect.any(String), name: "Acme Support" } });
  });

  it("a push name changed on the phone reaches the edge as the session's own name (`me`), once a change", async () => {
    const { edge, phone, device } = await withKeys();
    await phone.appState.setPushName("Front Desk");
    await waitFor(() => stored(edge, "me").length > 0, "the phone's name", 15_000);
    await phone.appState.setPushName("Night Desk");
    await waitFor(() => stored(edge, "me").length > 1, "the second name", 15_000);
    expect(stored(edge, "me").map(({ me }) => me)).toEqual([
      { id: device.jid, name: "Front Desk" },
      { id: device.jid, name: "Night Desk" },
    ]);
  });

  it("a patch whose MAC was tampered with is refused by Baileys; the next good one still arrives", async () => {
    const { edge, phone, alice } = await withKeys();
    await phone.appState.change({ archive: true, lastMessages: [] }, alice.jid, { tamper: true });
    await phone.appState.pin(alice.jid);
    await waitFor(() => stored(edge, "chat.update").length > 0, "the pin", 15_000);
    expect(stored(edge, "chat.update").map(({ kind, jid, ...change }) => change)).toEqual([{ pinned: true }]);
  });

  it("a patch WhatsApp refuses as stale (the phone changed the collection meanwhile) fails 409; the retry goes through", async () => {
    const { whatsapp, edge, phone, alice } = await withKeys();
    const bob = "4915550002222@s.whatsapp.net";
    // The phone pins another chat right after the server answered the companion's resync of
    // regular_low, before its patch arrives: the race WhatsApp answers with 409.
    const answer = whatsapp.appState.answer.bind(whatsapp.appState);
    let raced = false;
    whatsapp.appState.answer = async (device, iq) => {
      const answered = await answer(device, iq);
      const asks = JSON.stringify(iq).includes("regular_low") && !JSON.stringify(iq).includes('"patch"');
      if (asks && !raced) {
        raced = true;
        await phone.appState.pin(bob);
      }
      return answered;
    };
    const pin = () => edge.command(SESSION, "wa", { op: "chat.modify", chat: alice.jid, action: "pin" });

    const refused = await pin();
    expect(refused).toMatchObject({ ok: false, status: 409 });
    expect(phone.appState.account.refusals.map(({ code }) => code)).toEqual([409]);
    expect(phone.appState.chat(alice.jid).pinned).toBe(false);

    expect(await pin()).toMatchObject({ ok: true });
    expect(phone.appState.chat(alice.jid).pinned).toBe(true);
    expect(phone.appState.chat(bob).pinned).toBe(true);
  });

  it("what the phone changed while the bridge was away arrives when it is back (server_sync kept for the device)", async () => {
    const { whatsapp, edge, phone, alice, bridge, device } = await withKeys();
    await bridge.fleet.shutdown();
    await waitFor(() => !whatsapp.isConnected(device.jid), "the bridge gone", 10_000);
    await phone.appState.archive(alice.jid);
    await phone.appState.editLabel({ id: "8", name: "Later", color: 1 });
    await restartBridge(cleanup, { session: SESSION, edge, whatsapp }, bridge);
    await waitFor(
      () => stored(edge, "chat.update").length > 0 && stored(edge, "label.edit").length > 0,
      "the changes made while away",
      15_000,
    );
    expect(stored(edge, "chat.update")).toEqual([{ kind: "chat.update", jid: alice.jid, archived: true }]);
    expect(stored(edge, "label.edit")).toEqual([
      { kind: "label.edit", label: { id: "8", name: "Later", color: 1, deleted: false } },
    ]);
  });

  it("before the phone has shared its keys, a change answers 400 and reaches nobody", async () => {
    const { edge, phone } = await linkedBridge(cleanup, { session: SESSION });
    const pin = await edge.command(SESSION, "wa", {
      op: "chat.modify",
      chat: "4915550001111@s.whatsapp.net",
      action: "pin",
    });
    expect(pin).toMatchObject({ ok: false, status: 400, error: "App state key not present!" });
    expect(phone.appState.account.entries.size).toBe(0);
  });
});
