// Outreach on real Baileys against the protocol-level fake WhatsApp, through the public API only (the
// features README.md listed as proven on the simulator only): a list arrives as its numbered text; a
// video, an audio file and a voice note sent through the API are uploaded to the fake's media host and
// the contact decrypts each byte for byte (type, mimetype, ptt); a contact's video and voice note are
// webhooks, stored, and download through the API unchanged; a broadcast reaches each of three phones
// once; a scheduled message fires on the session's alarm; send pacing shows "typing…" in the chat
// before each message and keeps the gap between two sends, as the contact's phone sees them.
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeContact } from "../fake-whatsapp/contact.ts";
import type { Received } from "../fake-whatsapp/device.ts";
import type { FakeMediaHost } from "../fake-whatsapp/media.ts";
import type { FakeWhatsApp, LinkedDevice } from "../fake-whatsapp/server.ts";
import { type ApiClient, eventually } from "../support/api.ts";
import {
  type FakeWhatsAppStack,
  pairByQr,
  startFakeWhatsAppStack,
  webhookData,
} from "../support/fake-whatsapp-stack.ts";
import { type Envelope, jidPath, rawCall } from "../support/messaging.ts";
import { createWebhook, type Receiver } from "../support/receiver.ts";
import { testAudio, testVideo } from "../support/video.ts";

let world: FakeWhatsAppStack;
let whatsapp: FakeWhatsApp;
let api: ApiClient;
let receiver: Receiver;
let media: FakeMediaHost;
let device: LinkedDevice;

const SID = `outreach-${Math.random().toString(36).slice(2, 8)}`;
const ACCOUNT = "491555018888";

beforeAll(async () => {
  // Broadcasts keep 10–20 s between recipients by default; a short gap keeps the file quick.
  world = await startFakeWhatsAppStack({ BROADCAST_GAP_MS: "200-400" });
  ({ whatsapp, api, receiver } = world);
  if (!whatsapp.messaging.media) throw new Error("no media host");
  media = whatsapp.messaging.media;
  expect((await api.call("POST", "/api/sessions", { name: SID, sessionId: SID })).status).toBe(200);
  await createWebhook(api, SID, {
    name: "inbound",
    url: receiver.url(`/${SID}`),
    events: ["message.received"],
  });
  device = await pairByQr(api, whatsapp, SID, ACCOUNT);
}, 120_000);

afterAll(async () => {
  await world?.stop();
});

/** What `contact` decrypted with the id `id`, once it has arrived. */
const arrived = (contact: FakeContact, id: string, what: string): Promise<Received> =>
  eventually(async () => contact.inbox.find((message) => message.id === id), 30_000, what);

async function sendJson(path: string, body: unknown): Promise<string> {
  const res = await api.call<Envelope<{ id: string }>>("POST", `/api/messages/${SID}/${path}`, body);
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body.data.id;
}

