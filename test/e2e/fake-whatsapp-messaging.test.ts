// `npm start` with real Baileys (no SIMULATOR) against the protocol-level fake WhatsApp
// (test/fake-whatsapp/, WA_WEBSOCKET_URL): the QR from the API is scanned by a fake phone; a fake
// contact's Signal-encrypted text arrives as a `message.received` webhook; a text sent through the API
// is decrypted by the contact; its delivered (from its LID) and read receipts move the stored message to
// DELIVERED and READ (`message.status` webhooks and the chat history).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../fake-whatsapp/server.ts";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type Envelope, jidPath } from "../support/messaging.ts";
import { createWebhook, payloadOf, type Receiver, startReceiver } from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";

let whatsapp: FakeWhatsApp;
let stack: Stack;
let api: ApiClient;
let receiver: Receiver;

beforeAll(async () => {
  whatsapp = await FakeWhatsApp.start();
  receiver = await startReceiver();
  stack = await startStack({ env: { SIMULATOR: "0", WA_WEBSOCKET_URL: whatsapp.url } });
  api = await adminClient(stack.baseUrl);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.stop();
  await whatsapp?.close();
});

async function events(sid: string, event: string) {
  return (await receiver.received(`/${sid}`))
    .map(payloadOf)
    .filter((payload) => payload.event === event)
    .map((payload) => payload.data);
}

describe("the real bridge on Baileys against the fake WhatsApp", () => {
  it("QR → phone scans → connected; a contact's text is a webhook; an API send is decrypted; its receipts become statuses", async () => {
    const sid = `fakewa-${Math.random().toString(36).slice(2, 8)}`;
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    await createWebhook(api, sid, {
      name: "messages",
      url: receiver.url(`/${sid}`),
      events: ["message.received", "message.status"],
    });
    expect((await api.call("POST", `/api/sessions/${sid}/start`)).status).toBe(200);

    const qr = await eventually(
      async () => {
        const res = await api.call<{ qr: string }>("GET", `/api/sessions/${sid}/qr`);
        return res.status === 200 ? res.body.qr : undefined;
      },
      30_000,
      "a QR from real Baileys",
    );
    const phone = new FakePhone(whatsapp, "4915550008888");
    const device = await phone.scan(qr);
    await eventually(
      async () => {
        const detail = (await api.call<Envelope<{ state: string }>>("GET", `/api/sessions/${sid}`)).body.data;
        return detail.state === "connected" ? detail : undefined;
      },
      30_000,
      "connected",
    );

    const contact = new FakeContact(whatsapp, "4915550001212", "Heidi");
    const inbound = await contact.sendText(device, "hello over real Signal");
    const [received] = await eventually(
      async () => {
        const list = await events(sid, "message.received");
        return list.length > 0 ? list : undefined;
      },
      30_000,
      "the message.received webhook",
    );
    expect(received).toMatchObject({
      id: inbound.id,
      remoteJid: contact.jid,
      sender: contact.jid,
      fromMe: false,
      pushName: "Heidi",
      message: { type: "text", text: "hello over real Signal" },
    });

    const sent = await api.call<Envelope<{ id: string; status: string }>>(
      "POST",
      `/api/messages/${sid}/${jidPath(contact.jid)}/send`,
      { message: { text: "hello Heidi" } },
    );
    expect(sent.status).toBe(200);
    const id = sent.body.data.id;
    const decrypted = await eventually(
      async () => contact.inbox.find((message) => message.id === id),
      30_000,
      "the contact decrypting the API's message",
    );
    expect(decrypted.text).toBe("hello Heidi");

    // Sent right away: Baileys may fold it into the sent message it has not reported yet; the edge
    // announces the moved status either way.
    contact.sendReceipt(decrypted, { via: "lid" });
    await eventually(
      async () => ((await events(sid, "message.status")).length === 1 ? true : undefined),
      30_000,
      "DELIVERED",
    );
    contact.sendReceipt(decrypted, { via: "lid", type: "read" });
    const statuses = await eventually(
      async () => {
        const list = await events(sid, "message.status");
        return list.length === 2 ? list : undefined;
      },
      30_000,
      "READ",
    );
    expect(statuses).toEqual([
      { keyId: id, remoteJid: contact.jid, status: "DELIVERED" },
      { keyId: id, remoteJid: contact.jid, status: "READ" },
    ]);
    const history = await api.call<Envelope<Array<{ id: string; status: string | null }>>>(
      "GET",
      `/api/chat/${sid}/${jidPath(contact.jid)}`,
    );
    expect(history.body.data.find((message) => message.id === id)?.status).toBe("READ");
  }, 180_000);
});
