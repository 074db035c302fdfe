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

/**
 * Message ids Baileys has emitted in `messages.upsert`. A receipt that arrives while the sent message is
 * still in Baileys' event buffer is folded into it instead of being emitted, so tests wait for this first.
 */
function emitted(client: ClientRecord): Set<string> {
  const ids = new Set<string>();
  client.sock.ev.on("messages.upsert", ({ messages }) => {
    for (const message of messages) if (message.key.id) ids.add(message.key.id);
  });
  return ids;
}

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

  it("a contact with a linked device of its own gets the message on both devices, each under its own session", async () => {
    const { server, client } = await linkedClient();
    const contact = new FakeContact(server, "15559990009", "Ivan", { linkedDevices: [4] });
    const sent = await client.sock.sendMessage(contact.jid, { text: "to all your devices" });
    const devices = [...contact.account.devices.values()];
    await waitFor(() => devices.every((device) => device.inbox.length === 1), "both devices", 10_000);
    for (const device of devices) {
      expect(device.failures).toEqual([]);
      expect(device.inbox[0]).toMatchObject({
        id: sent?.key.id,
        text: "to all your devices",
        types: ["pkmsg"],
      });
    }
  }, 30_000);

  it("a conversation: the contact's reply after ours comes on the established session (msg), and its receipts reach Baileys", async () => {
    const { server, device, client } = await linkedClient();
    const texts: string[] = [];
    const updates: string[] = [];
    client.sock.ev.on("messages.upsert", ({ messages }) => {
      for (const message of messages) {
        const text = message.message?.conversation ?? message.message?.extendedTextMessage?.text;
        if (text && !message.key.fromMe) texts.push(text);
      }
    });
    client.sock.ev.on("messages.update", (list) => {
      for (const { key, update } of list) updates.push(`${key.remoteJid} ${key.id} ${update.status}`);
    });
    const upserted = emitted(client);
    const contact = new FakeContact(server, "15559990001", "Carol");
    const first = await contact.sendText(device, "hi, are you there?");
    await waitFor(() => texts.length === 1, "the first message", 10_000);
    const reply = await client.sock.sendMessage(contact.jid, { text: "yes" });
    await waitFor(() => contact.inbox.length === 1, "our reply decrypted", 10_000);
    const second = await contact.sendText(device, "great");
    await waitFor(() => texts.length === 2, "the second message", 10_000);
    expect([first.type, second.type]).toEqual(["pkmsg", "msg"]);
    expect(texts).toEqual(["hi, are you there?", "great"]);

    const received = contact.inbox[0];
    if (!received) throw new Error("nothing received");
    await waitFor(() => upserted.has(received.id), "the sent message emitted");
    contact.sendReceipt(received, { via: "lid" });
    contact.sendReceipt(received, { via: "pn", type: "read" });
    await waitFor(() => updates.length === 2, "two status updates", 10_000);
    // Delivered (3) from the contact's LID, read (4) from its number: the LID one names no phone number.
    expect(updates).toEqual([`${contact.lid} ${reply?.key.id} 3`, `${contact.jid} ${reply?.key.id} 4`]);
  }, 30_000);

  it("groups: members' sender-key messages reach Baileys; its group sends are decrypted by every member; receipts per participant", async () => {
    const { server, phone, client } = await linkedClient();
    const inbound: string[] = [];
    const receipts: string[] = [];
    client.sock.ev.on("messages.upsert", ({ messages }) => {
      for (const message of messages) {
        const text = message.message?.conversation ?? message.message?.extendedTextMessage?.text;
        if (text && !message.key.fromMe) {
          inbound.push(`${message.key.remoteJid} ${message.key.participantAlt} ${text}`);
        }
      }
    });
    client.sock.ev.on("message-receipt.update", (list) => {
      for (const { key, receipt } of list) {
        const kinds = [receipt.receiptTimestamp && "delivered", receipt.readTimestamp && "read"].filter(
          Boolean,
        );
        receipts.push(`${key.id} ${receipt.userJid} ${kinds.join("+")}`);
      }
    });
    const upserted = emitted(client);
    const dave = new FakeContact(server, "15559990002", "Dave");
    const erin = new FakeContact(server, "15559990003", "Erin");
    const group = server.messaging.createGroup("Team", dave.account, [erin.account, phone.account]);

    await dave.sendGroupText(group, "hello team");
    await dave.sendGroupText(group, "second, on the same sender key");
    await erin.sendGroupText(group, "hi from Erin");
    await waitFor(() => inbound.length === 3, "three group messages", 10_000);
    expect(inbound).toEqual([
      `${group.jid} ${dave.jid} hello team`,
      `${group.jid} ${dave.jid} second, on the same sender key`,
      `${group.jid} ${erin.jid} hi from Erin`,
    ]);

    const first = await client.sock.sendMessage(group.jid, { text: "hello from Baileys" });
    const second = await client.sock.sendMessage(group.jid, { text: "again" });
    // The sender key goes to each device inside a one-to-one message: on the session Dave and Erin
    // opened by writing first (msg), on a new one from a fetched bundle for the phone (pkmsg).
    const members = [
      { device: dave.device, carrier: "msg" },
      { device: erin.device, carrier: "msg" },
      { device: phone.device, carrier: "pkmsg" },
    ];
    await waitFor(
      () => members.every(({ device }) => device.inbox.length === 2),
      "every member got both",
      10_000,
    );
    for (const { device, carrier } of members) {
      expect(device.failures).toEqual([]);
      expect(device.inbox.map((message) => [message.id, message.chat, message.text, message.types])).toEqual([
        [first?.key.id, group.jid, "hello from Baileys", [carrier, "skmsg"]],
        [second?.key.id, group.jid, "again", ["skmsg"]],
      ]);
    }

    const [received] = dave.inbox;
    if (!received) throw new Error("nothing received");
    await waitFor(() => upserted.has(received.id), "the sent message emitted");
    dave.sendReceipt(received);
    dave.sendReceipt(received, { type: "read" });
    await waitFor(() => receipts.some((receipt) => receipt.endsWith("read")), "the read receipt", 10_000);
    // Baileys' event buffer may merge the two into one entry for the participant.
    expect(receipts.join(" ")).toMatch(
      new RegExp(
        `^(${first?.key.id} ${dave.lid} delivered )?${first?.key.id} ${dave.lid} (delivered\\+)?read$`,
      ),
    );
  }, 30_000);
});
