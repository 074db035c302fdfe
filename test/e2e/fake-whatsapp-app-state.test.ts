// `npm start` with real Baileys against the protocol-level fake WhatsApp, through the public API only:
// app-state sync both ways. The phone shares its app-state keys with the new companion; a chat archived
// through the REST API is archived on the phone (which decodes the patch), and a `chat.update` webhook
// says so; a mute and a star through the API show on the phone too; a label the phone creates and puts on a chat shows in the API and arrives at a real HTTP
// receiver as `label.update` and `label.association` webhooks. The profile name set through the API is
// the phone's push-name setting, and a name set on the phone becomes the session's `me`.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
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

const SID = `appstate-${Math.random().toString(36).slice(2, 8)}`;
const EVENTS = ["chat.update", "label.update", "label.association"];

type Label = { id: string; name: string; color: number; colorHex: string };

/** `sid` paired to a new phone that shares its app-state keys, and a contact's message stored. */
async function pairedWithKeys(sid: string, number: string, contactNumber: string) {
  const { whatsapp, api } = world;
  const phone = new FakePhone(whatsapp, number);
  phone.appState.shareKeysOnPairing();
  const device = await pairByQr(api, whatsapp, sid, phone);
  // The key share comes first on the new device; once the contact's later message is stored the
  // companion holds the key.
  const contact = new FakeContact(whatsapp, contactNumber, "Olga");
  const hello = await contact.sendText(device, "is my order ready?");
  await eventually(
    async () => {
      const res = await api.call("GET", `/api/chat/${sid}`);
      return JSON.stringify(res.body).includes(contact.jid) ? true : undefined;
    },
    30_000,
    "the contact's chat stored",
  );
  return { phone, contact, hello };
}

describe("app-state sync on real Baileys against the fake WhatsApp", () => {
  it("an API archive reaches the phone; the phone's label shows in the API and as webhooks", async () => {
    const { api, receiver } = world;
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await createWebhook(api, SID, { name: "app state", url: receiver.url(`/${SID}`), events: EVENTS });
    const { phone, contact: olga, hello } = await pairedWithKeys(SID, "4915550007070", "4915550007171");

    const archived = await api.call("PUT", `/api/chat/${SID}/${jidPath(olga.jid)}/archive`, {
      archive: true,
    });
    expect(archived.status, JSON.stringify(archived.body)).toBe(200);
    expect(phone.appState.chat(olga.jid).archived).toBe(true);
    const [update] = await eventually(
      async () => {
        const list = await webhookData(receiver, SID, "chat.update");
        return list.length > 0 ? list : undefined;
      },
      30_000,
      "the chat.update webhook",
    );
    expect(update).toEqual({ jid: olga.jid, archived: true, pinned: false, mutedUntil: null });

    // Mute for an hour and star her message: the phone shows both.
    const muted = await api.call("PUT", `/api/chat/${SID}/${jidPath(olga.jid)}/mute`, {
      mute: true,
      duration: 3600,
    });
    expect(muted.status, JSON.stringify(muted.body)).toBe(200);
    const mutedUntil = phone.appState.chat(olga.jid).mutedUntil ?? 0;
    expect(Math.abs(mutedUntil - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    const starred = await api.call("POST", `/api/messages/${SID}/${jidPath(olga.jid)}/${hello.id}/star`, {
      star: true,
    });
    expect(starred.status, JSON.stringify(starred.body)).toBe(200);
    expect(phone.appState.starred(olga.jid, { id: hello.id, fromMe: false })).toBe(true);

    await phone.appState.editLabel({ id: "5", name: "Paid", color: 4 });
    await phone.appState.labelChat(olga.jid, "5");
    const labels = await eventually(
      async () => {
        const res = await api.call<Envelope<{ labels: Label[] }>>(
          "GET",
          `/api/labels/${SID}/chat/${jidPath(olga.jid)}/labels`,
        );
        return res.body.data?.labels.length ? res.body.data.labels : undefined;
      },
      30_000,
      "the phone's label on the chat, through the API",
    );
    expect(labels).toMatchObject([{ id: "5", name: "Paid", color: 4, colorHex: "#0000FF" }]);
    const association = await eventually(
      async () => {
        const list = await webhookData(receiver, SID, "label.association");
        return list.length > 0 ? list : undefined;
      },
      30_000,
      "the label.association webhook",
    );
    expect(association).toEqual([{ labelId: "5", jid: olga.jid, action: "add" }]);
    expect(await webhookData(receiver, SID, "label.update")).toEqual([
      { id: "5", name: "Paid", color: 4, colorHex: "#0000FF", deleted: false },
    ]);

    // A label made through the API is WhatsApp's too: the phone gets it, and it goes on the chat there.
    const created = await api.call<Envelope<{ label: Label }>>("POST", `/api/labels/${SID}`, {
      name: "Follow up",
      color: 9,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const { id } = created.body.data.label;
    expect(phone.appState.labels().get(id)).toEqual({ name: "Follow up", color: 9 });
    const assigned = await api.call("PUT", `/api/labels/${SID}/chat/${jidPath(olga.jid)}/labels`, {
      labelIds: [id],
      action: "add",
    });
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    expect(phone.appState.chat(olga.jid).labels.sort()).toEqual(["5", id].sort());
  });

  it("the profile name set through the API is the phone's push name; the phone's new name is the session's me", async () => {
    const { api } = world;
    const sid = `${SID}-name`;
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    const { phone } = await pairedWithKeys(sid, "4915550007272", "4915550007373");
    const ownName = async (wanted: string) =>
      eventually(
        async () => {
          const res = await api.call<Envelope<{ me: { name?: string } | null }>>(
            "GET",
            `/api/sessions/${sid}`,
          );
          return res.body.data?.me?.name === wanted ? wanted : undefined;
        },
        30_000,
        `the session's name ${wanted}`,
      );

    const named = await api.call("PUT", `/api/profile/${sid}/name`, { name: "Acme Support" });
    expect(named.status, JSON.stringify(named.body)).toBe(200);
    expect(phone.appState.pushName()).toBe("Acme Support");
    await ownName("Acme Support");

    await phone.appState.setPushName("Front Desk");
    await ownName("Front Desk");
  });
});