async function upload(to: string, kind: string, file: Buffer, type: string, name: string, caption?: string) {
  const form = new FormData();
  form.set("file", new Blob([file], { type }), name);
  form.set("type", kind);
  if (caption) form.set("caption", caption);
  const res = await rawCall(world.stack.baseUrl, api, "POST", `/api/messages/${SID}/${jidPath(to)}/media`, {
    body: form,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as Envelope<{ id: string }>).data.id;
}

async function downloaded(id: string): Promise<Buffer> {
  const res = await fetch(`${world.stack.baseUrl}/api/messages/${SID}/download/${id}/media`, {
    headers: { "X-API-Key": api.key },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe("outreach on real Baileys against the fake WhatsApp", () => {
  it("a list is the numbered text the contact's phone shows", async () => {
    const contact = new FakeContact(whatsapp, "491555010101", "Lena");
    const id = await sendJson(`${jidPath(contact.jid)}/list`, {
      title: "Opening hours",
      options: ["Weekdays", "Saturday"],
      footer: "Reply with a number",
    });
    const list = await arrived(contact, id, "the list");
    expect(list.text).toBe("*Opening hours*\n1. Weekdays\n2. Saturday\n\n_Reply with a number_");
    // Pacing is off by default: no "typing…" before it.
    expect(contact.chatStates).toEqual([]);
  }, 60_000);

  it("a video, an audio file and a voice note sent through the API are decrypted byte for byte", async () => {
    const contact = new FakeContact(whatsapp, "491555010202", "Viktor");
    const [video, mp3, opus] = await Promise.all([testVideo(), testAudio("mp3"), testAudio("opus")]);

    const videoId = await upload(contact.jid, "video", video, "video/mp4", "clip.mp4", "the shop floor");
    const videoMessage = (await arrived(contact, videoId, "the video")).message.videoMessage;
    if (!videoMessage) throw new Error("not a video message");
    expect(videoMessage).toMatchObject({ caption: "the shop floor", mimetype: "video/mp4" });
    expect((await media.decryptMedia(videoMessage, "video")).equals(video)).toBe(true);
    // The preview the phone shows before it downloads: the bridge's (Baileys' needs ffmpeg on the PATH).
    const preview = await sharp(videoMessage.jpegThumbnail ?? new Uint8Array()).metadata();
    expect(preview).toMatchObject({ format: "jpeg", width: 32 });

    const audioId = await upload(contact.jid, "audio", mp3, "audio/mpeg", "tone.mp3");
    const audioMessage = (await arrived(contact, audioId, "the audio file")).message.audioMessage;
    if (!audioMessage) throw new Error("not an audio message");
    expect(audioMessage.ptt).toBeFalsy();
    expect(audioMessage.mimetype).toBe("audio/mpeg");
    // Baileys reads the duration itself (music-metadata); a phone shows it on the player.
    expect(audioMessage.seconds).toBe(1);
    expect((await media.decryptMedia(audioMessage, "audio")).equals(mp3)).toBe(true);

    const voiceId = await upload(contact.jid, "voice", opus, "audio/ogg", "note.ogg");
    const voice = (await arrived(contact, voiceId, "the voice note")).message.audioMessage;
    if (!voice) throw new Error("not an audio message");
    expect(voice.ptt).toBe(true);
    expect(voice.mimetype).toBe("audio/ogg; codecs=opus");
    expect((await media.decryptMedia(voice, "audio")).equals(opus)).toBe(true);
    // The bars the phone draws on it: the bridge's (Baileys' needs the optional audio-decode package).
    expect(voice.waveform).toHaveLength(64);
    expect(Math.max(...(voice.waveform ?? []))).toBe(100);
    expect(contact.device.failures).toEqual([]);
  }, 90_000);

  it("a contact's video and voice note are webhooks, stored, and download through the API unchanged", async () => {
    const contact = new FakeContact(whatsapp, "491555010303", "Mira");
    const [video, opus] = await Promise.all([testVideo(), testAudio("opus")]);
    const sentVideo = await contact.sendMedia(device, {
      video,
      caption: "from my phone",
      mimetype: "video/mp4",
    });
    const sentVoice = await contact.sendMedia(device, {
      audio: opus,
      ptt: true,
      mimetype: "audio/ogg; codecs=opus",
    });
    const webhook = (id: string, what: string) =>
      eventually(
        async () =>
          (await webhookData(receiver, SID, "message.received")).find(
            (data) => (data as { id?: string }).id === id,
          ),
        30_000,
        what,
      );
    expect(await webhook(sentVideo.id, "the video's webhook")).toMatchObject({
      remoteJid: contact.jid,
      message: {
        type: "video",
        caption: "from my phone",
        media: { mimetype: "video/mp4", size: video.length },
      },
    });
    expect(await webhook(sentVoice.id, "the voice note's webhook")).toMatchObject({
      remoteJid: contact.jid,
      message: { type: "audio", ptt: true, media: { mimetype: "audio/ogg; codecs=opus", size: opus.length } },
    });

    const history = await api.call<Envelope<Array<{ id: string; type: string; mediaUrl: string | null }>>>(
      "GET",
      `/api/chat/${SID}/${jidPath(contact.jid)}`,
    );
    const stored = new Map(history.body.data.map((message) => [message.id, message]));
    expect(stored.get(sentVideo.id)).toMatchObject({ type: "VIDEO", mediaUrl: expect.any(String) });
    expect(stored.get(sentVoice.id)).toMatchObject({ type: "AUDIO", mediaUrl: expect.any(String) });
    expect((await downloaded(sentVideo.id)).equals(video)).toBe(true);
    expect((await downloaded(sentVoice.id)).equals(opus)).toBe(true);
  }, 90_000);

  it("a broadcast to three contacts reaches each phone exactly once", async () => {
    const contacts = ["491555010404", "491555010405", "491555010406"].map(
      (number, i) => new FakeContact(whatsapp, number, `Broadcast ${i}`),
    );
    const started = await api.call<Envelope<{ broadcastId: string; total: number }>>(
      "POST",
      `/api/messages/${SID}/broadcast`,
      { recipients: contacts.map((contact) => contact.jid), message: "Doors open at nine" },
    );
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const { broadcastId } = started.body.data;
    const done = await eventually(
      async () => {
        const res = await api.call<Envelope<{ status: string; sent: number; failed: number }>>(
          "GET",
          `/api/messages/${SID}/broadcast/history/${broadcastId}`,
        );
        return res.body.data.sent + res.body.data.failed === contacts.length ? res.body.data : undefined;
      },
      60_000,
      "the broadcast to finish",
    );
    expect(done).toMatchObject({ sent: 3, failed: 0 });
    for (const contact of contacts) {
      await eventually(async () => contact.inbox[0], 30_000, `${contact.name} receiving the broadcast`);
    }
    for (const contact of contacts) {
      expect(contact.inbox.map((message) => message.text)).toEqual(["Doors open at nine"]);
      expect(contact.device.failures).toEqual([]);
    }
  }, 90_000);

  it("a message scheduled a few seconds ahead reaches the contact's phone when it is due", async () => {
    const contact = new FakeContact(whatsapp, "491555010707", "Sami");
    const sendAt = Date.now() + 3_000;
    const res = await api.call<Envelope<{ id: string }>>("POST", `/api/scheduler/${SID}`, {
      jid: contact.jid,
      content: "Your table is ready",
      sendAt: new Date(sendAt).toISOString(),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const received = await eventually(async () => contact.inbox[0], 30_000, "the scheduled message");
    expect(received.text).toBe("Your table is ready");
    expect(received.at).toBeGreaterThanOrEqual(sendAt);
    const row = await eventually(
      async () => {
        const scheduled = await api.call<Envelope<{ status: string; messageId: string | null }>>(
          "GET",
          `/api/scheduler/${SID}/${res.body.data.id}`,
        );
        return scheduled.body.data.status === "SENT" ? scheduled.body.data : undefined;
      },
      30_000,
      "the scheduled message SENT",
    );
    expect(row.messageId).toBe(received.id);
    expect(contact.inbox).toHaveLength(1);
  }, 60_000);

  it("send pacing: the contact sees typing before each message, and two sends arrive the gap apart", async () => {
    const contact = new FakeContact(whatsapp, "491555010808", "Pia");
    const gapMs = 1_500;
    const typingMs = 400;
    const settings = await api.call("PATCH", `/api/sessions/${SID}/settings`, {
      config: { sendGapMs: gapMs, typingMs },
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const [first, second] = await Promise.all([
      sendJson(`${jidPath(contact.jid)}/send`, { message: { text: "first" } }),
      sendJson(`${jidPath(contact.jid)}/send`, { message: { text: "second" } }),
    ]);
    const one = await arrived(contact, first, "the first paced message");
    const two = await arrived(contact, second, "the second paced message");
    expect([one.text, two.text]).toEqual(["first", "second"]);
    expect(two.at - one.at).toBeGreaterThanOrEqual(gapMs);

    const typing = contact.chatStates.filter((seen) => seen.state === "composing");
    expect(typing.map((seen) => seen.from)).toEqual([
      `${ACCOUNT}@s.whatsapp.net`,
      `${ACCOUNT}@s.whatsapp.net`,
    ]);
    const [typedFirst, typedSecond] = typing.map((seen) => seen.at);
    expect(typedFirst).toBeLessThan(one.at);
    expect(typedSecond).toBeGreaterThan(one.at);
    expect(typedSecond).toBeLessThan(two.at);
  }, 60_000);
});
