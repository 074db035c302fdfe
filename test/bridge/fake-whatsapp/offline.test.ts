/**
 * What WhatsApp kept for the device while its bridge was away (issue 28 "notices queue while the line
 * is disconnected", issue 29 "offline messages"), on real Baileys against the fake WhatsApp's offline
 * queue: a contact's message sent while no bridge held the session arrives at the next login as a
 * received (live) message, once; one the old bridge never acknowledged is delivered again.
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

const messagesWith = (edge: FakeEdge, session: string, id: string) =>
  storedEvents(edge, session, "message").filter(
    (event): event is Extract<SessionEvent, { kind: "message" }> => event.message.id === id,
  );

describe("messages WhatsApp kept while the bridge was away", () => {
  it("a contact's text sent while no bridge held the session arrives at the next login, live, once", async () => {
    const world = await linkedBridge(cleanup, { session: "off1", phoneNumber: "4915550004040" });
    const { whatsapp, edge, device } = world;
    const alice = new FakeContact(whatsapp, "4915550004141", "Alice");
    await world.bridge.fleet.shutdown();
    await waitFor(() => !whatsapp.isConnected(device.jid) || undefined, "the device gone", 10_000);

    const away = await alice.sendText(device, "while you were away");
    expect(whatsapp.offline.count(device.jid)).toBe(1);

    await restartBridge(
      cleanup,
      { session: "off1", edge, whatsapp },
      { fleet: { shutdown: async () => {} } },
    );
    const [event] = await waitFor(
      () => messagesWith(edge, "off1", away.id).length > 0 && messagesWith(edge, "off1", away.id),
      "the kept message",
      // Baileys holds events back for a while after a login (its initial sync), then flushes them.
      30_000,
    );
    expect(event).toMatchObject({
      live: true,
      message: { id: away.id, sender: alice.jid, fromMe: false, content: { text: "while you were away" } },
    });
    await waitFor(() => whatsapp.offline.count(device.jid) === 0 || undefined, "acknowledged", 10_000);
    expect(messagesWith(edge, "off1", away.id)).toHaveLength(1);
  }, 60_000);

  it("a message the old bridge read but never acknowledged is delivered to the next one again", async () => {
    const world = await linkedBridge(cleanup, { session: "off2", phoneNumber: "4915550004242" });
    const { whatsapp, edge, device } = world;
    const bob = new FakeContact(whatsapp, "4915550004343", "Bob");
    // The old bridge's receipts never reach the server, as when it dies right after reading.
    whatsapp.offline.ignore(device.jid);
    const unacked = await bob.sendText(device, "did you get this?");
    await waitFor(() => messagesWith(edge, "off2", unacked.id).length > 0 || undefined, "read once", 15_000);
    expect(whatsapp.offline.count(device.jid)).toBe(1);
    whatsapp.offline.hear(device.jid);

    const loginsBefore = whatsapp.logins.length;
    await restartBridge(cleanup, { session: "off2", edge, whatsapp }, world.bridge);
    expect(whatsapp.logins.length).toBe(loginsBefore + 1);
    // Delivered again at the login, and this time acknowledged by the new bridge.
    await waitFor(() => whatsapp.offline.count(device.jid) === 0 || undefined, "acknowledged", 15_000);
    const answers = whatsapp.received
      .filter(({ jid, node }) => jid === device.jid && node.attrs.id === unacked.id)
      .map(({ node }) => `${node.tag}:${node.attrs.type ?? node.attrs.class ?? ""}`);
    // The first bridge's receipt (lost on the way), then the new one's answer to the redelivery.
    expect(answers.length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
