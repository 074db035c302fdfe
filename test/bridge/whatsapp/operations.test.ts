/**
 * `perform` over Baileys, with a stand-in for the socket: which Baileys call each operation makes, with
 * what arguments, and how answers and refusals come back.
 */
import { EventEmitter } from "node:events";
import type { BinaryNode, USyncQuery, WAMessage } from "@whiskeysockets/baileys";
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { MessageRef } from "../../../bridge/src/protocol/messaging.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import { OperationError } from "../../../bridge/src/protocol/seam.ts";
import { toJson } from "../../../bridge/src/whatsapp/mapping.ts";
import { type BaileysSocket, performOperation } from "../../../bridge/src/whatsapp/operations.ts";

const ME = "491511111111:4@s.whatsapp.net";
const PEER = "491700000001@s.whatsapp.net";
const GROUP = "120363000000000001@g.us";
const logger = pino({ level: "silent" });

/** A Baileys socket where only the methods a test sets exist; anything else fails loudly. */
function fakeSocket(methods: Partial<Record<keyof BaileysSocket, unknown>>): BaileysSocket {
  // `ws` and `authState`: app-state changes listen for WhatsApp's answer (app-state-patch.ts).
  const base = {
    user: { id: ME, name: "Me" },
    ws: new EventEmitter(),
    authState: { keys: { set: async () => {} } },
  };
  return new Proxy({ ...base, ...methods } as Record<string, unknown>, {
    get(target, name) {
      if (typeof name === "string" && name in target) return target[name];
      throw new Error(`unexpected Baileys call: ${String(name)}`);
    },
  }) as unknown as BaileysSocket;
}

const perform = (sock: BaileysSocket, op: Operation, media: Parameters<typeof performOperation>[2] = null) =>
  performOperation(sock, op, media, logger);

function ref(overrides: Partial<MessageRef> = {}): MessageRef {
  return {
    id: "MSG1",
    chat: PEER,
    fromMe: true,
    sender: "491511111111@s.whatsapp.net",
    timestamp: Date.now(),
    content: { type: "text", text: "hi" },
    ...overrides,
  };
}

function sentMessage(to: string, id: string): WAMessage {
  return {
    key: { remoteJid: to, fromMe: true, id },
    message: { conversation: "hello" },
    messageTimestamp: 1_700_000_000,
    status: 1,
  };
}

