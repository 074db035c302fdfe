// Chats through HTTP on the real stack: the chat list, history with cursor paging, the batched
// number check, chat actions, and the deprecated endpoints with their headers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
import { connectedSession, type Envelope, inbox, jidPath, personJid, world } from "../support/messaging.ts";
import { type Stack, startStack } from "../support/stack.ts";

type Message = { id: string; content: string | null };
type Chat = {
  jid: string;
  unreadCount: number;
  archived: boolean;
  pinned: boolean;
  mutedUntil: string | null;
  lastMessage: { content: string | null } | null;
};
type History = Envelope<Message[]> & { pagination: { nextCursor: string | null; limit: number } };
type CheckResult = { number: string; exists: boolean; jid: string | null; error?: string };

let stack: Stack;
let api: ApiClient;
const SID = "chatter";

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
  await connectedSession(api, SID);
});

afterAll(async () => {
  await stack?.stop();
});

const historyOf = (jid: string, query = "") =>
  api.call<History>("GET", `/api/chat/${SID}/${jidPath(jid)}${query}`);

async function receiveTexts(from: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push(
      (await world<{ id: string }>(api, SID, "receive", { from, content: { type: "text", text: `m${i}` } }))
        .id,
    );
  }
  await eventually(
    async () =>
      (await api.call<Envelope<Chat[]>>("GET", `/api/chat/${SID}`)).body.data.find((c) => c.jid === from)
        ?.unreadCount === count
        ? true
        : undefined,
    20_000,
    `${count} messages from ${from}`,
  );
  return ids;
}

describe("history", () => {
  it("newest 100, oldest → newest, with a cursor to older pages", async () => {
    const peer = personJid();
    const ids = await receiveTexts(peer, 130);
    const first = await historyOf(peer);
    expect(first.status).toBe(200);
    expect(first.body.data.map((m) => m.id)).toEqual(ids.slice(30));
    expect(first.body.pagination.nextCursor).not.toBeNull();
    const second = await historyOf(peer, `?before=${first.body.pagination.nextCursor}`);
    expect(second.body.data.map((m) => m.id)).toEqual(ids.slice(0, 30));
    expect(second.body.pagination.nextCursor).toBeNull();
    const small = await historyOf(peer, "?limit=5");
    expect(small.body.data.map((m) => m.id)).toEqual(ids.slice(125));
    expect((await historyOf(peer, "?limit=101")).status).toBe(400);
    expect((await historyOf(peer, "?before=abc")).status).toBe(400);
    expect((await historyOf("not-a-jid")).status).toBe(400);
  });
});

