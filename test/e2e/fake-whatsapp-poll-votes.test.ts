// `npm start` with real Baileys against the protocol-level fake WhatsApp, through the public API only: a
// poll sent through the API reaches a fake contact, whose vote (encrypted with the poll's secret, as a
// phone does) arrives at a real HTTP receiver as a `poll.vote` webhook with the voter and the option
// names, and the poll message shows the tally.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByQr,
  startFakeWhatsAppStack,
  webhookData,
} from "../support/fake-whatsapp-stack.ts";
import { type Envelope, jidPath } from "../support/messaging.ts";
import { createWebhook } from "../support/receiver.ts";

let world: FakeWhatsAppStack;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

const SID = `polls-${Math.random().toString(36).slice(2, 8)}`;
const OPTIONS = ["Approve", "Reject", "Ask for changes"];

describe("poll votes on real Baileys against the fake WhatsApp", () => {
  it("a contact's vote on an API poll is a poll.vote webhook with the voter and options, and the poll's tally", async () => {
    const { whatsapp, api, receiver } = world;
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await createWebhook(api, SID, { name: "votes", url: receiver.url(`/${SID}`), events: ["poll.vote"] });
    const device = await pairByQr(api, whatsapp, SID, "4915550006060");
    const ivan = new FakeContact(whatsapp, "4915550006161", "Ivan");
    await ivan.sendText(device, "ready when you are");

    const sent = await api.call<Envelope<{ id: string }>>(
      "POST",
      `/api/messages/${SID}/${jidPath(ivan.jid)}/poll`,
      {
        question: "Hire a designer?",
        options: OPTIONS,
        selectableCount: 1,
      },
    );
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const pollId = sent.body.data.id;
    const poll = await eventually(
      async () => ivan.inbox.find((message) => message.id === pollId),
      30_000,
      "the contact receiving the poll",
    );

    const vote = await ivan.sendPollVote(device, poll, ["Approve"]);
    const [delivered] = await eventually(
      async () => {
        const list = await webhookData(receiver, SID, "poll.vote");
        return list.length > 0 ? list : undefined;
      },
      30_000,
      "the poll.vote webhook",
    );
    expect(delivered).toEqual({
      keyId: vote.id,
      pollId,
      remoteJid: ivan.jid,
      voter: ivan.jid,
      voterPhone: "4915550006161",
      selectedOptions: ["Approve"],
      timestamp: expect.any(Number),
    });

    const message = await api.call<Envelope<{ poll: unknown }>>(
      "GET",
      `/api/messages/${SID}/${jidPath(ivan.jid)}/${pollId}`,
    );
    expect(message.status).toBe(200);
    expect(message.body.data.poll).toEqual({
      options: [
        { name: "Approve", count: 1, voters: [ivan.jid] },
        { name: "Reject", count: 0, voters: [] },
        { name: "Ask for changes", count: 0, voters: [] },
      ],
      totalVoters: 1,
    });
  }, 180_000);
});
