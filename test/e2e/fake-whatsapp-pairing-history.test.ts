// `npm start` with real Baileys against the protocol-level fake WhatsApp, through the public API only:
// a session linked by the pairing code the API hands out (the fake phone's owner types it), and the
// history a phone sends on pairing in several chunks, the later ones as encrypted blobs on the media
// host, in the session's chat list and messages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PhoneDevice } from "../fake-whatsapp/history.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import type { FakeWhatsApp } from "../fake-whatsapp/server.ts";
import { type ApiClient, eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByCode,
  qrShown,
  sessionDetail,
  sessionInState,
  startFakeWhatsAppStack,
} from "../support/fake-whatsapp-stack.ts";
import { type Envelope, jidPath } from "../support/messaging.ts";

let world: FakeWhatsAppStack;
let whatsapp: FakeWhatsApp;
let api: ApiClient;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
  ({ whatsapp, api } = world);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

const suffix = Math.random().toString(36).slice(2, 8);
const day = 86_400;
const now = () => Math.floor(Date.now() / 1000);
type Chat = { jid: string; name: string | null };
type Message = { id: string; content: string | null; fromMe: boolean };
type Contact = { jid: string; notify: string | null };

describe("pairing by code and history from the media host, through the API", () => {
  it("the code POST /sessions/{id}/pair returns links the session once the phone's owner types it", async () => {
    const sid = `fakewa-code-${suffix}`;
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    const phone = new FakePhone(whatsapp, "4915550003131");
    const device = await pairByCode(api, sid, phone);
    const detail = await sessionDetail(api, sid);
    expect(detail).toMatchObject({ state: "connected", me: { id: device.jid } });
    expect(whatsapp.logins).toContain(device.jid);
  }, 180_000);

  it("a wrong code links nothing and a new code does; asking for a code needs a phone number (400)", async () => {
    const sid = `fakewa-badcode-${suffix}`;
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    expect((await api.call("POST", `/api/sessions/${sid}/start`)).status).toBe(200);
    await qrShown(api, sid);
    expect((await api.call("POST", `/api/sessions/${sid}/pair`, {})).status).toBe(400);
    const phone = new FakePhone(whatsapp, "4915550003232");
    const paired = await api.call<Envelope<{ pairingCode: string }>>("POST", `/api/sessions/${sid}/pair`, {
      phoneNumber: phone.phoneNumber,
    });
    expect(paired.status).toBe(200);
    const code = paired.body.data.pairingCode;
    const wrong = code.startsWith("A") ? `B${code.slice(1)}` : `A${code.slice(1)}`;
    await expect(phone.enterCode(wrong)).rejects.toThrow(/wrong pairing code/);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await sessionDetail(api, sid)).state).not.toBe("connected");
    expect([...whatsapp.devices.keys()].some((jid) => jid.startsWith(phone.phoneNumber))).toBe(false);

    // The owner asks for a new code: the session was not linked, so it gets one, and it links.
    const again = await api.call<Envelope<{ pairingCode: string }>>("POST", `/api/sessions/${sid}/pair`, {
      phoneNumber: phone.phoneNumber,
    });
    expect(again.status).toBe(200);
    const device = await phone.enterCode(again.body.data.pairingCode);
    expect(await sessionInState(api, sid, "connected")).toMatchObject({ me: { id: device.jid } });
  }, 120_000);

  it("history chunks from the media host (and the inline bootstrap) are in the chat list and the chats", async () => {
    const sid = `fakewa-history-${suffix}`;
    const friend = "4915550007171@s.whatsapp.net";
    const colleague = "4915550007272@s.whatsapp.net";
    const phone = new FakePhone(whatsapp, "4915550007070");
    new PhoneDevice(whatsapp, phone.phoneNumber, "Acme", phone.device).sendHistoryChunksOnPairing([
      {
        syncType: "INITIAL_BOOTSTRAP",
        progress: 20,
        chats: [
          {
            jid: friend,
            name: "Friend",
            messages: [{ id: "E2E-BOOT", text: "newest", fromMe: false, timestamp: now() - day }],
          },
        ],
      },
      {
        syncType: "RECENT",
        progress: 60,
        chats: [
          {
            jid: friend,
            messages: [
              {
                id: "E2E-REC1",
                text: "older, from the media host",
                fromMe: true,
                timestamp: now() - 2 * day,
              },
            ],
          },
        ],
      },
      {
        syncType: "RECENT",
        progress: 100,
        chats: [
          {
            jid: colleague,
            name: "Colleague",
            messages: [
              { id: "E2E-REC2", text: "minutes attached", fromMe: false, timestamp: now() - 3 * day },
            ],
          },
        ],
      },
      { syncType: "PUSH_NAME", pushNames: [{ jid: colleague, name: "Grace" }] },
    ]);
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    await pairByCode(api, sid, phone);

    const chatMessages = (jid: string, count: number) =>
      eventually(
        async () => {
          const res = await api.call<Envelope<Message[]>>("GET", `/api/chat/${sid}/${jidPath(jid)}`);
          return res.status === 200 && res.body.data.length >= count ? res.body.data : undefined;
        },
        60_000,
        `${count} history messages in ${jid}`,
      );
    const withFriend = await chatMessages(friend, 2);
    expect(withFriend.map((m) => [m.id, m.content, m.fromMe]).sort()).toEqual([
      ["E2E-BOOT", "newest", false],
      ["E2E-REC1", "older, from the media host", true],
    ]);
    const withColleague = await chatMessages(colleague, 1);
    expect(withColleague.map((m) => [m.id, m.content])).toEqual([["E2E-REC2", "minutes attached"]]);
    const chats = (await api.call<Envelope<Chat[]>>("GET", `/api/chat/${sid}`)).body.data;
    expect(chats.map((chat) => chat.jid)).toEqual(expect.arrayContaining([friend, colleague]));
    const contacts = await eventually(
      async () => {
        const res = await api.call<Envelope<Contact[]>>("GET", `/api/contacts/${sid}`);
        const found = res.status === 200 ? res.body.data.find((c) => c.jid === colleague) : undefined;
        return found?.notify ? found : undefined;
      },
      30_000,
      "the push name from the PUSH_NAME chunk",
    );
    expect(contacts.notify).toBe("Grace");
  }, 180_000);
});
