// Bot commands, keyword auto-replies, read receipts and call rejection on the real stack: a session
// on the simulated WhatsApp network, peers writing to it, and what the peers got back.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually, ownerClient } from "../support/api.ts";
import { connectedSession, inbox, personJid, world } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";
import { testVideo } from "../support/video.ts";

type Entry = { id: string; quotedId?: string; content: { type: string; text?: string; caption?: string } };
type Rule = { id: string; keyword: string; matchType: string; triggerType: string; isMedia: boolean };

const SID = "botty";
let stack: Stack;
let api: ApiClient;
let png: Buffer;
let png64: string;
let mp464: string;
let files: Server;
let filesUrl: string;

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
  await connectedSession(api, SID);
  png = await sharp({ create: { width: 64, height: 48, channels: 4, background: "#3a7" } })
    .png()
    .toBuffer();
  png64 = png.toString("base64");
  mp464 = (await testVideo()).toString("base64");
  // Stands in for a public file host: auto-replies with media send them by URL.
  files = createServer((_req, res) => res.writeHead(200, { "content-type": "image/png" }).end(png));
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});

afterAll(async () => {
  files?.close();
  await stack?.stop();
});

async function bot(patch: Record<string, unknown>) {
  expect((await api.call("POST", `/api/sessions/${SID}/bot-config`, patch)).status).toBe(200);
}
async function settings(config: { readReceipts: boolean; rejectCalls: boolean }) {
  expect((await api.call("PATCH", `/api/sessions/${SID}/settings`, { config })).status).toBe(200);
}
const ALL_ON = { enablePing: true, enableUptime: true, enableSticker: true, enableVideoSticker: true };
const BASE = { enabled: true, botMode: "OWNER", autoReplyMode: "ALL", prefix: "#", botName: "Test Bot" };
const LISTS = { botAllowedJids: [], botBlockedJids: [], autoReplyAllowedJids: [] };
const DEFAULTS = { ...BASE, ...ALL_ON, ...LISTS, autoReplyBlockedJids: [], maxStickerDuration: 10 };
const pause = () => new Promise((resolve) => setTimeout(resolve, 1_500));

async function receive(from: string, content: object | string, extra: object = {}) {
  const body = typeof content === "string" ? { type: "text", text: content } : content;
  return (await world<{ id: string }>(api, SID, "receive", { from, content: body, ...extra })).id;
}
const phoneSend = async (to: string, text: string) =>
  (await world<{ id: string }>(api, SID, "phone.send", { to, text })).id;

/** The bot's answer to message `id` in `chat` (answers quote what they answer). */
const replyTo = (chat: string, id: string) => {
  const find = async () => (await inbox<Entry>(api, SID, chat)).find((e) => e.quotedId === id);
  return eventually(find, 10_000, `reply to ${id}`);
};
const textOf = (entry: Entry) => entry.content.text ?? entry.content.caption ?? "";
/** What the bot answered to a message `from` sent (in `extra.chat`, else in the direct chat). */
type Extra = { chat?: string; quotedId?: string };
const answer = async (from: string, content: object | string, extra: Extra = {}) =>
  textOf(await replyTo(extra.chat ?? from, await receive(from, content, extra)));

/** "No reply": give the bot time to act, then prove nothing new reached the chat. */
async function noReply(chat: string, act: () => Promise<unknown>) {
  const before = (await inbox<Entry>(api, SID, chat)).length;
  const result = await act();
  await pause();
  const after = await inbox<Entry>(api, SID, chat);
  // A phone-typed message is itself in the inbox: it is the account's own send, not a reply.
  const own = typeof result === "string" ? after.filter((e) => e.id === result).length : 0;
  expect(after.length - own).toBe(before);
}

async function group(participants: string[]) {
  return (await world<{ jid: string }>(api, SID, "group.add", { subject: "Bot group", participants })).jid;
}
/** A different, valid JID whose digits are a prefix of `jid`'s: substring matching would hit it. */
const prefixOf = (jid: string) => `${jid.slice(0, 8)}@s.whatsapp.net`;

