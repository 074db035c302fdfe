/**
 * The Baileys seam against the fake WhatsApp, through the bridge's own session code (FleetLink, the
 * session link, the write-through auth store) and a fake edge: history sync on pairing, the groups the
 * account is already in, LID ↔ phone number pairs, and logout from the phone.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import type { HistoryLimit } from "../../../bridge/src/whatsapp/history.ts";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { FakeGroups } from "../../fake-whatsapp/groups.ts";
import { type HistoryChat, PhoneDevice } from "../../fake-whatsapp/history.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { sendRetryReceipt } from "../../fake-whatsapp/retry.ts";
import { FakeWhatsApp, type LinkedDevice } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

type Stored<K extends SessionEvent["kind"]> = Extract<SessionEvent, { kind: K }>;
function stored<K extends SessionEvent["kind"]>(edge: FakeEdge, sessionId: string, kind: K): Stored<K>[] {
  return edge.session(sessionId).stored.filter((event): event is Stored<K> => event.kind === kind);
}

const PHONE = "4915550007777";
const FRIEND = "4915550001111@s.whatsapp.net";
const day = 86_400;
const now = () => Math.floor(Date.now() / 1000);

async function world(history?: HistoryLimit) {
  const log = process.env.FAKE_WA_LOG ? (line: string) => console.log(`[fake-wa] ${line}`) : undefined;
  const whatsapp = await FakeWhatsApp.start(log ? { log } : {});
  const edge = await startFakeEdge();
  cleanup.push(
    () => whatsapp.close(),
    () => edge.close(),
  );
  const bridge = await startBridge(
    edge,
    baileysNetwork({
      waWebSocketUrl: whatsapp.url,
      connectTimeoutMs: 5_000,
      rootKey: whatsapp.rootKey,
      ...(history ? { history } : {}),
    }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  return { whatsapp, edge, bridge, phone: new FakePhone(whatsapp, PHONE) };
}

/** Starts the session, scans its QR with the phone and waits for `connected`. */
async function link(edge: FakeEdge, phone: FakePhone, sessionId: string): Promise<LinkedDevice> {
  const qr = await waitFor(() => stored(edge, sessionId, "qr")[0]?.qr, "qr", 10_000);
  const device = await phone.scan(qr);
  await waitFor(() => stored(edge, sessionId, "connected").length > 0, "connected", 15_000);
  return device;
}

