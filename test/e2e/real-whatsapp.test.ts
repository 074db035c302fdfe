// The whole stack (`npm start`: wrangler dev, the real bridge process with real Baileys, no simulator)
// against the protocol-level fake WhatsApp (test/fake-whatsapp/), through the public API only: a QR from
// `GET /qr` that a fake phone scans → Connected with `me`; the history the phone sends on pairing in the
// chats and their history; the groups the account is already in under `GET /groups`; a contact's
// Signal-encrypted message delivered as a `message.received` webhook; the phone unlinking the device
// ends in `logged_out`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { FakeGroups } from "../fake-whatsapp/groups.ts";
import { type HistoryChat, PhoneDevice } from "../fake-whatsapp/history.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import { FakeWhatsApp, type LinkedDevice } from "../fake-whatsapp/server.ts";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { type Envelope, jidPath } from "../support/messaging.ts";
import { createWebhook, payloadOf, type Receiver, startReceiver } from "../support/receiver.ts";
import { type Stack, startStack } from "../support/stack.ts";

interface Detail {
  state: string;
  status: string;
  me: { id: string } | null;
}
type Chat = { jid: string };
type Message = { id: string; content: string | null; fromMe: boolean };
type Group = { jid: string; subject: string };

const SID = "real-wa";
const PHONE = "4915550004444";
const FRIEND = "4915550005555@s.whatsapp.net";
const now = () => Math.floor(Date.now() / 1000);
const day = 86_400;

let whatsapp: FakeWhatsApp;
let stack: Stack;
let api: ApiClient;
let receiver: Receiver;
let device: LinkedDevice;

const detail = async () => (await api.call<Envelope<Detail>>("GET", `/api/sessions/${SID}`)).body.data;

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

describe("real Baileys in the bridge process, against the fake WhatsApp", () => {
  it("pairs by the API's QR, stores the pairing history and the groups already joined", async () => {
    const history: HistoryChat[] = [
      {
        jid: FRIEND,
        name: "Friend",
        messages: [
          { id: "HIST2", text: "see you tomorrow", fromMe: true, timestamp: now() - day },
          { id: "HIST1", text: "lunch?", fromMe: false, timestamp: now() - 2 * day, pushName: "Friend" },
        ],
      },
    ];
    new PhoneDevice(whatsapp, PHONE).sendHistoryOnPairing(history);
    new FakeGroups(whatsapp).add({
      jid: "120363000000000042@g.us",
      subject: "Book club",
      creator: FRIEND,
      creation: now() - 30 * day,
      members: [{ jid: FRIEND, admin: "superadmin" }, { jid: `${PHONE}@s.whatsapp.net` }],
    });

    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await createWebhook(api, SID, { name: "all", url: receiver.url(`/${SID}`), events: ["*"] });
    expect((await api.call("POST", `/api/sessions/${SID}/start`)).status).toBe(200);
    const qr = await eventually(
      async () => {
        const res = await api.call<{ qr: string }>("GET", `/api/sessions/${SID}/qr`);
        return res.status === 200 ? res.body.qr : undefined;
      },
      60_000,
      "a QR from real Baileys",
    );
    device = await new FakePhone(whatsapp, PHONE).scan(qr);
    const connected = await eventually(
      async () => {
        const now = await detail();
        return now.state === "connected" ? now : undefined;
      },
      60_000,
      "connected",
    );
    expect(connected.status).toBe("Connected");
    expect(connected.me?.id).toBe(device.jid);

    const messages = await eventually(
      async () => {
        const res = await api.call<Envelope<Message[]>>("GET", `/api/chat/${SID}/${jidPath(FRIEND)}`);
        return res.status === 200 && res.body.data.length >= 2 ? res.body.data : undefined;
      },
      60_000,
      "the pairing history in the chat",
    );
    expect(messages.map((m) => [m.id, m.content, m.fromMe]).sort()).toEqual([
      ["HIST1", "lunch?", false],
      ["HIST2", "see you tomorrow", true],
    ]);
    const chats = (await api.call<Envelope<Chat[]>>("GET", `/api/chat/${SID}`)).body.data;
    expect(chats.map((chat) => chat.jid)).toContain(FRIEND);

    const groups = await eventually(
      async () => {
        const res = await api.call<Envelope<Group[]>>("GET", `/api/groups/${SID}`);
        return res.status === 200 && res.body.data.length > 0 ? res.body.data : undefined;
      },
      30_000,
      "the groups already joined",
    );
    expect(groups).toEqual([
      expect.objectContaining({ jid: "120363000000000042@g.us", subject: "Book club" }),
    ]);
    // History is stored, not announced: no message.received webhook for it.
    const events = (await receiver.received(`/${SID}`)).map((request) => payloadOf(request));
    expect(JSON.stringify(events)).not.toContain("HIST1");
  }, 240_000);

  it("delivers a contact's encrypted message as message.received; the phone unlinking ends logged_out", async () => {
    const contact = new FakeContact(whatsapp, "4915550006666", "Encrypted Friend");
    await contact.sendText(device, "hello through Signal");
    const received = await eventually(
      async () => {
        const events = (await receiver.received(`/${SID}`)).map(
          (request) => payloadOf(request) as { event?: string; data?: Record<string, unknown> },
        );
        return events.find((event) => event.event === "message.received");
      },
      30_000,
      "a message.received webhook",
    );
    expect(JSON.stringify(received.data)).toContain("hello through Signal");

    whatsapp.removeDevice(device.jid);
    const ended = await eventually(
      async () => {
        const now = await detail();
        return now.state === "logged_out" ? now : undefined;
      },
      30_000,
      "logged_out",
    );
    expect(ended.status).toBe("Disconnected");
    expect(ended.me).toBeNull();
  }, 120_000);
});