// An undefined caption drops out of the JSON body.
const image = (caption?: string) => ({ type: "image", mimetype: "image/png", base64: png64, caption });
const BROKEN_MP4 = Buffer.from("not an mp4").toString("base64");
const video = (seconds: number, caption: string, base64 = mp464) => ({
  type: "video",
  mimetype: "video/mp4",
  base64,
  seconds,
  caption,
});

describe("bot commands", () => {
  beforeAll(() => bot(DEFAULTS));

  it("OWNER mode: own phone messages run commands, peers' do not", async () => {
    const peer = personJid();
    const id = await phoneSend(peer, "#ping");
    expect(textOf(await replyTo(peer, id))).toBe("Pong! 🏓");
    await noReply(peer, () => receive(peer, "#ping"));
  });

  it("ping, uptime, id, menu and help answer anyone in ALL mode", async () => {
    await bot({ botMode: "ALL" });
    const peer = personJid();
    expect(await answer(peer, "#ping")).toBe("Pong! 🏓");
    expect(await answer(peer, "#UPTIME")).toMatch(/^⏱️ Uptime: (\d+[dhm] )*\d+s$/);
    expect(await answer(peer, "#id")).toBe(peer);
    const menu = await answer(peer, "#menu");
    expect(menu).toContain("Test Bot");
    for (const command of ["#ping", "#uptime", "#id", "#sticker"]) expect(menu).toContain(command);
    expect(await answer(peer, "#help")).toBe(menu);
  });

  it("each enable flag silences its command and leaves it out of the menu", async () => {
    await bot({ botMode: "ALL", enablePing: false, enableUptime: false, enableSticker: false });
    const peer = personJid();
    await noReply(peer, () => receive(peer, "#ping"));
    await noReply(peer, () => receive(peer, "#uptime"));
    await noReply(peer, () => receive(peer, image("#sticker")));
    const menu = await answer(peer, "#menu");
    for (const command of ["#ping", "#uptime", "#sticker"]) expect(menu).not.toContain(command);
    await bot({ enablePing: true, enableUptime: true, enableSticker: true });
  });

  it("uses the configured prefix", async () => {
    await bot({ botMode: "ALL", prefix: "!" });
    const peer = personJid();
    expect(await answer(peer, "!ping")).toBe("Pong! 🏓");
    await noReply(peer, () => receive(peer, "#ping"));
    await bot({ prefix: "#" });
  });

  it("SPECIFIC: allowed whole JIDs and own messages only", async () => {
    const [alice, bob, carol] = [personJid(), personJid(), personJid()];
    await bot({ botMode: "SPECIFIC", botAllowedJids: [alice, prefixOf(carol)] });
    expect(await answer(alice, "#ping")).toBe("Pong! 🏓");
    await noReply(bob, () => receive(bob, "#ping"));
    await noReply(carol, () => receive(carol, "#ping"));
    expect(textOf(await replyTo(bob, await phoneSend(bob, "#ping")))).toBe("Pong! 🏓");
  });

  it("SPECIFIC in a group: the participant is the sender", async () => {
    const [alice, bob] = [personJid(), personJid()];
    await bot({ botMode: "SPECIFIC", botAllowedJids: [alice] });
    const chat = await group([alice, bob]);
    expect(await answer(alice, "#id", { chat })).toBe(chat);
    await noReply(chat, () => receive(bob, "#id", { chat }));
  });

  it("BLACKLIST: everyone but blocked whole JIDs; own messages always", async () => {
    const [alice, bob, carol] = [personJid(), personJid(), personJid()];
    const own = (await world<{ me: string }>(api, SID, "state")).me;
    await bot({ botMode: "BLACKLIST", botBlockedJids: [bob, prefixOf(carol), own] });
    expect(await answer(alice, "#ping")).toBe("Pong! 🏓");
    await noReply(bob, () => receive(bob, "#ping"));
    expect(await answer(carol, "#ping")).toBe("Pong! 🏓");
    expect(textOf(await replyTo(bob, await phoneSend(bob, "#ping")))).toBe("Pong! 🏓");
  });

  it("enabled=false silences commands and auto-replies", async () => {
    await bot({ ...DEFAULTS, botMode: "ALL", enabled: false });
    const rule = await createRule({ keyword: "silence", response: "should not be sent" });
    const peer = personJid();
    await noReply(peer, () => receive(peer, "#ping"));
    await noReply(peer, () => receive(peer, "silence"));
    await noReply(peer, () => phoneSend(peer, "#ping"));
    await api.call("DELETE", `/api/autoreplies/${SID}/${rule.id}`);
    await bot({ enabled: true });
  });
});

