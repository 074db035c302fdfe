/**
 * Read receipts through the bridge's session code on real Baileys, against the fake WhatsApp's privacy
 * settings: Baileys reads the account's `readreceipts` setting (`iq xmlns=privacy`) and marks messages
 * read with `read` (the contact sees blue ticks) when it is `all`, `read-self` (only the account's own
 * devices learn it) when it is `none`. The fake stores a privacy change a companion makes.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Json } from "../../../bridge/src/protocol/seam.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import type { Companion } from "../../fake-whatsapp/directory.ts";
import { receiptsReaching } from "../../fake-whatsapp/privacy.ts";
import type { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import type { FakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "r1";
const PHONE = "4915550008888";

/** The contact writes; the edge stores it and asks the bridge to mark it read (`read`). */
async function contactWritesAndIsRead(whatsapp: FakeWhatsApp, edge: FakeEdge, companion: Companion) {
  const contact = new FakeContact(whatsapp, "4915550003333", "Reader Test");
  const sent = await contact.sendText(companion, "did you see this?");
  const [stored] = await waitFor(
    () => {
      const found = storedEvents(edge, SESSION, "message").filter(({ message }) => message.id === sent.id);
      return found.length > 0 && found;
    },
    "the contact's message",
    10_000,
  );
  const message = stored?.message;
  if (!message) throw new Error("no message");
  const ref = {
    id: message.id,
    chat: message.chat,
    fromMe: message.fromMe,
    sender: message.sender,
    timestamp: message.timestamp,
    content: message.content,
    ...(message.raw !== undefined ? { raw: message.raw } : {}),
  };
  const read = await edge.command(SESSION, "wa", { op: "read", chat: message.chat, targets: [ref as Json] });
  expect(read).toMatchObject({ ok: true });
  return { contact, id: sent.id };
}

describe("read receipts and the account's privacy settings, on real Baileys", () => {
  it("readreceipts `all` (WhatsApp's default): the contact gets a `read` receipt for its message", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    const { contact, id } = await contactWritesAndIsRead(whatsapp, edge, device);
    const reads = await waitFor(
      () => {
        const found = receiptsReaching(
          whatsapp.received,
          contact.account,
          whatsapp.messaging.directory,
        ).filter((receipt) => receipt.type === "read");
        return found.length > 0 && found;
      },
      "a read receipt reaching the contact",
      10_000,
    );
    expect(reads).toEqual([expect.objectContaining({ ids: [id], type: "read", from: device.jid })]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("readreceipts `none`: the read goes out as `read-self`, and the contact gets no read receipt", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, {
      session: SESSION,
      phoneNumber: PHONE,
      prepare: (server) => server.privacy.set(PHONE, "readreceipts", "none"),
    });
    const { contact, id } = await contactWritesAndIsRead(whatsapp, edge, device);
    const own = await waitFor(
      () =>
        whatsapp.received.find(
          ({ jid, node }) => jid === device.jid && node.tag === "receipt" && node.attrs.type === "read-self",
        ),
      "a read-self receipt",
      10_000,
    );
    expect(own.node.attrs.id).toBe(id);
    const reaching = receiptsReaching(whatsapp.received, contact.account, whatsapp.messaging.directory);
    expect(reaching.filter((receipt) => receipt.type === "read")).toEqual([]);
  }, 60_000);
});
