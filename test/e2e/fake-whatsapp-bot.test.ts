// Bot commands and keyword auto-replies in chats WhatsApp addresses only by LID, on the real stack
// with real Baileys against the fake WhatsApp: contacts that do not share their number write from
// `<lid>@lid` (no sender_pn), and what they decrypt is what the bot answered. The allow lists name one
// by its LID; the other by its phone number, which the session learns from its group message (the
// number WhatsApp puts beside a member's LID): the bot answers it in its @lid chat all the same.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import type { Received } from "../fake-whatsapp/device.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import type { LinkedDevice } from "../fake-whatsapp/server.ts";
import { eventually } from "../support/api.ts";
import { type FakeWhatsAppStack, pairByQr, startFakeWhatsAppStack } from "../support/fake-whatsapp-stack.ts";
import type { Envelope } from "../support/messaging.ts";

const SID = "lid-bot";
let world: FakeWhatsAppStack;
let phone: FakePhone;
let device: LinkedDevice;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
  expect((await world.api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
  phone = new FakePhone(world.whatsapp, "4915550007000");
  device = await pairByQr(world.api, world.whatsapp, SID, phone);
}, 180_000);

afterAll(async () => {
  await world?.stop();
});

async function botConfig(patch: Record<string, unknown>) {
  const res = await world.api.call("POST", `/api/sessions/${SID}/bot-config`, patch);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** What `contact` got back after it wrote `text` (the first message it decrypts that it had not). */
async function answerTo(contact: FakeContact, text: string): Promise<Received> {
  const before = contact.inbox.length;
  const { id } = await contact.sendText(device, text);
  const answer = await eventually(async () => contact.inbox[before], 30_000, `${contact.name}'s answer`);
  // Bot commands quote what they answer; auto-replies to others do too.
  expect(answer.message.extendedTextMessage?.contextInfo?.stanzaId).toBe(id);
  return answer;
}

type Contact = { jid: string; lid: string | null };

describe("the bot in chats known only by LID", () => {
  it("answers a command and an auto-reply when the lists name the contact by LID, or by the phone number the session learnt", async () => {
    const { api, whatsapp } = world;
    const rule = await api.call("POST", `/api/autoreplies/${SID}`, {
      keyword: "opening hours",
      matchType: "CONTAINS",
      response: "9 to 5",
    });
    expect(rule.status, JSON.stringify(rule.body)).toBe(200);

    const judy = new FakeContact(whatsapp, "4915550007111", "Judy", { sharesNumber: false });
    await botConfig({
      botMode: "SPECIFIC",
      botAllowedJids: [judy.lid],
      autoReplyMode: "SPECIFIC",
      autoReplyAllowedJids: [judy.lid],
    });
    expect((await answerTo(judy, "#ping")).text).toBe("Pong! 🏓");
    expect((await answerTo(judy, "what are your opening hours?")).text).toBe("9 to 5");
    const chats = (await api.call<Envelope<Array<{ jid: string }>>>("GET", `/api/chat/${SID}`)).body.data;
    expect(chats.map((chat) => chat.jid)).toContain(judy.lid);

    // Ivan writes in a group first: the message names his number beside his LID, and the session
    // stores the pair; then he writes directly, from his LID only.
    const ivan = new FakeContact(whatsapp, "4915550007222", "Ivan", { sharesNumber: false });
    const group = whatsapp.messaging.createGroup("Neighbours", ivan.account, [phone.account]);
    await ivan.sendGroupText(group, "hello neighbours");
    await eventually(
      async () => {
        const res = await api.call<Envelope<Contact[]>>("GET", `/api/contacts/${SID}?limit=all`);
        return res.body.data.find((contact) => contact.jid === ivan.jid && contact.lid === ivan.lid);
      },
      30_000,
      "Ivan's number and LID paired",
    );
    await botConfig({ botAllowedJids: [ivan.jid], autoReplyAllowedJids: [ivan.jid] });
    // Judy is no longer listed: her command goes unanswered, while Ivan's (sent after it) is answered.
    const judyBefore = judy.inbox.length;
    await judy.sendText(device, "#ping");
    expect((await answerTo(ivan, "#ping")).text).toBe("Pong! 🏓");
    expect((await answerTo(ivan, "opening hours on sunday?")).text).toBe("9 to 5");
    expect(judy.inbox.length).toBe(judyBefore);
    expect(ivan.inbox.map((message) => message.chat)).toEqual([ivan.lid, ivan.lid]);
  }, 180_000);
});
