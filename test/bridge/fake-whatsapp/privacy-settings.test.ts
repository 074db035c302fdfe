/**
 * Real Baileys (makeWASocket) and the fake WhatsApp's privacy settings: fetchPrivacySettings gets the
 * account's categories (WhatsApp's defaults), a change Baileys makes (privacyQuery) is stored and
 * answered back, and from then on its read receipts follow it (`read-self` with readreceipts `none`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { DEFAULT_PRIVACY } from "../../fake-whatsapp/privacy.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { waitFor } from "../support/wait.ts";
import { connectBaileys, memoryAuth } from "./baileys-client.ts";

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const NUMBER = "15550008181";

async function linkedClient() {
  const server = await FakeWhatsApp.start();
  cleanup.push(() => server.close());
  const auth = memoryAuth();
  const pairing = connectBaileys(server.url, auth);
  cleanup.push(() => pairing.sock.end(undefined));
  const device = await new FakePhone(server, NUMBER).scan(
    await waitFor(() => pairing.qrs[0], "a QR", 10_000),
  );
  await waitFor(() => pairing.closeCode, "the restart after pairing", 10_000);
  const client = connectBaileys(server.url, auth);
  cleanup.push(() => client.sock.end(undefined));
  await waitFor(() => client.states.includes("open"), "open", 10_000);
  return { server, device, sock: client.sock };
}

describe("privacy settings on real Baileys against the fake WhatsApp", () => {
  it("reads the account's settings, stores a change and answers it back; read receipts follow it", async () => {
    const { server, device, sock } = await linkedClient();
    expect(await sock.fetchPrivacySettings(true)).toEqual(DEFAULT_PRIVACY);

    await sock.updateReadReceiptsPrivacy("none");
    await sock.updateLastSeenPrivacy("contacts");
    expect(server.privacy.changes).toEqual([
      { account: NUMBER, name: "readreceipts", value: "none" },
      { account: NUMBER, name: "last", value: "contacts" },
    ]);
    expect(await sock.fetchPrivacySettings(true)).toEqual({
      ...DEFAULT_PRIVACY,
      readreceipts: "none",
      last: "contacts",
    });

    const contact = new FakeContact(server, "15550008282", "Contact");
    const sent = await contact.sendText(device, "hello");
    await sock.readMessages([{ remoteJid: contact.jid, id: sent.id, fromMe: false }]);
    const receipt = await waitFor(
      () => server.received.find(({ node }) => node.tag === "receipt" && node.attrs.type?.startsWith("read")),
      "the read receipt",
      10_000,
    );
    expect(receipt.node.attrs).toMatchObject({ id: sent.id, type: "read-self" });
  }, 60_000);
});