describe("the Baileys seam against the fake WhatsApp", () => {
  it("stores the history the phone sends on pairing (not live, oldest first, within the limit) and the groups the account is already in", async () => {
    const { whatsapp, edge, bridge, phone } = await world({ days: 30, messagesPerChat: 2 });
    const groups = new FakeGroups(whatsapp);
    groups.add({
      jid: "120363000000000001@g.us",
      subject: "Family",
      description: "all of us",
      creator: FRIEND,
      creation: now() - 400 * day,
      members: [{ jid: FRIEND, admin: "superadmin" }, { jid: `${PHONE}@s.whatsapp.net` }],
    });
    groups.add({
      jid: "120363000000000002@g.us",
      subject: "Not ours",
      creator: FRIEND,
      creation: now() - 10 * day,
      members: [{ jid: FRIEND, admin: "superadmin" }],
    });
    const chats: HistoryChat[] = [
      {
        jid: FRIEND,
        name: "Friend",
        // Newest first, as WhatsApp sends them; the limit keeps the newest two.
        messages: [
          { id: "H3", text: "see you", fromMe: true, timestamp: now() - 1 * day },
          { id: "H2", text: "dinner?", fromMe: false, timestamp: now() - 2 * day, pushName: "Friend" },
          { id: "H1", text: "hello", fromMe: false, timestamp: now() - 3 * day },
        ],
      },
      {
        jid: "77000000000001@lid",
        pnJid: "4915550002222@s.whatsapp.net",
        name: "Via LID",
        messages: [
          { id: "L1", text: "lid hello", fromMe: false, timestamp: now() - 2.5 * day },
          { id: "OLD", text: "too old", fromMe: false, timestamp: now() - 90 * day },
        ],
      },
    ];
    const phoneDevice = new PhoneDevice(whatsapp, PHONE);
    const sent: string[] = [];
    phoneDevice.sendHistoryOnPairing(chats, (id) => sent.push(id));
    await bridge.assign("s1");
    const device = await link(edge, phone, "s1");
    await waitFor(() => sent.length === 1, "history sent", 10_000);

    const history = await waitFor(
      () => stored(edge, "s1", "message").length >= 3 && stored(edge, "s1", "message"),
      "history stored",
      30_000,
    );
    // In time order, none of it live (no webhooks, no bot), only what the limit keeps, and the LID
    // chat under its phone number.
    expect(history.map((event) => [event.message.id, event.message.chat, event.live])).toEqual([
      ["L1", "4915550002222@s.whatsapp.net", false],
      ["H2", FRIEND, false],
      ["H3", FRIEND, false],
    ]);
    expect(history[1]?.message).toMatchObject({
      fromMe: false,
      sender: FRIEND,
      content: { text: "dinner?" },
    });
    expect(history[2]?.message).toMatchObject({ fromMe: true, content: { text: "see you" } });
    const contacts = stored(edge, "s1", "contacts").flatMap((event) => event.contacts);
    expect(contacts).toContainEqual({ jid: "4915550002222@s.whatsapp.net", lid: "77000000000001@lid" });
    expect(contacts).toContainEqual(expect.objectContaining({ jid: FRIEND, name: "Friend" }));

    // Groups: fetched once connected, reported whole (stored by the edge as new groups).
    const upserts = await waitFor(
      () =>
        stored(edge, "s1", "groups").filter((event) => event.action === "upsert").length > 0 &&
        stored(edge, "s1", "groups").filter((event) => event.action === "upsert"),
      "groups",
      10_000,
    );
    expect(groups.requests).toContainEqual({ device: device.jid, kind: "participating", to: "@g.us" });
    expect(upserts.flatMap((event) => event.groups)).toEqual([
      expect.objectContaining({
        jid: "120363000000000001@g.us",
        subject: "Family",
        description: "all of us",
        participants: [
          { id: FRIEND, admin: "superadmin" },
          { id: `${PHONE}@s.whatsapp.net`, admin: null },
        ],
      }),
    ]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);

  it("learns a LID contact's phone number from its message (edge contact and Baileys' persisted lid-mapping), answers a contact known only by LID, answers a resend request from the edge's store, fetches a group it hears of, and ends logged_out when the phone unlinks the device", async () => {
    const { whatsapp, edge, bridge, phone } = await world();
    const groups = new FakeGroups(whatsapp);
    await bridge.assign("s2");
    const device = await link(edge, phone, "s2");

    // A contact writing from its LID, with its phone number alongside (sender_pn).
    const contact = new FakeContact(whatsapp, "4915550003333", "Lid Friend");
    await contact.sendText(device, "hi from my lid");
    const received = await waitFor(() => stored(edge, "s2", "message")[0], "message", 10_000);
    expect(received).toMatchObject({ live: true, message: { chat: contact.jid, sender: contact.jid } });
    const contacts = await waitFor(
      () => stored(edge, "s2", "contacts").flatMap((event) => event.contacts),
      "contacts",
    );
    expect(contacts).toContainEqual({ jid: contact.jid, lid: contact.lid });
    // Baileys' own LID store lives in the keys, written through to the edge: it survives a restart.
    await waitFor(
      () => edge.session("s2").auth.keys[`lid-mapping:${contact.phoneNumber}`] !== undefined,
      "lid-mapping persisted",
    );
    expect(edge.session("s2").auth.keys[`lid-mapping:${contact.phoneNumber}`]).toBe(contact.lidUser);

    // A contact that does not share its number: the chat is known only by its LID, and the edge's
    // answer to that LID reaches it (Baileys asks the LID's devices; no number is needed).
    const hidden = new FakeContact(whatsapp, "4915550004444", "Hidden", { sharesNumber: false });
    const lidOnly = await hidden.sendText(device, "no number here");
    const fromLid = await waitFor(
      () => stored(edge, "s2", "message").find(({ message }) => message.id === lidOnly.id),
      "the LID-only message",
      10_000,
    );
    expect(fromLid.message).toMatchObject({ chat: hidden.lid, sender: hidden.lid, pushName: "Hidden" });
    const answer = await edge.command("s2", "wa", {
      op: "send",
      to: hidden.lid,
      messageId: "3EB0TOLIDONLY001",
      content: { type: "text", text: "answered by LID" },
    });
    expect(answer).toMatchObject({ ok: true, data: { chat: hidden.lid } });
    const answered = await waitFor(
      () => hidden.inbox.find((message) => message.id === "3EB0TOLIDONLY001"),
      "the LID-only contact decrypting the answer",
      10_000,
    );
    expect(answered.text).toBe("answered by LID");

    // A resend request for a message this bridge never sent (it was sent before a restart): answered
    // from the edge's stored record, re-encrypted for the contact from the key bundle in the receipt.
    const messageId = "3EB0RESENDME0001";
    edge.sent.set(`s2/${messageId}`, {
      key: { remoteJid: contact.jid, fromMe: true, id: messageId },
      message: { conversation: "are you there?" },
      messageTimestamp: now() - 3600,
    });
    sendRetryReceipt(whatsapp, device, contact, messageId);
    await waitFor(
      () => edge.mediaRequests.includes(`GET sent s2/${messageId} 200`),
      "the bridge asked the edge for the message",
      10_000,
    );
    const resent = await waitFor(
      () => whatsapp.received.find(({ node }) => node.tag === "message" && node.attrs.id === messageId),
      "the message sent again",
      10_000,
    );
    expect(resent.node.attrs.to).toContain(contact.phoneNumber);
    // …and the contact can read it: a new session from the keys it sent in the retry receipt.
    const decrypted = await waitFor(
      () => contact.inbox.find((message) => message.id === messageId),
      "the contact decrypting the resend",
      10_000,
    );
    expect(decrypted.text).toBe("are you there?");
    expect(contact.device.failures).toEqual([]);

    // A group change for a group the bridge holds nothing about: fetched whole and reported as new.
    groups.add({
      jid: "120363000000000009@g.us",
      subject: "New one",
      creator: contact.jid,
      creation: now(),
      members: [{ jid: contact.jid, admin: "superadmin" }, { jid: `${PHONE}@s.whatsapp.net` }],
    });
    whatsapp.deliver(device.jid, {
      tag: "notification",
      attrs: {
        from: "120363000000000009@g.us",
        type: "w:gp2",
        id: "N1",
        participant: contact.jid,
        t: String(now()),
      },
      content: [{ tag: "subject", attrs: { subject: "New one", s_o: contact.jid, s_t: String(now()) } }],
    });
    const fetched = await waitFor(
      () =>
        stored(edge, "s2", "groups")
          .filter((event) => event.action === "upsert")
          .flatMap((event) => event.groups)
          .find((group) => group.jid === "120363000000000009@g.us"),
      "the unknown group fetched",
      10_000,
    );
    expect(fetched).toMatchObject({
      subject: "New one",
      participants: expect.arrayContaining([{ id: contact.jid, admin: "superadmin" }]),
    });
    expect(groups.requests).toContainEqual({
      device: device.jid,
      kind: "query",
      to: "120363000000000009@g.us",
    });

    // The phone removes the linked device: WhatsApp's stream error, then no reconnect and no creds.
    const before = stored(edge, "s2", "disconnected").length; // the 515 restart after pairing
    whatsapp.removeDevice(device.jid);
    const closed = await waitFor(() => stored(edge, "s2", "disconnected")[before], "disconnected", 10_000);
    expect(closed).toMatchObject({ code: 401, next: "logged_out" });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(whatsapp.logins).toEqual([device.jid]);
    expect(edge.session("s2").auth.creds).toBeNull();
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);
});
