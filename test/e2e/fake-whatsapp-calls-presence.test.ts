// `npm start` with real Baileys against the protocol-level fake WhatsApp, through the public API only:
// - calls: a contact known by LID rings the session; a `call.received` webhook reaches a real HTTP
//   receiver, and with rejectCalls on WhatsApp (the fake) gets a well-formed rejection of that call, to
//   the LID it came from; with rejectCalls off the call is announced and left alone;
// - presence: a session subscribes to a contact's presence through the API; the contact typing and going
//   offline arrive as `presence.update` webhooks, and a session that did not subscribe gets none; after
//   a restart (a new connection, without subscriptions at WhatsApp) the session subscribes again;
// - read receipts: with readReceipts on, a contact's message is marked read and the contact gets a
//   `read` receipt (blue ticks), since the account's privacy settings allow it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { receiptsReaching } from "../fake-whatsapp/privacy.ts";
import type { LinkedDevice } from "../fake-whatsapp/server.ts";
import { eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByQr,
  startFakeWhatsAppStack,
  webhookData,
} from "../support/fake-whatsapp-stack.ts";
import { jidPath } from "../support/messaging.ts";
import { createWebhook } from "../support/receiver.ts";

let world: FakeWhatsAppStack;
const suffix = Math.random().toString(36).slice(2, 8);
const SID = `calls-${suffix}`;
const OTHER = `quiet-${suffix}`;
let device: LinkedDevice;
let otherDevice: LinkedDevice;

async function settings(sid: string, config: { readReceipts: boolean; rejectCalls: boolean }) {
  expect((await world.api.call("PATCH", `/api/sessions/${sid}/settings`, { config })).status).toBe(200);
}

/** A session paired to its own account, with a webhook to `/<sid>` for `events`. */
async function pairedSession(sid: string, phone: string, events: string[]): Promise<LinkedDevice> {
  const { api, receiver, whatsapp } = world;
  expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
  await createWebhook(api, sid, { name: "all", url: receiver.url(`/${sid}`), events });
  return pairByQr(api, whatsapp, sid, phone);
}

const firstWebhook = (sid: string, event: string, match: (data: Record<string, unknown>) => boolean) =>
  eventually(
    async () =>
      (await webhookData(world.receiver, sid, event)).find((data) => match(data as Record<string, unknown>)),
    30_000,
    `a ${event} webhook`,
  );

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
  const events = ["call.received", "presence.update"];
  device = await pairedSession(SID, "4915550004040", events);
  otherDevice = await pairedSession(OTHER, "4915550004141", events);
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

describe("calls, presence and read receipts on real Baileys against the fake WhatsApp", () => {
  it("a call from a LID caller is a call.received webhook and, with rejectCalls, rejected to that LID", async () => {
    const { whatsapp } = world;
    await settings(SID, { readReceipts: false, rejectCalls: true });
    const caller = new FakeContact(whatsapp, "4915550004242", "Caller");
    const offer = whatsapp.calls.offer(device.jid, caller.account, { via: "lid", name: "Caller" });
    expect(await firstWebhook(SID, "call.received", (data) => data.callId === offer.callId)).toEqual({
      callId: offer.callId,
      from: caller.jid,
      callerPhone: "4915550004242",
      isVideo: false,
      isGroup: false,
      timestamp: expect.any(Number),
      rejected: true,
    });
    const [rejection] = await eventually(
      async () => {
        const found = whatsapp.calls.rejections.filter((rejection) => rejection.callId === offer.callId);
        return found.length > 0 ? found : undefined;
      },
      30_000,
      "the rejection at WhatsApp",
    );
    expect(rejection).toEqual({
      by: device.jid,
      to: caller.lid,
      callId: offer.callId,
      callCreator: caller.lid,
      problems: [],
    });
    expect(whatsapp.calls.rejectionsFor(caller.account)).toHaveLength(1);

    await settings(SID, { readReceipts: false, rejectCalls: false });
    const video = whatsapp.calls.offer(device.jid, caller.account, { via: "pn", video: true });
    expect(await firstWebhook(SID, "call.received", (data) => data.callId === video.callId)).toMatchObject({
      from: caller.jid,
      isVideo: true,
      rejected: false,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(whatsapp.calls.rejections.filter((rejection) => rejection.callId === video.callId)).toEqual([]);
  }, 120_000);

  it("presence: a session that subscribed through the API gets the contact's typing and last seen; one that did not, nothing", async () => {
    const { whatsapp, api, receiver } = world;
    const contact = new FakeContact(whatsapp, "4915550004343", "Typist");
    const group = await api.call(
      "POST",
      `/api/chat/${SID}/${jidPath("120363000000000001@g.us")}/presence/subscribe`,
    );
    expect(group.status).toBe(400);
    const subscribed = await api.call("POST", `/api/chat/${SID}/${jidPath(contact.jid)}/presence/subscribe`);
    expect(subscribed.status, JSON.stringify(subscribed.body)).toBe(200);
    await eventually(
      async () =>
        whatsapp.presence.subscriptions.find((s) => s.companion === device.jid && s.to === contact.jid),
      30_000,
      "the subscription at WhatsApp",
    );

    whatsapp.presence.chatState(contact.account, "composing");
    expect(await firstWebhook(SID, "presence.update", (data) => data.presence === "composing")).toEqual({
      chat: contact.jid,
      participant: contact.jid,
      presence: "composing",
      lastSeen: null,
    });
    const lastSeen = Math.floor(Date.now() / 1000) - 120;
    whatsapp.presence.offline(contact.account, lastSeen);
    expect(await firstWebhook(SID, "presence.update", (data) => data.presence === "unavailable")).toEqual({
      chat: contact.jid,
      participant: contact.jid,
      presence: "unavailable",
      lastSeen: lastSeen * 1000,
    });
    expect(whatsapp.presence.subscriptions.some((s) => s.companion === otherDevice.jid)).toBe(false);
    expect(await webhookData(receiver, OTHER, "presence.update")).toEqual([]);

    // A restart is a new connection, which WhatsApp gives no subscriptions: the session subscribes again.
    const logins = whatsapp.logins.filter((jid) => jid === device.jid).length;
    expect((await api.call("POST", `/api/sessions/${SID}/restart`)).status).toBe(200);
    await eventually(
      async () => whatsapp.logins.filter((jid) => jid === device.jid).length > logins || undefined,
      60_000,
      "a new login",
    );
    await eventually(
      async () =>
        whatsapp.presence.subscriptions.find((s) => s.companion === device.jid && s.to === contact.jid),
      60_000,
      "the subscription made again",
    );
    whatsapp.presence.chatState(contact.account, "recording");
    expect(await firstWebhook(SID, "presence.update", (data) => data.presence === "recording")).toMatchObject(
      {
        chat: contact.jid,
        presence: "recording",
      },
    );
  }, 180_000);

  it("readReceipts on: the contact's message is read and the contact gets a `read` receipt", async () => {
    const { whatsapp } = world;
    await settings(SID, { readReceipts: true, rejectCalls: false });
    const contact = new FakeContact(whatsapp, "4915550004444", "Reader");
    const sent = await contact.sendText(device, "seen it?");
    const read = await eventually(
      async () =>
        receiptsReaching(whatsapp.received, contact.account, whatsapp.messaging.directory).find(
          (receipt) => receipt.type === "read" && receipt.ids.includes(sent.id),
        ),
      30_000,
      "a read receipt at the contact",
    );
    expect(read.from).toBe(device.jid);
  }, 120_000);
});
