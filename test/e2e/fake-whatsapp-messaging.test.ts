// `npm start` with real Baileys (no SIMULATOR) against the protocol-level fake WhatsApp
// (test/fake-whatsapp/, WA_WEBSOCKET_URL), through the public API only: the QR from the API is scanned
// by a fake phone; a fake contact's Signal-encrypted text arrives as a `message.received` webhook; a
// text sent through the API (to the phone number, and to the contact's @lid) is decrypted by the
// contact; its delivered (from its LID) and read receipts move the stored message to DELIVERED and READ
// (`message.status` webhooks and the chat history); an image sent through the API is uploaded to the
// fake media host and decrypted by the contact; the contact's image is a webhook and downloads through
// the API byte for byte; a member's message in a group is a webhook too. A second account: the history
// its phone sends on pairing lands in the chat (stored, not announced), the groups it is already in are
// in `GET /groups`, and the phone unlinking the device ends in `logged_out`.
import { createHash } from "node:crypto";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import { FakeGroups } from "../fake-whatsapp/groups.ts";
import { type HistoryChat, PhoneDevice } from "../fake-whatsapp/history.ts";
import { FakePhone } from "../fake-whatsapp/phone.ts";
import type { FakeWhatsApp, LinkedDevice } from "../fake-whatsapp/server.ts";
import type { ApiClient } from "../support/api.ts";
import { eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByQr,
  sessionInState,
  startFakeWhatsAppStack,
  webhookData,
} from "../support/fake-whatsapp-stack.ts";
import { type Envelope, jidPath, rawCall } from "../support/messaging.ts";
import { createWebhook, payloadOf, type Receiver } from "../support/receiver.ts";

let world: FakeWhatsAppStack;
let whatsapp: FakeWhatsApp;
let api: ApiClient;
let receiver: Receiver;

