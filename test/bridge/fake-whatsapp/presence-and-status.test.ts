/**
 * Through the bridge's session code on real Baileys, against the fake WhatsApp: the `availability`
 * operation (the session's `alwaysOnline`) reaches WhatsApp as `<presence type="available">` (and
 * `unavailable`), also when it was asked for before Baileys knew the account's push name; a status
 * post reaches the phones of the audience it lists.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { PhoneDevice } from "../../fake-whatsapp/history.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "p1";
const PHONE = "4915550007777";

describe("presence and status through the bridge on real Baileys", () => {
  it("availability: `available` once the account's name is known (asked before it was), `unavailable` when off", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    // Asked before Baileys knows the account's push name: it cannot go out yet (WhatsApp wants the
    // name with it), and must when the name arrives.
    expect(await edge.command(SESSION, "wa", { op: "availability", online: true })).toMatchObject({
      ok: true,
    });
    // The phone sends something (here the history notification): WhatsApp stamps the account's name.
    await new PhoneDevice(whatsapp, PHONE, "Acme Support").sendHistory(device, []);
    const online = await waitFor(
      () => whatsapp.presencesFrom(device.jid).find((presence) => presence.type === "available"),
      "presence available",
      10_000,
    );
    expect(online).toEqual({ type: "available", name: "Acme Support" });

    expect(await edge.command(SESSION, "wa", { op: "availability", online: false })).toMatchObject({
      ok: true,
    });
    await waitFor(
      () => whatsapp.presencesFrom(device.jid).at(-1)?.type === "unavailable",
      "presence unavailable",
      10_000,
    );
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("a status post reaches each phone in its audience, and nobody else", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    const viewer = new FakeContact(whatsapp, "4915550004444", "Viewer");
    const outsider = new FakeContact(whatsapp, "4915550005555", "Outsider");
    // A contact writes first: Baileys holds its events until it handles an incoming stanza.
    const hello = await viewer.sendText(device, "hi");
    await waitFor(
      () => storedEvents(edge, SESSION, "message").some(({ message }) => message.id === hello.id),
      "the contact's message",
      10_000,
    );
    const sent = await edge.command(SESSION, "wa", {
      op: "send",
      to: "status@broadcast",
      messageId: "STATUS-0000000001",
      content: { type: "text", text: "Open till late" },
      statusJidList: [viewer.jid],
    });
    expect(sent).toMatchObject({ ok: true });
    const received = await waitFor(
      () => viewer.inbox.find((message) => message.id === "STATUS-0000000001"),
      "the viewer's status",
      10_000,
    );
    expect(received).toMatchObject({ chat: "status@broadcast", text: "Open till late" });
    expect(viewer.device.failures).toEqual([]);
    expect(outsider.inbox).toEqual([]);
  }, 60_000);
});
