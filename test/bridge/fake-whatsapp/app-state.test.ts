/**
 * App-state sync through the bridge on real Baileys against the fake WhatsApp: the phone shares its
 * app-state keys with the new companion (APP_STATE_SYNC_KEY_SHARE); the edge's archive, mute, pin,
 * star and label operations go up as patches the phone decodes; the phone's own changes come down as
 * network events the edge stores; a patch whose MAC was tampered with is refused by Baileys.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

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
    expect(phone.appState.account.refusals).toEqual([]);
  });
});
