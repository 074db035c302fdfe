// Sending every message type through HTTP on the real stack (`SIMULATOR=1 npm start`), checked at the
// other end: the simulated peers must receive exactly what was sent (type, content, mentions, quote).
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import {
  connectedSession,
  type Envelope,
  inbox,
  jidPath,
  personJid,
  rawCall,
  world,
} from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { testAudio } from "../support/video.ts";

type Message = {
  id: string;
  type: string;
  content: string | null;
  message: Record<string, unknown>;
  status: string;
};
type Delivered = {
  chat: string;
  id: string;
  content: { type: string; [key: string]: unknown };
  quotedId?: string;
};

let stack: Stack;
let api: ApiClient;
let files: Server;
let filesUrl = "";
let png: Buffer;
let voice: Buffer;
let wav: Buffer;
const SID = "sender";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const FILES: Record<string, { type: string; bytes: () => Buffer }> = {
  "/cat.png": { type: "image/png", bytes: () => png },
  "/clip.mp4": { type: "video/mp4", bytes: () => Buffer.from("\0\0\0\x18ftypmp42 fake video bytes") },
  "/song.mp3": { type: "audio/mpeg", bytes: () => Buffer.from("ID3 fake audio bytes") },
  // A voice note must really be Ogg/Opus to be sent as is (anything else is converted).
  "/note.ogg": { type: "audio/ogg", bytes: () => voice },
  "/tone.wav": { type: "audio/wav", bytes: () => wav },
  "/report.pdf": { type: "application/pdf", bytes: () => Buffer.from("%PDF-1.4 fake") },
};

