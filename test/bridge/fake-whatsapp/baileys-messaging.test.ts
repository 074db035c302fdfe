/**
 * Real Baileys (makeWASocket) sending through the fake WhatsApp: device lists, key fetches, the
 * fan-out to the contact and the account's own phone, replies on the established session, receipts,
 * and groups under sender keys.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { waitFor } from "../support/wait.ts";
import { type ClientRecord, connectBaileys, type MemoryAuth, memoryAuth } from "./baileys-client.ts";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function linkedClient() {
  const log = process.env.FAKE_WA_LOG ? (line: string) => console.log(`[fake-wa] ${line}`) : undefined;
  const server = await FakeWhatsApp.start(log ? { log } : {});
  cleanup.push(() => server.close());
  const phone = new FakePhone(server, "15550007777");
  const auth: MemoryAuth = memoryAuth();
  const pairing = connectBaileys(server.url, auth);
  cleanup.push(() => pairing.sock.end(undefined));
  const device = await phone.scan(await waitFor(() => pairing.qrs[0], "a QR", 10_000));
  await waitFor(() => pairing.closeCode, "the restart after pairing", 10_000);
  const client: ClientRecord = connectBaileys(server.url, auth);
  cleanup.push(() => client.sock.end(undefined));
  await waitFor(() => client.states.includes("open"), "open", 10_000);
  return { server, phone, device, client };
}

describe("real Baileys sending through the fake WhatsApp", () => {
  it("a text to a contact is decrypted by the contact and, as a sent-message copy, by the phone", async () => {
    const { server, phone, client } = await linkedClient();
    const contact = new FakeContact(server, "15559990000", "Bob");
    const sent = await client.sock.sendMessage(contact.jid, { text: "hello Bob" });
    await waitFor(() => contact.inbox.length === 1, "the contact decrypted it", 10_000);
    expect(contact.device.failures).toEqual([]);
    expect(contact.inbox[0]).toMatchObject({ id: sent?.key.id, types: ["pkmsg"] });
    expect(contact.inbox[0]?.text).toBe("hello Bob");
    await waitFor(() => phone.device.inbox.length === 1, "the phone's copy", 10_000);
    expect(phone.device.inbox[0]?.message.deviceSentMessage).toMatchObject({
      destinationJid: contact.jid,
      message: { extendedTextMessage: { text: "hello Bob" } },
    });
  }, 30_000);
});