describe("sticker command", () => {
  beforeAll(() => bot({ ...DEFAULTS, botMode: "ALL" }));

  it("turns a captioned image into a WebP sticker", async () => {
    const peer = personJid();
    const sticker = await replyTo(peer, await receive(peer, image("#sticker")));
    expect(sticker.content).toMatchObject({ type: "sticker", media: { mimetype: "image/webp" } });
  });

  it("turns a quoted image into a sticker (#s)", async () => {
    const peer = personJid();
    const photo = await receive(peer, image());
    const sticker = await replyTo(peer, await receive(peer, "#s", { quotedId: photo }));
    expect(sticker.content).toMatchObject({ type: "sticker", media: { mimetype: "image/webp" } });
  });

  it("explains the limit for a video over maxStickerDuration", async () => {
    const peer = personJid();
    expect(await answer(peer, video(30, "#sticker"))).toContain("at most 10 s");
  });

  it("turns a short video into an animated sticker", async () => {
    const peer = personJid();
    const clip = await receive(peer, video(1, "#sticker"));
    const sticker = await replyTo(peer, clip);
    expect(sticker.content).toMatchObject({ type: "sticker", media: { mimetype: "image/webp" } });
  });

  it("passes on the bridge's reason when it cannot convert a video, and honours enableVideoSticker", async () => {
    const peer = personJid();
    expect(await answer(peer, video(3, "#sticker", BROKEN_MP4))).toMatch(
      /^Could not make the sticker: .*ffmpeg/,
    );
    await bot({ enableVideoSticker: false });
    expect(await answer(peer, video(3, "#sticker"))).toContain("turned off");
    await bot({ enableVideoSticker: true });
  });

  it("asks for an image when there is none", async () => {
    const peer = personJid();
    expect(await answer(peer, "#sticker")).toContain("Send an image");
  });
});