beforeAll(async () => {
  world = await startFakeWhatsAppStack();
  ({ whatsapp, api, receiver } = world);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

const idIs = (id: string) => (data: unknown) => (data as { id?: string } | undefined)?.id === id;
/** The first webhook of `event` for `sid` that `match` accepts. */
const webhook = (sid: string, event: string, what: string, match: (data: unknown) => boolean = () => true) =>
  eventually(async () => (await webhookData(receiver, sid, event)).find(match), 30_000, what);

const SID = `fakewa-${Math.random().toString(36).slice(2, 8)}`;
let phone: FakePhone;
let device: LinkedDevice;

describe("the real bridge on Baileys against the fake WhatsApp", () => {
  it("QR → phone scans → connected; a contact's text is a webhook; an API send is decrypted; its receipts become statuses", async () => {
    expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
    await createWebhook(api, SID, {
      name: "messages",
      url: receiver.url(`/${SID}`),
      events: ["message.received", "message.status"],
    });
    phone = new FakePhone(whatsapp, "4915550008888");
    device = await pairByQr(api, whatsapp, SID, phone);

    const contact = new FakeContact(whatsapp, "4915550001212", "Heidi");
    const inbound = await contact.sendText(device, "hello over real Signal");
    const received = await webhook(SID, "message.received", "the message.received webhook");
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
      `/api/messages/${SID}/${jidPath(contact.jid)}/send`,
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
      async () => ((await webhookData(receiver, SID, "message.status")).length === 1 ? true : undefined),
      30_000,
      "DELIVERED",
    );
    contact.sendReceipt(decrypted, { via: "lid", type: "read" });
    const statuses = await eventually(
      async () => {
        const list = await webhookData(receiver, SID, "message.status");
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
      `/api/chat/${SID}/${jidPath(contact.jid)}`,
    );
    expect(history.body.data.find((message) => message.id === id)?.status).toBe("READ");

    // An @lid chat can be answered through the API: the contact decrypts it.
    const toLid = await api.call<Envelope<{ id: string }>>(
      "POST",
      `/api/messages/${SID}/${jidPath(contact.lid)}/send`,
      { message: { text: "answered by LID" } },
    );
    expect(toLid.status, JSON.stringify(toLid.body)).toBe(200);
    const viaLid = await eventually(
      async () => contact.inbox.find((message) => message.id === toLid.body.data.id),
      30_000,
      "the contact decrypting the message sent to its LID",
    );
    expect(viaLid.text).toBe("answered by LID");

    // Media both ways: an API image send is uploaded (media_conn, HTTPS) and the contact decrypts the
    // file byte for byte; the contact's image arrives as a webhook and downloads through the API.
    const png = await sharp({ create: { width: 16, height: 16, channels: 3, background: "#f80" } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set("file", new Blob([png], { type: "image/png" }), "orange.png");
    form.set("type", "image");
    form.set("caption", "orange");
    const upload = await rawCall(
      world.stack.baseUrl,
      api,
      "POST",
      `/api/messages/${SID}/${jidPath(contact.jid)}/media`,
      { body: form },
    );
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    const imageId = (upload.body as Envelope<{ id: string }>).data.id;
    const image = await eventually(
      async () => contact.inbox.find((message) => message.id === imageId),
      30_000,
      "the contact receiving the image",
    );
    const media = whatsapp.messaging.media;
    const imageMessage = image.message.imageMessage;
    if (!media || !imageMessage) throw new Error("no image message");
    expect(imageMessage.caption).toBe("orange");
    expect((await media.decryptMedia(imageMessage, "image")).equals(png)).toBe(true);

    const photo = await sharp({ create: { width: 20, height: 10, channels: 3, background: "#08f" } })
      .jpeg()
      .toBuffer();
    const inboundImage = await contact.sendImage(device, photo, "a blue one");
    const announced = await webhook(SID, "message.received", "the image's webhook", idIs(inboundImage.id));
    expect(JSON.stringify(announced)).toContain("a blue one");
    const download = await fetch(
      `${world.stack.baseUrl}/api/messages/${SID}/download/${inboundImage.id}/media`,
      { headers: { "X-API-Key": api.key } },
    );
    expect(download.status).toBe(200);
    const downloaded = Buffer.from(await download.arrayBuffer());
    expect(createHash("sha256").update(downloaded).digest("hex")).toBe(
      createHash("sha256").update(photo).digest("hex"),
    );
    expect(media.downloads).toContainEqual(expect.stringMatching(/ 200$/));
  }, 180_000);

  it("a member's message in a group (sender key, skmsg) is a message.received webhook", async () => {
    const carol = new FakeContact(whatsapp, "4915550001313", "Carol");
    const dave = new FakeContact(whatsapp, "4915550001414", "Dave");
    const group = whatsapp.messaging.createGroup("Choir", carol.account, [dave.account, phone.account]);
    const sent = await carol.sendGroupText(group, "rehearsal at eight");
    const received = await webhook(SID, "message.received", "the group message's webhook", idIs(sent.id));
    expect(received).toMatchObject({
      remoteJid: group.jid,
      sender: carol.jid,
      fromMe: false,
      pushName: "Carol",
      message: { type: "text", text: "rehearsal at eight" },
    });
  }, 60_000);

  it("every message type the API sends is what the contact's phone decrypts", async () => {
    const erin = new FakeContact(whatsapp, "4915550001515", "Erin");
    const jid = jidPath(erin.jid);
    const arrived = async (id: string, what: string) =>
      (await eventually(async () => erin.inbox.find((message) => message.id === id), 30_000, what)).message;
    const post = async (path: string, body: unknown, method = "POST") => {
      const res = await api.call<Envelope<{ id: string }>>(method, `/api/messages/${SID}/${path}`, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(200);
      return res.body.data?.id ?? "";
    };

    const text = await post(`${jid}/send`, { message: { text: "the order is ready" } });
    expect((await arrived(text, "the text")).extendedTextMessage?.text).toBe("the order is ready");

    const location = await arrived(
      await post(`${jid}/location`, { latitude: 52.52, longitude: 13.405, name: "Shop" }),
      "the location",
    );
    expect(location.locationMessage).toMatchObject({ degreesLatitude: 52.52, degreesLongitude: 13.405 });

    const vcard = "BEGIN:VCARD\nVERSION:3.0\nFN:Ada\nTEL;type=CELL:+4915550009900\nEND:VCARD";
    const card = await arrived(
      await post(`${jid}/contact`, { contacts: [{ displayName: "Ada", vcard }] }),
      "the contact card",
    );
    expect(card.contactMessage?.vcard ?? card.contactsArrayMessage?.contacts?.[0]?.vcard).toContain("FN:Ada");

    const poll = await arrived(
      await post(`${jid}/poll`, { question: "Pickup?", options: ["9", "12"] }),
      "the poll",
    );
    const pollCreation = poll.pollCreationMessageV3 ?? poll.pollCreationMessage;
    expect(pollCreation?.options?.map((option) => option.optionName)).toEqual(["9", "12"]);

    const replyId = await post(`${jid}/${text}/reply`, { message: "as promised" });
    const reply = await arrived(replyId, "the reply");
    expect(reply.extendedTextMessage?.contextInfo?.stanzaId).toBe(text);

    const before = erin.inbox.length;
    await post(`${jid}/${text}/react`, { emoji: "👍" });
    await post(`${jid}/${text}`, { text: "the order is packed" }, "PATCH");
    await post(`${jid}/${replyId}`, undefined, "DELETE");
    const actions = await eventually(
      async () => (erin.inbox.length >= before + 3 ? erin.inbox.slice(before) : undefined),
      30_000,
      "the reaction, the edit and the deletion",
    );
    const [reaction, edit, deletion] = actions.map((received) => received.message);
    expect(reaction?.reactionMessage).toMatchObject({ text: "👍", key: { id: text } });
    expect(edit?.protocolMessage).toMatchObject({ key: { id: text } });
    expect(
      edit?.protocolMessage?.editedMessage?.conversation ??
        edit?.protocolMessage?.editedMessage?.extendedTextMessage?.text,
    ).toBe("the order is packed");
    expect(deletion?.protocolMessage).toMatchObject({ type: 0, key: { id: replyId } });

    const form = new FormData();
    form.set(
      "file",
      new Blob([Buffer.from("%PDF-1.4 invoice 42")], { type: "application/pdf" }),
      "invoice.pdf",
    );
    form.set("type", "document");
    const upload = await rawCall(world.stack.baseUrl, api, "POST", `/api/messages/${SID}/${jid}/media`, {
      body: form,
    });
    expect(upload.status, JSON.stringify(upload.body)).toBe(200);
    const document = await arrived((upload.body as Envelope<{ id: string }>).data.id, "the document");
    expect(document.documentMessage).toMatchObject({ fileName: "invoice.pdf", mimetype: "application/pdf" });
    const media = whatsapp.messaging.media;
    if (!media || !document.documentMessage) throw new Error("no document");
    expect((await media.decryptMedia(document.documentMessage, "document")).toString()).toBe(
      "%PDF-1.4 invoice 42",
    );

    // Forwarded to someone else, and an image sent as a sticker (WebP, made by the bridge).
    const finn = new FakeContact(whatsapp, "4915550001616", "Finn");
    const forward = await api.call<Envelope<{ results: Array<{ id?: string; jid?: string }> }>>(
      "POST",
      `/api/messages/${SID}/forward`,
      { fromJid: erin.jid, messageId: text, toJids: [finn.jid] },
    );
    expect(forward.status, JSON.stringify(forward.body)).toBe(200);
    const forwarded = await eventually(async () => finn.inbox[0], 30_000, "the forwarded message");
    const forwardedText = forwarded.message.extendedTextMessage ?? forwarded.message.conversation;
    expect(JSON.stringify(forwardedText)).toContain("the order is packed");
    const sticker = new FormData();
    const png = await sharp({ create: { width: 32, height: 32, channels: 4, background: "#0f0" } })
      .png()
      .toBuffer();
    sticker.set("file", new Blob([png], { type: "image/png" }), "smile.png");
    sticker.set("type", "sticker");
    const stickerSent = await rawCall(world.stack.baseUrl, api, "POST", `/api/messages/${SID}/${jid}/media`, {
      body: sticker,
    });
    expect(stickerSent.status, JSON.stringify(stickerSent.body)).toBe(200);
    const stickerMessage = (
      await arrived((stickerSent.body as Envelope<{ id: string }>).data.id, "the sticker")
    ).stickerMessage;
    expect(stickerMessage?.mimetype).toBe("image/webp");
    if (!stickerMessage) throw new Error("no sticker");
    const webp = await media.decryptMedia(stickerMessage, "sticker");
    expect((await sharp(webp).metadata()).format).toBe("webp");
    expect(erin.device.failures).toEqual([]);
  }, 120_000);
});

type Chat = { jid: string };
type Message = { id: string; content: string | null; fromMe: boolean };
type Group = { jid: string; subject: string };

const HISTORY_SID = "real-wa";
const PHONE = "4915550004444";
const FRIEND = "4915550005555@s.whatsapp.net";
const now = () => Math.floor(Date.now() / 1000);
const day = 86_400;

let historyDevice: LinkedDevice;

describe("pairing history, joined groups and logout from the phone", () => {
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

    const sid = HISTORY_SID;
    expect((await api.call("POST", "/api/sessions", { name: sid, sessionId: sid })).status).toBe(200);
    await createWebhook(api, sid, { name: "all", url: receiver.url(`/${sid}`), events: ["*"] });
    historyDevice = await pairByQr(api, whatsapp, sid, PHONE);
    const connected = await sessionInState(api, sid, "connected");
    expect(connected.status).toBe("Connected");
    expect(connected.me?.id).toBe(historyDevice.jid);

    const messages = await eventually(
      async () => {
        const res = await api.call<Envelope<Message[]>>("GET", `/api/chat/${sid}/${jidPath(FRIEND)}`);
        return res.status === 200 && res.body.data.length >= 2 ? res.body.data : undefined;
      },
      60_000,
      "the pairing history in the chat",
    );
    expect(messages.map((m) => [m.id, m.content, m.fromMe]).sort()).toEqual([
      ["HIST1", "lunch?", false],
      ["HIST2", "see you tomorrow", true],
    ]);
    const chats = (await api.call<Envelope<Chat[]>>("GET", `/api/chat/${sid}`)).body.data;
    expect(chats.map((chat) => chat.jid)).toContain(FRIEND);

    const groups = await eventually(
      async () => {
        const res = await api.call<Envelope<Group[]>>("GET", `/api/groups/${sid}`);
        return res.status === 200 && res.body.data.length > 0 ? res.body.data : undefined;
      },
      30_000,
      "the groups already joined",
    );
    expect(groups).toEqual([
      expect.objectContaining({ jid: "120363000000000042@g.us", subject: "Book club" }),
    ]);
    // History is stored, not announced: no message.received webhook for it.
    const events = (await receiver.received(`/${sid}`)).map((request) => payloadOf(request));
    expect(JSON.stringify(events)).not.toContain("HIST1");
  }, 240_000);

  it("delivers a contact's encrypted message as message.received; the phone unlinking ends logged_out", async () => {
    const contact = new FakeContact(whatsapp, "4915550006666", "Encrypted Friend");
    await contact.sendText(historyDevice, "hello through Signal");
    const received = await webhook(HISTORY_SID, "message.received", "a message.received webhook");
    expect(JSON.stringify(received)).toContain("hello through Signal");

    whatsapp.removeDevice(historyDevice.jid);
    const ended = await sessionInState(api, HISTORY_SID, "logged_out", 30_000);
    expect(ended.status).toBe("Disconnected");
    expect(ended.me).toBeNull();
  }, 120_000);
});
