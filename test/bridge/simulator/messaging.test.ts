/** The simulated WhatsApp's message and account operations, and the `sim` controls that drive it. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { MessageRef } from "../../../bridge/src/protocol/messaging.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import { simulatorNetwork } from "../../../bridge/src/simulator/simulator.ts";
import { drained } from "../support/media-bytes.ts";
import { linkedAccount, list, person, record, refusal } from "../support/simulated-account.ts";

const PEER = person("491700000001");

function send(to: string, messageId: string, text = "hello"): Operation {
  return { op: "send", to, messageId, content: { type: "text", text } };
}

function ref(overrides: Partial<MessageRef> = {}): MessageRef {
  return {
    id: "MSG00000001",
    chat: PEER,
    fromMe: true,
    sender: "491511111111@s.whatsapp.net",
    timestamp: Date.now(),
    content: { type: "text", text: "hello" },
    ...overrides,
  };
}

describe("simulator: messages", () => {
  it("send answers the WireMessage, delivers once per id (a retry is not delivered again) and emits nothing", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111");
    const op: Operation = {
      op: "send",
      to: PEER,
      messageId: "BROADCAST-1",
      content: { type: "text", text: "hi @x", mentions: [person("491700000002")] },
      quoted: ref({ id: "QUOTED0001", fromMe: false, sender: PEER }),
    };
    const first = record((await a.perform(op)).data);
    expect(first).toEqual({
      id: "BROADCAST-1",
      chat: PEER,
      sender: a.me,
      fromMe: true,
      timestamp: expect.any(Number),
      status: "SENT",
      quotedId: "QUOTED0001",
      content: { type: "text", text: "hi @x", mentions: [person("491700000002")] },
    });
    const retry = record((await a.perform(op)).data);
    expect(retry).toEqual(first);
    await a.perform(send(person("491700000003"), "OTHER-0001"));

    const inbox = list(await a.control({ action: "inbox", peer: PEER }));
    expect(inbox).toEqual([
      {
        chat: PEER,
        id: "BROADCAST-1",
        timestamp: first.timestamp,
        content: { type: "text", text: "hi @x", mentions: [person("491700000002")] },
        quotedId: "QUOTED0001",
        mentions: [person("491700000002")],
      },
    ]);
    expect(list(await a.control({ action: "inbox" }))).toHaveLength(2);
    // Baileys reports API sends as `append`, which the edge does not need: the answer is the record.
    expect(a.events).toEqual([]);
  });

  it("media sends carry facts about the bytes, and the sender can download them again", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111");
    const bytes = Buffer.from("not really a jpeg");
    const media = { bytes, mimetype: "image/jpeg", fileName: "cat.jpg" };
    const result = await a.perform(
      {
        op: "send",
        to: PEER,
        messageId: "IMAGE-0001",
        content: { type: "image", media: { upload: "ref_12345678" }, caption: "cat" },
      },
      media,
    );
    expect(record(result.data).content).toEqual({
      type: "image",
      caption: "cat",
      media: {
        mimetype: "image/jpeg",
        size: bytes.length,
        sha256: createHash("sha256").update(bytes).digest("hex"),
        fileName: "cat.jpg",
      },
    });
    const download = await a.perform({
      op: "media.download",
      message: ref({ id: "IMAGE-0001" }),
      ref: "download_1",
    });
    expect(download.download).toMatchObject({ mimetype: "image/jpeg", fileName: "cat.jpg" });
    expect((await drained(download)).toString()).toBe("not really a jpeg");
    expect(
      await refusal(a.perform({ op: "media.download", message: ref({ id: "NOPE" }), ref: "download_2" })),
    ).toEqual({
      status: 404,
      message: "media not found",
    });
    expect(
      await refusal(
        a.perform({
          op: "send",
          to: PEER,
          messageId: "IMAGE-0002",
          content: { type: "image", media: { upload: "ref_12345678" } },
        }),
      ),
    ).toMatchObject({ status: 400 });
    expect(
      await refusal(
        a.perform({
          op: "send",
          to: PEER,
          messageId: "REACT-0001",
          content: { type: "reaction", emoji: "👍", targetId: "X" },
        }),
      ),
    ).toMatchObject({ status: 400 });
  });

  it("accounts in one world reach each other once, and a block stops delivery", async () => {
    const network = simulatorNetwork();
    const a = await linkedAccount(network, "a", "491511111111", "Alice");
    const b = await linkedAccount(network, "b", "491522222222");
    await a.perform(send(b.me, "DIRECT-0001"));
    await a.perform(send(b.me, "DIRECT-0001"));
    expect(b.seen("message")).toEqual([
      {
        kind: "message",
        live: true,
        message: {
          id: "DIRECT-0001",
          chat: a.me,
          sender: a.me,
          fromMe: false,
          pushName: "Alice",
          timestamp: expect.any(Number),
          content: { type: "text", text: "hello" },
        },
      },
    ]);
    await a.perform({ op: "edit", target: ref({ id: "DIRECT-0001", chat: b.me }), text: "hello!" });
    await a.perform({ op: "delete", target: ref({ id: "DIRECT-0001", chat: b.me }) });
    expect(b.events.slice(1)).toEqual([
      { kind: "message.edited", id: "DIRECT-0001", chat: a.me, fromMe: false, text: "hello!" },
      { kind: "message.deleted", id: "DIRECT-0001", chat: a.me, fromMe: false },
    ]);

    await b.perform({ op: "contact.block", jid: a.me, block: true });
    await a.perform(send(b.me, "DIRECT-0002"));
    expect(b.seen("message")).toHaveLength(1);
  });

  it("numbers.check answers 50 numbers in ONE call; 999… numbers are not on WhatsApp", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111");
    const numbers = Array.from({ length: 50 }, (_, i) =>
      i % 10 === 0 ? `9990000${i}` : `4917000000${String(i).padStart(2, "0")}`,
    );
    const answer = list((await a.perform({ op: "numbers.check", numbers })).data);
    expect(answer).toHaveLength(50);
    expect(answer[0]).toEqual({ number: "99900000", exists: false, jid: null });
    expect(answer[1]).toEqual({ number: "491700000001", exists: true, jid: "491700000001@s.whatsapp.net" });
    expect(answer.filter((entry) => record(entry).exists === false)).toHaveLength(5);
    expect(await a.control({ action: "stats" })).toEqual({ numberChecks: 1, inbox: 0 });
  });

  it("refuses what WhatsApp refuses: old deletes, foreign or old edits", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111");
    const threeDaysAgo = Date.now() - 3 * 24 * 3600 * 1000;
    expect(await refusal(a.perform({ op: "delete", target: ref({ timestamp: threeDaysAgo }) }))).toEqual({
      status: 400,
      message: "message too old to delete for everyone",
    });
    expect(
      await refusal(a.perform({ op: "delete", target: ref({ fromMe: false, sender: PEER }) })),
    ).toMatchObject({ status: 400 });
    expect(
      await refusal(a.perform({ op: "edit", target: ref({ fromMe: false, sender: PEER }), text: "x" })),
    ).toMatchObject({
      status: 400,
      message: "only your own messages can be edited",
    });
    expect(
      await refusal(
        a.perform({ op: "edit", target: ref({ timestamp: Date.now() - 16 * 60 * 1000 }), text: "x" }),
      ),
    ).toEqual({
      status: 400,
      message: "message too old to edit",
    });
  });

  it("records reactions, edits, deletes, stars, reads, chat settings, presence, blocks and rejected calls", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111");
    await a.perform(send(PEER, "MSG00000001"));
    const target = ref();
    await a.perform({ op: "react", target, emoji: "🔥" });
    await a.perform({ op: "edit", target, text: "edited" });
    await a.perform({ op: "delete", target });
    await a.perform({ op: "star", target, star: true });
    await a.perform({
      op: "read",
      chat: PEER,
      targets: [ref({ id: "IN1", fromMe: false }), ref({ id: "IN2", fromMe: false })],
    });
    await a.perform({ op: "chat.modify", chat: PEER, action: "mute", muteUntil: 123 });
    await a.perform({ op: "chat.modify", chat: PEER, action: "archive" });
    await a.perform({ op: "presence", chat: PEER, presence: "composing" });
    await a.perform({ op: "contact.block", jid: PEER, block: true });
    await a.perform({ op: "call.reject", id: "CALL1", from: PEER });

    const state = record(await a.control({ action: "state" }));
    expect(state).toMatchObject({
      me: a.me,
      blocked: [PEER],
      reactions: [{ chat: PEER, id: "MSG00000001", emoji: "🔥" }],
      edits: [{ chat: PEER, id: "MSG00000001", text: "edited" }],
      deletions: [{ chat: PEER, id: "MSG00000001" }],
      stars: [{ chat: PEER, id: "MSG00000001", star: true }],
      reads: [{ chat: PEER, ids: ["IN1", "IN2"] }],
      chatModifications: [
        { chat: PEER, action: "mute", muteUntil: 123 },
        { chat: PEER, action: "archive" },
      ],
      presences: [{ chat: PEER, presence: "composing" }],
      rejectedCalls: ["CALL1"],
      numberChecks: 0,
      groups: [],
    });
    expect(state.inbox).toEqual([
      {
        chat: PEER,
        id: "MSG00000001",
        timestamp: expect.any(Number),
        content: { type: "text", text: "hello" },
        reactions: ["🔥"],
        editedText: "edited",
        deleted: true,
      },
    ]);
  });

  it("profile, names, status and pictures", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111", "Alice");
    expect((await a.perform({ op: "profile.get" })).data).toEqual({
      name: "Alice",
      status: null,
      pictureUrl: null,
    });
    await a.perform({ op: "profile.name", name: "Alice B" });
    await a.perform({ op: "profile.status", status: "busy" });
    const png = { bytes: Buffer.from([0x89, 0x50]), mimetype: "image/png" };
    await a.perform({ op: "picture.set", source: { upload: "ref_12345678" } }, png);
    expect((await a.perform({ op: "profile.get" })).data).toEqual({
      name: "Alice B",
      status: "busy",
      pictureUrl: `https://sim.invalid/pp/${a.me}.jpg`,
    });
    expect(
      await refusal(
        a.perform(
          { op: "picture.set", source: { upload: "ref_12345678" } },
          { bytes: Buffer.from("x"), mimetype: "text/plain" },
        ),
      ),
    ).toMatchObject({ status: 400 });
    await a.perform({ op: "picture.remove" });
    expect((await a.perform({ op: "profile.picture.url", jid: a.me })).data).toEqual({ url: null });

    await a.control({ action: "contact", jid: PEER, name: "Peer", picture: true });
    expect(a.seen("contacts")).toEqual([
      {
        kind: "contacts",
        contacts: [{ jid: PEER, name: "Peer", imgUrl: `https://sim.invalid/pp/${PEER}.jpg` }],
      },
    ]);
    expect((await a.perform({ op: "profile.picture.url", jid: PEER })).data).toEqual({
      url: `https://sim.invalid/pp/${PEER}.jpg`,
    });
    expect((await a.perform({ op: "profile.picture.url", jid: person("491799999999") })).data).toEqual({
      url: null,
    });
  });
});