describe("the chat list and chat actions", () => {
  it("lists chats with their last message; read, archive, pin and mute change them", async () => {
    const peer = personJid();
    await receiveTexts(peer, 2);
    const list = async () =>
      (await api.call<Envelope<Chat[]>>("GET", `/api/chat/${SID}`)).body.data.find((c) => c.jid === peer);
    expect(await list()).toMatchObject({ unreadCount: 2, lastMessage: { content: "m1" } });

    const chat = `/api/chat/${SID}/${jidPath(peer)}`;
    const read = await api.call<Envelope<{ read: number }>>("PUT", `${chat}/read`, {});
    expect(read.status).toBe(200);
    expect(read.body.data.read).toBe(2);
    expect((await list())?.unreadCount).toBe(0);
    expect((await api.call("PUT", `${chat}/archive`, { archive: true })).status).toBe(200);
    expect((await api.call("PUT", `${chat}/pin`, { pin: true })).status).toBe(200);
    expect((await api.call("PUT", `${chat}/mute`, { mute: true, duration: 3600 })).status).toBe(200);
    const changed = await list();
    expect(changed).toMatchObject({ archived: true, pinned: true });
    expect(Date.parse(changed?.mutedUntil ?? "") - Date.now()).toBeGreaterThan(3500_000);
    expect((await api.call<Envelope<Chat[]>>("GET", `/api/chat/${SID}`)).body.data[0]?.jid).toBe(peer);
    expect((await api.call("PUT", `${chat}/mute`, { mute: false })).status).toBe(200);
    expect((await list())?.mutedUntil).toBeNull();

    const recorded = await world<{
      reads: { chat: string; ids: string[] }[];
      chatModifications: { action: string }[];
    }>(api, SID, "state");
    expect(recorded.reads.find((r) => r.chat === peer)?.ids).toHaveLength(2);
    expect(recorded.chatModifications.map((m) => m.action)).toEqual(
      expect.arrayContaining(["archive", "pin", "mute", "unmute"]),
    );
    for (const [path, body] of [
      ["archive", { archive: "yes" }],
      ["pin", {}],
      ["mute", { mute: true, duration: 1 }],
      ["read", { messageIds: [] }],
    ] as const) {
      expect((await api.call("PUT", `${chat}/${path}`, body)).status, path).toBe(400);
    }
  });

  it("presence and profile picture", async () => {
    const peer = personJid();
    const chat = `/api/chat/${SID}/${jidPath(peer)}`;
    expect((await api.call("POST", `${chat}/presence`, { presence: "composing" })).status).toBe(200);
    expect((await api.call("POST", `${chat}/presence`, { presence: "dancing" })).status).toBe(400);
    await world(api, SID, "contact", { jid: peer, name: "Pic", picture: true });
    const picture = await api.call<Envelope<{ jid: string; profilePicUrl: string | null }>>(
      "POST",
      `${chat}/profile-picture`,
    );
    expect(picture.status).toBe(200);
    expect(picture.body.data.profilePicUrl).toMatch(/^https:\/\//);
    const none = await api.call<Envelope<{ profilePicUrl: string | null }>>(
      "POST",
      `/api/chat/${SID}/${jidPath(personJid())}/profile-picture`,
    );
    expect(none.body.data.profilePicUrl).toBeNull();
  });
});

describe("POST /chat/{sessionId}/check", () => {
  it("checks 50 numbers in ONE lookup and reports each, invalid ones included", async () => {
    const before = (await world<{ numberChecks: number }>(api, SID, "stats")).numberChecks;
    const numbers = Array.from({ length: 48 }, (_, i) => `62812${String(i).padStart(6, "0")}`);
    numbers.push("+999 123 4567", "call me");
    const res = await api.call<Envelope<{ results: CheckResult[] }>>("POST", `/api/chat/${SID}/check`, {
      numbers,
    });
    expect(res.status).toBe(200);
    const results = res.body.data.results;
    expect(results).toHaveLength(50);
    expect(results[0]).toEqual({ number: numbers[0], exists: true, jid: `${numbers[0]}@s.whatsapp.net` });
    expect(results[48]).toEqual({ number: "+999 123 4567", exists: false, jid: null });
    expect(results[49]).toMatchObject({
      number: "call me",
      exists: false,
      jid: null,
      error: "Invalid number format",
    });
    expect((await world<{ numberChecks: number }>(api, SID, "stats")).numberChecks).toBe(before + 1);
  });

  it("400 beyond 50 numbers or with none", async () => {
    const many = Array.from({ length: 51 }, (_, i) => `6281200${i}`);
    expect((await api.call("POST", `/api/chat/${SID}/check`, { numbers: many })).status).toBe(400);
    expect((await api.call("POST", `/api/chat/${SID}/check`, { numbers: [] })).status).toBe(400);
  });
});

describe("deprecated endpoints", () => {
  const expectDeprecated = (headers: Headers, successor: RegExp) => {
    expect(headers.get("deprecation")).toMatch(/^@\d+$/);
    expect(headers.get("sunset")).toMatch(/GMT$/);
    expect(headers.get("link")).toMatch(successor);
  };
  const post = (path: string, body: unknown) =>
    fetch(`${stack.baseUrl}${path}`, {
      method: "POST",
      headers: { "X-API-Key": api.key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it("/chat/send and /chat/{sessionId}/send send like their replacement", async () => {
    const to = personJid();
    const a = await post("/api/chat/send", { sessionId: SID, jid: to, message: { text: "old 1" } });
    expect(a.status).toBe(200);
    expectDeprecated(a.headers, /\/api\/messages\/\{sessionId\}\/\{jid\}\/send>; rel="successor-version"/);
    const b = await post(`/api/chat/${SID}/send`, { jid: to, message: { text: "old 2" } });
    expect(b.status).toBe(200);
    expectDeprecated(b.headers, new RegExp(`/api/messages/${SID}/\\{jid\\}/send`));
    const delivered = await inbox<{ content: { text: string } }>(api, SID, to);
    expect(delivered.map((d) => d.content.text)).toEqual(["old 1", "old 2"]);
    const bad = await post("/api/chat/send", { sessionId: SID, message: { text: "no jid" } });
    expect(bad.status).toBe(400);
    expectDeprecated(bad.headers, /send/);
    expect((await post(`/api/chat/${SID}/send`, { jid: to })).status).toBe(400);
  });

  it("/messages/poll and /messages/location validate as listed", async () => {
    const to = personJid();
    const poll = await post("/api/messages/poll", {
      sessionId: SID,
      jid: to,
      question: "Q",
      options: ["a", "b"],
    });
    expect(poll.status).toBe(200);
    expectDeprecated(poll.headers, /poll/);
    for (const body of [
      { sessionId: SID, jid: to, question: "Q", options: ["a"] },
      { sessionId: SID, jid: to, options: ["a", "b"] },
      { jid: to, question: "Q", options: ["a", "b"] },
    ]) {
      expect((await post("/api/messages/poll", body)).status, JSON.stringify(body)).toBe(400);
    }
    const location = await post("/api/messages/location", {
      sessionId: SID,
      jid: to,
      latitude: 1,
      longitude: 2,
    });
    expect(location.status).toBe(200);
    expectDeprecated(location.headers, /location/);
    for (const body of [
      { sessionId: SID, jid: to, latitude: 95, longitude: 2 },
      { sessionId: SID, jid: to, latitude: 1 },
    ]) {
      expect((await post("/api/messages/location", body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await inbox(api, SID, to)).length).toBe(2);
  });

  it("/messages/broadcast starts a broadcast; delay is range-checked", async () => {
    const recipients = [personJid(), personJid()];
    const res = await post("/api/messages/broadcast", {
      sessionId: SID,
      recipients,
      message: "hi all",
      delay: 1000,
    });
    expect(res.status).toBe(200);
    expectDeprecated(res.headers, /broadcast/);
    const body = (await res.json()) as Envelope<{ broadcastId: string; total: number }>;
    expect(body.data.total).toBe(2);
    for (const delay of [499, 60_001]) {
      expect(
        (await post("/api/messages/broadcast", { sessionId: SID, recipients, message: "x", delay })).status,
      ).toBe(400);
    }
    expect(
      (await post("/api/messages/broadcast", { sessionId: SID, recipients: [], message: "x" })).status,
    ).toBe(400);
  });
});
