// Acting on messages through HTTP on the real stack: react, reply, star, edit, delete for everyone,
// forward, search, media download, and what the network reports back (statuses, edits, deletes).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, adminClient, eventually } from "../support/api.ts";
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

type Message = {
  id: string;
  type: string;
  content: string | null;
  status: string | null;
  starred: boolean;
  reactions: Record<string, string>;
  editedAt: string | null;
  deletedAt: string | null;
  mediaUrl: string | null;
  quotedId: string | null;
};
type Delivered = { id: string; chat: string; deleted?: boolean; editedText?: string; reactions?: string[] };
type State = {
  stars: { id: string; star: boolean }[];
  reactions: { id: string; emoji: string }[];
  deletions: { id: string }[];
  edits: { id: string; text: string }[];
};

let stack: Stack;
let api: ApiClient;
const SID = "actor";

beforeAll(async () => {
  stack = await startStack({ env: { SIMULATOR: "1" } });
  api = await adminClient(stack.baseUrl);
  await connectedSession(api, SID);
});

afterAll(async () => {
  await stack?.stop();
});

const base = `/api/messages/${SID}`;
const history = async (jid: string) =>
  (await api.call<Envelope<Message[]>>("GET", `/api/chat/${SID}/${jidPath(jid)}`)).body.data;
const stored = async (jid: string, id: string) => (await history(jid)).find((m) => m.id === id);
const sendText = async (jid: string, text: string) => {
  const res = await api.call<Envelope<Message>>("POST", `${base}/${jidPath(jid)}/send`, {
    message: { text },
  });
  expect(res.status).toBe(200);
  return res.body.data;
};
const state = () => world<State>(api, SID, "state");

async function received(from: string, content: Record<string, unknown>): Promise<string> {
  const { id } = await world<{ id: string }>(api, SID, "receive", { from, content });
  await eventually(async () => ((await stored(from, id)) ? true : undefined), 10_000, `message ${id} stored`);
  return id;
}

describe("actions on messages", () => {
  it("react, star and unstar reach WhatsApp; unknown messages are 404", async () => {
    const peer = personJid();
    const sent = await sendText(peer, "react to me");
    const path = `${base}/${jidPath(peer)}/${sent.id}`;
    expect((await api.call("POST", `${path}/react`, { emoji: "👍" })).status).toBe(200);
    expect((await api.call("POST", `${path}/star`, { star: true })).status).toBe(200);
    expect((await stored(peer, sent.id))?.starred).toBe(true);
    expect((await api.call("POST", `${path}/star`, { star: false })).status).toBe(200);
    expect((await stored(peer, sent.id))?.starred).toBe(false);
    const recorded = await state();
    expect(recorded.reactions).toContainEqual(expect.objectContaining({ id: sent.id, emoji: "👍" }));
    expect(recorded.stars.filter((s) => s.id === sent.id).map((s) => s.star)).toEqual([true, false]);
    expect((await inbox<Delivered>(api, SID, peer)).find((e) => e.id === sent.id)?.reactions).toEqual(["👍"]);
    expect((await api.call("POST", `${base}/${jidPath(peer)}/NOPE/react`, { emoji: "x" })).status).toBe(404);
    expect((await api.call("POST", `${path}/react`, { emoji: 5 })).status).toBe(400);
  });

  it("reply quotes by path or by body", async () => {
    const peer = personJid();
    const question = await received(peer, { type: "text", text: "ping?" });
    const byPath = await api.call<Envelope<Message>>("POST", `${base}/${jidPath(peer)}/${question}/reply`, {
      message: "pong",
    });
    expect(byPath.status).toBe(200);
    const byBody = await api.call<Envelope<Message>>("POST", `${base}/${jidPath(peer)}/reply`, {
      messageId: question,
      message: { text: "pong again" },
    });
    expect(byBody.status).toBe(200);
    const delivered = await inbox<Delivered & { quotedId?: string }>(api, SID, peer);
    expect(delivered.map((d) => d.quotedId)).toEqual([question, question]);
    expect((await api.call("POST", `${base}/${jidPath(peer)}/reply`, { message: "x" })).status).toBe(400);
  });

  it("edit changes the text at the peer and in history; only own messages", async () => {
    const peer = personJid();
    const sent = await sendText(peer, "helo");
    const edited = await api.call<Envelope<Message>>("PATCH", `${base}/${jidPath(peer)}/${sent.id}`, {
      text: "hello",
    });
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ content: "hello" });
    expect(edited.body.data.editedAt).not.toBeNull();
    expect((await inbox<Delivered>(api, SID, peer)).find((e) => e.id === sent.id)?.editedText).toBe("hello");
    const theirs = await received(peer, { type: "text", text: "mine" });
    expect((await api.call("PATCH", `${base}/${jidPath(peer)}/${theirs}`, { text: "x" })).status).toBe(400);
    expect((await api.call("PATCH", `${base}/${jidPath(peer)}/${sent.id}`, { text: "" })).status).toBe(400);
  });

  it("delete for everyone removes it at the peer and marks it deleted here", async () => {
    const peer = personJid();
    const sent = await sendText(peer, "oops");
    expect((await api.call("DELETE", `${base}/${jidPath(peer)}/${sent.id}`)).status).toBe(200);
    expect((await inbox<Delivered>(api, SID, peer)).find((e) => e.id === sent.id)?.deleted).toBe(true);
    const row = await stored(peer, sent.id);
    expect(row?.deletedAt).not.toBeNull();
    expect(row?.content).toBeNull();
    const theirs = await received(peer, { type: "text", text: "not yours to delete" });
    expect((await api.call("DELETE", `${base}/${jidPath(peer)}/${theirs}`)).status).toBe(400);
  });

  it("forward sends a stored message to several chats", async () => {
    const from = personJid();
    const targets = [personJid(), personJid()];
    const original = await received(from, { type: "text", text: "pass it on" });
    const res = await api.call<Envelope<{ forwarded: Message[] }>>("POST", `${base}/forward`, {
      fromJid: from,
      messageId: original,
      toJids: targets,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.forwarded).toHaveLength(2);
    for (const target of targets) {
      const delivered = await inbox<{ content: { text?: string } }>(api, SID, target);
      expect(delivered.map((d) => d.content.text)).toEqual(["pass it on"]);
    }
    expect(
      (await api.call("POST", `${base}/forward`, { fromJid: from, messageId: "NOPE", toJids: targets }))
        .status,
    ).toBe(404);
    expect(
      (await api.call("POST", `${base}/forward`, { fromJid: from, messageId: original, toJids: [] })).status,
    ).toBe(400);
  });
});

