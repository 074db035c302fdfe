// `npm start` with real Baileys against the protocol-level fake WhatsApp, through the public API only:
// a session linked by the pairing code the API hands out (the fake phone's owner types it), and the
// history a phone sends on pairing in several chunks, the later ones as encrypted blobs on the media
// host, in the session's chat list and messages.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import type { FakeWhatsApp } from "../fake-whatsapp/server.ts";
import type { ApiClient } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByCode,
  qrShown,
  sessionDetail,
  startFakeWhatsAppStack,
} from "../support/fake-whatsapp-stack.ts";
import type { Envelope } from "../support/messaging.ts";

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

  it("a wrong code answers nothing linked; asking for a code needs a phone number (400)", async () => {
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
  }, 120_000);
});
