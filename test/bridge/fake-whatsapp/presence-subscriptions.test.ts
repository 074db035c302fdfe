/**
 * Contacts' presence through the bridge's session code on real Baileys, against the fake WhatsApp: the
 * `presence.subscribe` operation reaches WhatsApp as `<presence type=subscribe to>`, and from then on
 * the contact's coming and going (`<presence>`, with last seen) and typing or recording (`<chatstate>`)
 * reach the edge as `presence` events — for the contacts subscribed to, and only those. Presence from a
 * LID the account knows the number of is reported under the number.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "s1";
const PHONE = "4915550005656";

describe("presence subscriptions on real Baileys against the fake WhatsApp", () => {
  it("after subscribing, the contact's typing, recording, online and last seen arrive; an unsubscribed contact's do not", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    const followed = new FakeContact(whatsapp, "4915550001212", "Followed");
    const other = new FakeContact(whatsapp, "4915550001313", "Other");
    const presences = () => storedEvents(edge, SESSION, "presence");

    expect(await edge.command(SESSION, "wa", { op: "presence.subscribe", jid: followed.jid })).toMatchObject({
      ok: true,
    });
    await waitFor(
      () => whatsapp.presence.subscriptions.some((s) => s.companion === device.jid && s.to === followed.jid),
      "the subscription at WhatsApp",
      10_000,
    );

    whatsapp.presence.chatState(other.account, "composing");
    whatsapp.presence.chatState(followed.account, "composing");
    whatsapp.presence.chatState(followed.account, "recording");
    whatsapp.presence.online(followed.account);
    const lastSeen = Math.floor(Date.now() / 1000) - 60;
    whatsapp.presence.offline(followed.account, lastSeen);
    await waitFor(() => presences().length >= 4, "four presence events", 10_000);
    const about = { kind: "presence", chat: followed.jid, participant: followed.jid };
    expect(presences()).toEqual([
      { ...about, presence: "composing" },
      { ...about, presence: "recording" },
      { ...about, presence: "available" },
      { ...about, presence: "unavailable", lastSeen: lastSeen * 1000 },
    ]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("a contact followed by LID is reported under its number once the account knows it", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    const followed = new FakeContact(whatsapp, "4915550001414", "By LID");
    // Its message carries its number beside its LID: Baileys learns the pair.
    const hello = await followed.sendText(device, "hi");
    await waitFor(
      () => storedEvents(edge, SESSION, "message").some(({ message }) => message.id === hello.id),
      "the contact's message",
      10_000,
    );
    expect(await edge.command(SESSION, "wa", { op: "presence.subscribe", jid: followed.lid })).toMatchObject({
      ok: true,
    });
    await waitFor(
      () => whatsapp.presence.subscriptions.some((s) => s.to === followed.lid),
      "the subscription at WhatsApp",
      10_000,
    );
    whatsapp.presence.chatState(followed.account, "composing");
    const [event] = await waitFor(
      () => storedEvents(edge, SESSION, "presence").length > 0 && storedEvents(edge, SESSION, "presence"),
      "the presence event",
      10_000,
    );
    expect(event).toEqual({
      kind: "presence",
      chat: followed.jid,
      participant: followed.jid,
      presence: "composing",
    });
  }, 60_000);
});