beforeAll(async () => {
  voice = await testAudio("opus");
  wav = await testAudio("wav");
  png = await sharp({ create: { width: 64, height: 48, channels: 4, background: "#ff0000" } })
    .png()
    .toBuffer();
  files = createServer((req, res) => {
    const file = FILES[req.url ?? ""];
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": file.type }).end(file.bytes());
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  const address = files.address();
  filesUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
  await connectedSession(api, SID);
});

afterAll(async () => {
  await stack?.stop();
  files?.close();
});

const send = (jid: string, body: unknown, sid = SID, client = api) =>
  client.call<Envelope<Message>>("POST", `/api/messages/${sid}/${jidPath(jid)}/send`, body);

async function deliveredTo(jid: string, id: string): Promise<Delivered> {
  const entries = await inbox<Delivered>(api, SID, jid);
  const entry = entries.find((e) => e.id === id);
  if (!entry) throw new Error(`${id} not delivered to ${jid}: ${JSON.stringify(entries)}`);
  return entry;
}

describe("POST /messages/{sessionId}/{jid}/send", () => {
  it("text with mentions arrives once, as sent, and is stored", async () => {
    const to = personJid();
    const mention = personJid();
    const res = await send(to, { message: { text: "hello @there" }, mentions: [mention] });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      type: "TEXT",
      content: "hello @there",
      status: "SENT",
      fromMe: true,
    });
    const delivered = await inbox<Delivered>(api, SID, to);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.content).toEqual({ type: "text", text: "hello @there", mentions: [mention] });
    const history = await api.call<Envelope<Message[]>>("GET", `/api/chat/${SID}/${jidPath(to)}`);
    expect(history.body.data.map((m) => m.id)).toEqual([res.body.data.id]);
    const detail = await api.call<Envelope<{ messageCount: number; _count: { messages: number } }>>(
      "GET",
      `/api/sessions/${SID}`,
    );
    expect(detail.body.data.messageCount).toBeGreaterThanOrEqual(1);
    expect(detail.body.data._count.messages).toBe(detail.body.data.messageCount);
  });

  it("image, video, audio, voice and document by URL: the peer gets the same bytes and types", async () => {
    const to = personJid();
    const cases = [
      { body: { image: { url: `${filesUrl}/cat.png` }, caption: "a cat" }, type: "image", file: "/cat.png" },
      { body: { video: { url: `${filesUrl}/clip.mp4` }, caption: "clip" }, type: "video", file: "/clip.mp4" },
      { body: { audio: { url: `${filesUrl}/song.mp3` } }, type: "audio", file: "/song.mp3", ptt: false },
      { body: { voice: { url: `${filesUrl}/note.ogg` } }, type: "audio", file: "/note.ogg", ptt: true },
      {
        body: {
          document: { url: `${filesUrl}/report.pdf` },
          fileName: "Q3.pdf",
          mimetype: "application/pdf",
        },
        type: "document",
        file: "/report.pdf",
      },
    ];
    for (const sample of cases) {
      const res = await send(to, { message: sample.body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const got = await deliveredTo(to, res.body.data.id);
      expect(got.content.type).toBe(sample.type);
      const media = got.content.media as { sha256: string; size: number };
      const bytes = FILES[sample.file]?.bytes() ?? Buffer.alloc(0);
      expect(media.sha256).toBe(sha256(bytes));
      expect(media.size).toBe(bytes.length);
      if ("ptt" in sample) expect(got.content.ptt).toBe(sample.ptt);
      if (sample.type === "document") expect(got.content).toMatchObject({ fileName: "Q3.pdf" });
      if (sample.type === "image") expect(got.content.caption).toBe("a cat");
    }
  });

  it("a voice note in another format arrives as Ogg/Opus; a picture sent as a video is a 400", async () => {
    const to = personJid();
    const res = await send(to, { message: { voice: { url: `${filesUrl}/tone.wav` } } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = await deliveredTo(to, res.body.data.id);
    expect(got.content).toMatchObject({ type: "audio", ptt: true });
    expect((got.content.media as { mimetype: string }).mimetype).toBe("audio/ogg; codecs=opus");
    const lying = await send(to, { message: { video: { url: `${filesUrl}/cat.png` } } });
    expect(lying.status).toBe(400);
    expect(JSON.stringify(lying.body)).toContain("video content is image/png");
  });

  it("a sticker URL, plain or with pack and author, arrives as WebP", async () => {
    const to = personJid();
    for (const sticker of [
      `${filesUrl}/cat.png`,
      { url: `${filesUrl}/cat.png`, pack: "Pets", author: "Me" },
    ]) {
      const res = await send(to, { message: { sticker } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const got = await deliveredTo(to, res.body.data.id);
      expect(got.content.type).toBe("sticker");
      expect((got.content.media as { mimetype: string }).mimetype).toBe("image/webp");
    }
  });

  it("a quoted reply carries the quoted id to the peer", async () => {
    const peer = personJid();
    const { id } = await world<{ id: string }>(api, SID, "receive", {
      from: peer,
      content: { type: "text", text: "question?" },
    });
    await eventually(async () => {
      const history = await api.call<Envelope<Message[]>>("GET", `/api/chat/${SID}/${jidPath(peer)}`);
      return history.body.data.some((m) => m.id === id) ? true : undefined;
    });
    const res = await send(peer, { message: { text: "answer" }, quotedMessageId: id });
    expect(res.status).toBe(200);
    expect((await deliveredTo(peer, res.body.data.id)).quotedId).toBe(id);
    expect((await send(peer, { message: { text: "x" }, quotedMessageId: "NOPE" })).status).toBe(404);
  });

  it("bad input answers 400 and sends nothing", async () => {
    const to = personJid();
    const bad: unknown[] = [
      {},
      { message: {} },
      { message: { text: "" } },
      { message: { text: "hi" }, extra: 1 },
      { message: { image: { url: "ftp://example.com/x.png" } } },
      { message: { text: "hi" }, mentions: ["not-a-jid"] },
    ];
    for (const body of bad) expect((await send(to, body)).status, JSON.stringify(body)).toBe(400);
    for (const jid of ["12345", "abc@s.whatsapp.net", "123@g.us.evil"]) {
      expect((await send(jid, { message: { text: "hi" } })).status, jid).toBe(400);
    }
    const malformed = await rawCall(stack.baseUrl, api, "POST", `/api/messages/${SID}/${jidPath(to)}/send`, {
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(await inbox(api, SID, to)).toEqual([]);
  });

  it("a media URL that cannot be fetched is refused with 400", async () => {
    const res = await send(personJid(), { message: { image: { url: `${filesUrl}/missing.png` } } });
    expect(res.status).toBe(400);
  });

  it("unknown session and someone else's session 404, a stopped session 503", async () => {
    expect((await send(personJid(), { message: { text: "x" } }, "no-such-session")).status).toBe(404);
    const other = await ownerClient(stack.baseUrl, api);
    const res = await send(personJid(), { message: { text: "x" } }, SID, other);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ status: false, message: "Session not found" });
    expect((await api.call("POST", "/api/sessions", { name: "idle", sessionId: "idle" })).status).toBe(200);
    const down = await send(personJid(), { message: { text: "x" } }, "idle");
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: false, message: "Session not ready" });
  });
});

describe("POST /messages/{sessionId}/{jid}/media (multipart)", () => {
  const upload = (jid: string, form: FormData) =>
    rawCall(stack.baseUrl, api, "POST", `/api/messages/${SID}/${jidPath(jid)}/media`, { body: form });

  it("sends an uploaded file as each media type", async () => {
    const to = personJid();
    for (const type of ["image", "document", "voice", "sticker"]) {
      const form = new FormData();
      if (type === "voice") form.set("file", new Blob([voice], { type: "audio/ogg" }), "note.ogg");
      else form.set("file", new Blob([png], { type: "image/png" }), "cat.png");
      form.set("type", type);
      if (type === "image") form.set("caption", "uploaded");
      const res = await upload(to, form);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const id = (res.body as Envelope<Message>).data.id;
      const got = await deliveredTo(to, id);
      const expected = type === "voice" ? "audio" : type;
      expect(got.content.type).toBe(expected);
      const sent = type === "voice" ? voice : png;
      if (type !== "sticker") expect((got.content.media as { sha256: string }).sha256).toBe(sha256(sent));
      if (type === "voice") expect(got.content.ptt).toBe(true);
    }
  });

  it("400 without a file or with a bad type, 413 above a kind's limit, 415 for JSON", async () => {
    const to = personJid();
    const noFile = new FormData();
    noFile.set("type", "image");
    expect((await upload(to, noFile)).status).toBe(400);
    const badType = new FormData();
    badType.set("file", new Blob([png]), "a.png");
    badType.set("type", "hologram");
    expect((await upload(to, badType)).status).toBe(400);
    // An image above WhatsApp's 16 MiB (a document of that size is fine: documents go to 2 GiB).
    const huge = new FormData();
    huge.set("file", new Blob([new Uint8Array(16 * 1024 * 1024 + 1)]), "big.png");
    huge.set("type", "image");
    expect((await upload(to, huge)).status).toBe(413);
    const sticker = new FormData();
    sticker.set("file", new Blob([new Uint8Array(1024 * 1024 + 1)]), "big.webp");
    sticker.set("type", "sticker");
    expect((await upload(to, sticker)).status).toBe(413);
    const json = await rawCall(stack.baseUrl, api, "POST", `/api/messages/${SID}/${jidPath(to)}/media`, {
      body: JSON.stringify({ file: "x" }),
      headers: { "content-type": "application/json" },
    });
    expect(json.status).toBe(415);
    expect(await inbox(api, SID, to)).toEqual([]);
  });
});

describe("polls, locations and contact cards", () => {
  const post = (jid: string, kind: string, body: unknown) =>
    api.call<Envelope<Message> & { success: boolean }>(
      "POST",
      `/api/messages/${SID}/${jidPath(jid)}/${kind}`,
      body,
    );

  it("a poll arrives with its options and selectable count; out-of-range polls are 400", async () => {
    const to = personJid();
    const res = await post(to, "poll", {
      question: "Lunch?",
      options: ["Pizza", "Sushi"],
      selectableCount: 2,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: true, success: true });
    expect((await deliveredTo(to, res.body.data.id)).content).toEqual({
      type: "poll",
      question: "Lunch?",
      options: ["Pizza", "Sushi"],
      selectableCount: 2,
    });
    const thirteen = Array.from({ length: 13 }, (_, i) => `o${i}`);
    for (const body of [
      { question: "q", options: ["one"] },
      { question: "q", options: thirteen },
      { question: "q", options: ["a", "b"], selectableCount: 0 },
      { question: "q", options: ["a", "b"], selectableCount: 3 },
      { question: "q", options: ["a", "a"] },
      { options: ["a", "b"] },
    ]) {
      expect((await post(to, "poll", body)).status, JSON.stringify(body)).toBe(400);
    }
    expect(await inbox(api, SID, to)).toHaveLength(1);
  });

  it("a location is range-checked and arrives as sent", async () => {
    const to = personJid();
    const res = await post(to, "location", { latitude: -6.2, longitude: 106.8, name: "Monas" });
    expect(res.status).toBe(200);
    expect((await deliveredTo(to, res.body.data.id)).content).toMatchObject({
      type: "location",
      latitude: -6.2,
      longitude: 106.8,
      name: "Monas",
    });
    for (const body of [
      { latitude: 91, longitude: 0 },
      { latitude: 0, longitude: -181 },
      { latitude: "1", longitude: 2 },
      { longitude: 2 },
    ]) {
      expect((await post(to, "location", body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it("contact cards arrive as vCards", async () => {
    const to = personJid();
    const vcard = "BEGIN:VCARD\nVERSION:3.0\nFN:Ann\nTEL;type=CELL;waid=628123:+62 8123\nEND:VCARD";
    const res = await post(to, "contact", { contacts: [{ displayName: "Ann", vcard }] });
    expect(res.status).toBe(200);
    expect((await deliveredTo(to, res.body.data.id)).content).toEqual({
      type: "contacts",
      contacts: [{ displayName: "Ann", vcard }],
    });
    expect((await post(to, "contact", { contacts: [{ displayName: "Ann" }] })).status).toBe(400);
    expect((await post(to, "contact", { contacts: [] })).status).toBe(400);
  });

  it("a list is sent as readable text", async () => {
    const to = personJid();
    const res = await post(to, "list", { title: "Menu", options: ["Tea", "Coffee"], footer: "Pick one" });
    expect(res.status).toBe(200);
    const got = await deliveredTo(to, res.body.data.id);
    expect(got.content).toEqual({ type: "text", text: "*Menu*\n1. Tea\n2. Coffee\n\n_Pick one_" });
  });
});