async function createRule(body: Record<string, unknown>): Promise<Rule> {
  const res = await api.call<{ data: Rule }>("POST", `/api/autoreplies/${SID}`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

describe("auto-replies API", () => {
  it("creates with reference defaults, lists, updates, deletes", async () => {
    const rule = await createRule({ keyword: "Hello", response: "Hi!" });
    expect(rule).toMatchObject({ keyword: "Hello", matchType: "EXACT", triggerType: "ALL", isMedia: false });
    const list = await api.call<{ status: boolean; data: Rule[] }>("GET", `/api/autoreplies/${SID}`);
    expect(list.body.status).toBe(true);
    expect(list.body.data.map((r) => r.id)).toContain(rule.id);
    const changes = { response: "Hey", matchType: "CONTAINS" };
    const put = await api.call("PUT", `/api/autoreplies/${SID}/${rule.id}`, changes);
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({ id: rule.id, keyword: "Hello", ...changes });
    expect((await api.call("DELETE", `/api/autoreplies/${SID}/${rule.id}`)).status).toBe(200);
    expect((await api.call("DELETE", `/api/autoreplies/${SID}/${rule.id}`)).status).toBe(404);
    expect((await api.call("PUT", `/api/autoreplies/${SID}/${rule.id}`, { response: "x" })).status).toBe(404);
  });

  it("refuses invalid regexes and what RE2 cannot run, on create and on update", async () => {
    const post = (body: Record<string, unknown>) => api.call("POST", `/api/autoreplies/${SID}`, body);
    expect((await post({ keyword: "(", matchType: "REGEX", response: "x" })).status).toBe(400);
    expect((await post({ keyword: "(a)\\1", matchType: "REGEX", response: "x" })).status).toBe(400);
    // Nested quantifiers are fine on RE2: it runs in linear time whatever the pattern.
    const nested = await createRule({ keyword: "(a+)+$", matchType: "REGEX", response: "x" });
    await api.call("DELETE", `/api/autoreplies/${SID}/${nested.id}`);
    expect((await post({ keyword: "a".repeat(201), matchType: "REGEX", response: "x" })).status).toBe(400);
    const rule = await createRule({ keyword: "(", response: "x" });
    const put = await api.call("PUT", `/api/autoreplies/${SID}/${rule.id}`, { matchType: "REGEX" });
    expect(put.status).toBe(400);
    await api.call("DELETE", `/api/autoreplies/${SID}/${rule.id}`);
  });

  it("refuses bodies that disagree or say nothing", async () => {
    const post = (body: Record<string, unknown>) => api.call("POST", `/api/autoreplies/${SID}`, body);
    expect((await post({ keyword: "k" })).status).toBe(400);
    expect((await post({ keyword: "k", response: "r", extra: 1 })).status).toBe(400);
    expect((await post({ keyword: "k", mediaUrl: `${filesUrl}/a.png` })).status).toBe(400);
    expect((await post({ keyword: "k", response: "r", isMedia: true })).status).toBe(400);
    expect((await post({ keyword: "k", response: "r", matchType: "FUZZY" })).status).toBe(400);
  });

  it("404 for an unknown session and for someone else's, 401 without credentials", async () => {
    expect((await api.call("GET", "/api/autoreplies/no-such-session")).status).toBe(404);
    const body = { keyword: "k", response: "r" };
    expect((await api.call("POST", "/api/autoreplies/no-such-session", body)).status).toBe(404);
    const stranger = await ownerClient(stack.baseUrl, api, "stranger");
    expect((await stranger.call("GET", `/api/autoreplies/${SID}`)).status).toBe(404);
    expect((await stranger.call("POST", `/api/autoreplies/${SID}`, body)).status).toBe(404);
    expect((await fetch(`${stack.baseUrl}/api/autoreplies/${SID}`)).status).toBe(401);
  });
});

describe("auto-replies on live messages", () => {
  let rules: Rule[] = [];
  beforeAll(async () => {
    await bot({ ...DEFAULTS, botMode: "OWNER", autoReplyMode: "ALL" });
    rules = [
      await createRule({ keyword: "hello", response: "exact hit" }),
      await createRule({ keyword: "price", matchType: "CONTAINS", response: "contains hit" }),
      await createRule({ keyword: "order", matchType: "STARTS_WITH", response: "starts hit" }),
      await createRule({ keyword: "^inv-\\d{3}$", matchType: "REGEX", response: "regex hit" }),
      await createRule({ keyword: "grp", triggerType: "GROUP", response: "group hit" }),
      await createRule({ keyword: "prv", triggerType: "PRIVATE", response: "private hit" }),
      await createRule({
        keyword: "pic",
        response: "a pic",
        mediaType: "image",
        mediaUrl: `${filesUrl}/p.png`,
      }),
    ];
  });
  afterAll(async () => {
    for (const rule of rules) await api.call("DELETE", `/api/autoreplies/${SID}/${rule.id}`);
  });

  it("each matchType matches on lowercased text", async () => {
    const peer = personJid();
    const hit = (text: string) => answer(peer, text);
    expect(await hit("HELLO")).toBe("exact hit");
    expect(await hit("What is the PRICE?")).toBe("contains hit");
    expect(await hit("Order 55")).toBe("starts hit");
    expect(await hit("INV-123")).toBe("regex hit");
    const other = personJid();
    await noReply(other, () => receive(other, "hello there"));
    await noReply(other, () => receive(other, "my order"));
    await noReply(other, () => receive(other, "inv-1234"));
  });

  it("triggerType GROUP and PRIVATE", async () => {
    const peer = personJid();
    const chat = await group([peer]);
    expect(await answer(peer, "grp", { chat })).toBe("group hit");
    await noReply(chat, () => receive(peer, "prv", { chat }));
    expect(await answer(peer, "prv")).toBe("private hit");
    await noReply(peer, () => receive(peer, "grp"));
  });

  it("sends media by URL with the response as caption", async () => {
    const peer = personJid();
    const media = (await replyTo(peer, await receive(peer, "pic"))).content;
    expect(media).toMatchObject({ type: "image", caption: "a pic", media: { mimetype: "image/png" } });
  });

  it("ALL ignores own messages; OWNER (macro mode) answers only them, once", async () => {
    const peer = personJid();
    await noReply(peer, () => phoneSend(peer, "hello"));
    await bot({ autoReplyMode: "OWNER" });
    const loop = await createRule({ keyword: "loop", matchType: "CONTAINS", response: "loop again" });
    rules.push(loop);
    await noReply(peer, () => receive(peer, "hello"));
    await phoneSend(peer, "loop");
    await eventually(async () =>
      (await inbox<Entry>(api, SID, peer)).some((e) => textOf(e) === "loop again") ? true : undefined,
    );
    await pause();
    expect((await inbox<Entry>(api, SID, peer)).filter((e) => textOf(e) === "loop again")).toHaveLength(1);
  });

  it("SPECIFIC and BLACKLIST match whole JIDs", async () => {
    const [alice, bob, carol] = [personJid(), personJid(), personJid()];
    await bot({ autoReplyMode: "SPECIFIC", autoReplyAllowedJids: [alice, prefixOf(carol)] });
    expect(await answer(alice, "hello")).toBe("exact hit");
    await noReply(bob, () => receive(bob, "hello"));
    await noReply(carol, () => receive(carol, "hello"));
    await noReply(alice, () => phoneSend(alice, "hello"));
    await bot({ autoReplyMode: "BLACKLIST", autoReplyBlockedJids: [bob, prefixOf(carol)] });
    await noReply(bob, () => receive(bob, "hello"));
    expect(await answer(carol, "hello")).toBe("exact hit");
    expect(await answer(alice, "hello")).toBe("exact hit");
  });
});

describe("session settings: read receipts and call rejection", () => {
  type State = { reads: Array<{ chat: string; ids: string[] }>; rejectedCalls: string[] };
  const state = () => world<State>(api, SID, "state");
  const wasRead = async (chat: string, id: string) =>
    (await state()).reads.some((read) => read.chat === chat && read.ids.includes(id));

  it("readReceipts marks received messages read, and off does not", async () => {
    await settings({ readReceipts: true, rejectCalls: false });
    const peer = personJid();
    const id = await receive(peer, "read me");
    await eventually(async () => ((await wasRead(peer, id)) ? true : undefined), 10_000, "a read receipt");
    await settings({ readReceipts: false, rejectCalls: false });
    const unread = await receive(peer, "leave me unread");
    await pause();
    expect(await wasRead(peer, unread)).toBe(false);
  });

  it("rejectCalls rejects incoming calls, and off does not", async () => {
    await settings({ readReceipts: false, rejectCalls: true });
    const { id } = await world<{ id: string }>(api, SID, "call", { from: personJid() });
    const rejected = async () => ((await state()).rejectedCalls.includes(id) ? true : undefined);
    await eventually(rejected, 10_000, "the call rejected");
    await settings({ readReceipts: false, rejectCalls: false });
    const second = await world<{ id: string }>(api, SID, "call", { from: personJid() });
    await pause();
    expect((await state()).rejectedCalls).not.toContain(second.id);
  });
});