describe("what the network reports", () => {
  it("acks map to statuses and never move backwards", async () => {
    const peer = personJid();
    const sent = await sendText(peer, "track me");
    for (const [ack, expected] of [
      ["DELIVERED", "DELIVERED"],
      ["READ", "READ"],
      ["SENT", "READ"],
    ] as const) {
      await world(api, SID, "ack", { id: sent.id, chat: peer, status: ack });
      await eventually(async () => ((await stored(peer, sent.id))?.status === expected ? true : undefined));
    }
  });

  it("a peer's edit and revoke are stored", async () => {
    const peer = personJid();
    const id = await received(peer, { type: "text", text: "first" });
    await world(api, SID, "edit", { id, chat: peer, text: "second" });
    await eventually(async () => ((await stored(peer, id))?.content === "second" ? true : undefined));
    await world(api, SID, "revoke", { id, chat: peer });
    await eventually(async () => ((await stored(peer, id))?.deletedAt ? true : undefined));
  });

  it("received media downloads with its bytes and type; text has no media (404)", async () => {
    const peer = personJid();
    const bytes = Buffer.from("%PDF-1.4 received document");
    const id = await received(peer, {
      type: "document",
      base64: bytes.toString("base64"),
      mimetype: "application/pdf",
      fileName: "in.pdf",
    });
    const row = await stored(peer, id);
    expect(row?.mediaUrl).toBe(`/api/messages/${SID}/download/${id}/media`);
    for (let i = 0; i < 2; i++) {
      const file = await fetch(`${stack.baseUrl}${row?.mediaUrl}`, { headers: { "X-API-Key": api.key } });
      expect(file.status).toBe(200);
      expect(file.headers.get("content-type")).toBe("application/pdf");
      expect(Buffer.from(await file.arrayBuffer())).toEqual(bytes);
    }
    const text = await received(peer, { type: "text", text: "no media" });
    expect((await rawCall(stack.baseUrl, api, "GET", `${base}/download/${text}/media`)).status).toBe(404);
    expect((await rawCall(stack.baseUrl, api, "GET", `${base}/download/NOPE/media`)).status).toBe(404);
  });
});

describe("search", () => {
  it("finds by text, chat, type and direction, with pagination", async () => {
    const peer = personJid();
    await sendText(peer, "needle one");
    await received(peer, { type: "text", text: "needle two" });
    await sendText(personJid(), "haystack");
    const all = await api.call<Envelope<Message[]> & { pagination: { total: number } }>(
      "GET",
      `${base}/search?q=needle`,
    );
    expect(all.status).toBe(200);
    expect(all.body.data.map((m) => m.content).sort()).toEqual(["needle one", "needle two"]);
    expect(all.body.pagination.total).toBe(2);
    const mine = await api.call<Envelope<Message[]>>("GET", `${base}/search?q=needle&fromMe=true`);
    expect(mine.body.data.map((m) => m.content)).toEqual(["needle one"]);
    const inChat = await api.call<Envelope<Message[]>>(
      "GET",
      `${base}/search?jid=${jidPath(peer)}&limit=1&page=2`,
    );
    expect(inChat.body.data).toHaveLength(1);
    const literal = await api.call<Envelope<Message[]>>("GET", `${base}/search?q=${encodeURIComponent("%")}`);
    expect(literal.body.data).toEqual([]);
    expect((await api.call("GET", `${base}/search`)).status).toBe(400);
    expect((await api.call("GET", `${base}/search?q=x&limit=101`)).status).toBe(400);
    expect((await api.call("GET", `${base}/search?q=x&type=SPAM`)).status).toBe(400);
  });
});