describe("whatsapp-operations", () => {
  it("numbers.check asks WhatsApp ONCE for all 50 numbers and maps the answers back by the echoed number", async () => {
    const numbers = Array.from({ length: 50 }, (_, i) => `4917000000${String(i).padStart(2, "0")}`);
    // WhatsApp's answer: each user under the JID it resolved, its `contact` echoing the number asked;
    // the first one under another JID (a number WhatsApp normalises).
    const executeUSyncQuery = vi.fn(async (query: USyncQuery) => {
      const users = query.users.map((user, i): BinaryNode => {
        const digits = (user.phone ?? "").slice(1);
        const jid = i === 0 ? "4917999999999@s.whatsapp.net" : `${digits}@s.whatsapp.net`;
        const type = i % 2 === 0 ? "in" : "out";
        return {
          tag: "user",
          attrs: { jid },
          content: [{ tag: "contact", attrs: { type }, content: user.phone }],
        };
      });
      return query.parseUSyncQueryResult({
        tag: "iq",
        attrs: { type: "result" },
        content: [{ tag: "usync", attrs: {}, content: [{ tag: "list", attrs: {}, content: users }] }],
      });
    });
    const result = await perform(fakeSocket({ executeUSyncQuery }), { op: "numbers.check", numbers });
    expect(executeUSyncQuery).toHaveBeenCalledTimes(1);
    const query = executeUSyncQuery.mock.calls[0]?.[0];
    expect(query?.users.map((user) => user.phone)).toEqual(numbers.map((number) => `+${number}`));
    expect(query?.protocols.map((protocol) => protocol.name)).toEqual(["contact"]);
    expect(result.data).toHaveLength(50);
    expect((result.data as unknown[])[0]).toEqual({
      number: numbers[0],
      exists: true,
      jid: "4917999999999@s.whatsapp.net",
    });
    expect((result.data as unknown[])[1]).toEqual({ number: numbers[1], exists: false, jid: null });
    expect((result.data as unknown[])[2]).toEqual({
      number: numbers[2],
      exists: true,
      jid: `${numbers[2]}@s.whatsapp.net`,
    });
  });

  it("send: our message id, the quoted original revived from raw, and the sent message as the answer", async () => {
    const original: WAMessage = {
      key: { remoteJid: PEER, fromMe: false, id: "ORIG1" },
      message: { conversation: "question", messageContextInfo: { messageSecret: new Uint8Array([9]) } },
    };
    const sendMessage = vi.fn<BaileysSocket["sendMessage"]>(async (to) => sentMessage(to, "OUR-ID-0001"));
    const sock = fakeSocket({ sendMessage });
    const result = await perform(sock, {
      op: "send",
      to: PEER,
      messageId: "OUR-ID-0001",
      content: { type: "text", text: "answer", mentions: [PEER] },
      quoted: ref({ id: "ORIG1", fromMe: false, sender: PEER, raw: toJson(original) }),
    });
    const [to, content, options] = sendMessage.mock.calls[0] ?? [];
    expect(to).toBe(PEER);
    expect(content).toEqual({ text: "answer", mentions: [PEER] });
    expect(options).toMatchObject({ messageId: "OUR-ID-0001", quoted: { key: { id: "ORIG1" } } });
    expect(Buffer.isBuffer(options?.quoted?.message?.messageContextInfo?.messageSecret)).toBe(true);
    expect(result.data).toMatchObject({
      id: "OUR-ID-0001",
      chat: PEER,
      sender: "491511111111@s.whatsapp.net",
      fromMe: true,
      status: "SENT",
      raw: expect.any(Object),
    });
  });

  it("sends media as Baileys expects it: stickers as WebP, voice as ptt, documents with name and type", async () => {
    const sendMessage = vi.fn<BaileysSocket["sendMessage"]>(async (to) => sentMessage(to, "X"));
    const sock = fakeSocket({ sendMessage });
    const media = { bytes: Buffer.from("RIFF\0\0\0\0WEBPVP8L"), mimetype: "image/webp" };
    const send = (content: Extract<Operation, { op: "send" }>["content"]): Operation => ({
      op: "send",
      to: "status@broadcast",
      messageId: "STATUS-0001",
      content,
      statusJidList: [PEER],
      backgroundColor: "#000000",
      font: 2,
    });
    await perform(sock, send({ type: "sticker", media: { upload: "ref_12345678" } }), media);
    await perform(sock, send({ type: "audio", ptt: true, media: { upload: "ref_12345678" } }), {
      bytes: Buffer.from("OggS"),
      mimetype: "audio/ogg; codecs=opus",
    });
    await perform(
      sock,
      send({
        type: "document",
        media: { upload: "ref_12345678" },
        fileName: "a.pdf",
        mimetype: "application/pdf",
      }),
      { bytes: Buffer.from("%PDF"), mimetype: "application/pdf" },
    );
    const calls = sendMessage.mock.calls;
    expect(calls[0]?.[1]).toMatchObject({
      sticker: expect.any(Buffer),
      mimetype: "image/webp",
      isAnimated: false,
    });
    expect(calls[1]?.[1]).toMatchObject({
      audio: expect.any(Buffer),
      ptt: true,
      mimetype: "audio/ogg; codecs=opus",
    });
    expect(calls[2]?.[1]).toMatchObject({
      document: expect.any(Buffer),
      fileName: "a.pdf",
      mimetype: "application/pdf",
    });
    expect(calls[0]?.[2]).toMatchObject({ statusJidList: [PEER], backgroundColor: "#000000", font: 2 });
  });

  it("react, edit, delete, star, read and archive address the message by key", async () => {
    const sendMessage = vi.fn<BaileysSocket["sendMessage"]>(async () => undefined);
    const chatModify = vi.fn<BaileysSocket["chatModify"]>(async () => {});
    const readMessages = vi.fn<BaileysSocket["readMessages"]>(async () => {});
    const sock = fakeSocket({ sendMessage, chatModify, readMessages });
    const inGroup = ref({ chat: GROUP, fromMe: false, sender: PEER });
    await perform(sock, { op: "react", target: inGroup, emoji: "👍" });
    await perform(sock, { op: "edit", target: ref(), text: "better" });
    await perform(sock, { op: "delete", target: ref() });
    await perform(sock, { op: "star", target: ref(), star: true });
    await perform(sock, { op: "read", chat: GROUP, targets: [inGroup] });
    await perform(sock, { op: "chat.modify", chat: PEER, action: "archive", lastMessage: ref() });
    const key = { remoteJid: PEER, fromMe: true, id: "MSG1" };
    expect(sendMessage.mock.calls).toEqual([
      [
        GROUP,
        { react: { text: "👍", key: { remoteJid: GROUP, fromMe: false, id: "MSG1", participant: PEER } } },
      ],
      [PEER, { text: "better", edit: key }],
      [PEER, { delete: key }],
    ]);
    expect(chatModify.mock.calls[0]).toEqual([
      { star: { messages: [{ id: "MSG1", fromMe: true }], star: true } },
      PEER,
    ]);
    expect(chatModify.mock.calls[1]?.[0]).toMatchObject({ archive: true, lastMessages: [{ key }] });
    expect(readMessages.mock.calls[0]).toEqual([
      [{ remoteJid: GROUP, fromMe: false, id: "MSG1", participant: PEER }],
    ]);
  });

  it("refuses before asking WhatsApp: old deletes, foreign edits, archive without lastMessage", async () => {
    const sock = fakeSocket({});
    const old = Date.now() - 3 * 24 * 3600 * 1000;
    await expect(perform(sock, { op: "delete", target: ref({ timestamp: old }) })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      perform(sock, { op: "edit", target: ref({ fromMe: false }), text: "x" }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(perform(sock, { op: "chat.modify", chat: PEER, action: "archive" })).rejects.toMatchObject({
      status: 400,
    });
    const image = ref({ content: { type: "image", media: { mimetype: "image/jpeg" } } });
    await expect(
      perform(sock, { op: "forward", to: PEER, messageId: "FORWARD-01", message: image }),
    ).rejects.toMatchObject({
      status: 400,
    });
  });

  it("groups: metadata as GroupInfo, participant results, invite codes; IQ errors become statuses", async () => {
    const metadata = {
      id: GROUP,
      subject: "Team",
      owner: PEER,
      participants: [{ id: PEER, admin: "superadmin" as const }],
    };
    const sock = fakeSocket({
      groupMetadata: async () => metadata,
      groupParticipantsUpdate: async () => [{ status: "200", jid: PEER, content: { tag: "x", attrs: {} } }],
      groupInviteCode: async () => "CODE123",
      groupAcceptInvite: async () => undefined,
      groupLeave: async () => {
        throw Object.assign(new Error("not-authorized"), { data: 401 });
      },
      profilePictureUrl: async () => {
        throw Object.assign(new Error("item-not-found"), { data: 404 });
      },
    });
    expect((await perform(sock, { op: "group.metadata", jid: GROUP })).data).toEqual({
      jid: GROUP,
      subject: "Team",
      owner: PEER,
      participants: [{ id: PEER, admin: "superadmin" }],
    });
    expect(
      (await perform(sock, { op: "group.participants", jid: GROUP, action: "add", participants: [PEER] }))
        .data,
    ).toEqual([{ jid: PEER, status: "200" }]);
    expect((await perform(sock, { op: "group.invite", jid: GROUP })).data).toEqual({ code: "CODE123" });
    await expect(perform(sock, { op: "group.invite.accept", code: "BADCODE" })).rejects.toMatchObject({
      status: 400,
    });
    const leaving = perform(sock, { op: "group.leave", jid: GROUP });
    await expect(leaving).rejects.toBeInstanceOf(OperationError);
    await expect(leaving).rejects.toMatchObject({ status: 403 });
    // A picture WhatsApp will not show is "no picture", not a failure.
    expect((await perform(sock, { op: "profile.picture.url", jid: PEER })).data).toEqual({ url: null });
  });

  it("profile.get combines the account's name, its About text and its picture", async () => {
    const sock = fakeSocket({
      fetchStatus: async () => [
        { id: "491511111111@s.whatsapp.net", status: { status: "busy", setAt: new Date() } },
      ],
      profilePictureUrl: async () => "https://pps.example/me.jpg",
    });
    expect((await perform(sock, { op: "profile.get" })).data).toEqual({
      name: "Me",
      status: "busy",
      pictureUrl: "https://pps.example/me.jpg",
    });
  });
});
