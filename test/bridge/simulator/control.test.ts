/** The `sim` controls: the test plays the peers and the phone, and reads back what the account did. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { MessageRef, NetworkEvent } from "../../../bridge/src/protocol/messaging.ts";
import type { Operation } from "../../../bridge/src/protocol/operations.ts";
import { simulatorNetwork } from "../../../bridge/src/simulator/simulator.ts";
import { drained } from "../support/media-bytes.ts";
import { handlersFor, linkedAccount, list, person, record, refusal } from "../support/simulated-account.ts";
import { waitFor } from "../support/wait.ts";

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

describe("simulator: controls", () => {
  it("a peer writes (text and media with bytes), acks, edits, revokes and calls; the phone sends", async () => {
    const a = await linkedAccount(simulatorNetwork(), "a", "491511111111");
    const received = record(
      await a.control({
        action: "receive",
        from: PEER,
        content: { type: "text", text: "hi" },
        pushName: "Peer",
        quotedId: "Q1",
      }),
    );
    expect(received).toEqual({ id: expect.stringMatching(/^3EB0/), delivered: true });
    expect(a.seen("message")[0]).toEqual({
      kind: "message",
      live: true,
      message: {
        id: received.id,
        chat: PEER,
        sender: PEER,
        fromMe: false,
        pushName: "Peer",
        quotedId: "Q1",
        timestamp: expect.any(Number),
        content: { type: "text", text: "hi" },
      },
    });

    const audio = Buffer.from("OggS voice");
    await a.control({
      action: "receive",
      from: PEER,
      id: "VOICE-1",
      content: {
        type: "audio",
        base64: audio.toString("base64"),
        mimetype: "audio/ogg; codecs=opus",
        seconds: 3,
        ptt: true,
      },
    });
    expect(a.seen("message")[1]?.message.content).toEqual({
      type: "audio",
      ptt: true,
      media: {
        mimetype: "audio/ogg; codecs=opus",
        size: audio.length,
        seconds: 3,
        sha256: createHash("sha256").update(audio).digest("hex"),
      },
    });
    const download = await a.perform({
      op: "media.download",
      message: ref({ id: "VOICE-1", fromMe: false }),
      ref: "dl_000001",
    });
    expect((await drained(download)).equals(audio)).toBe(true);

    await a.control({ action: "ack", id: "MSG1", chat: PEER, status: "READ" });
    await a.control({ action: "edit", id: "VOICE-1", chat: PEER, text: "changed" });
    await a.control({ action: "revoke", id: "VOICE-1", chat: PEER });
    const call = record(await a.control({ action: "call", from: PEER, isVideo: true }));
    const phone = record(await a.control({ action: "phone.send", to: PEER, text: "from my phone" }));
    expect(a.events.slice(2)).toEqual([
      { kind: "message.status", id: "MSG1", chat: PEER, status: "READ" },
      { kind: "message.edited", id: "VOICE-1", chat: PEER, fromMe: false, text: "changed" },
      { kind: "message.deleted", id: "VOICE-1", chat: PEER, fromMe: false },
      { kind: "call", id: call.id, from: PEER, status: "offer", isVideo: true },
      {
        kind: "message",
        live: true,
        message: expect.objectContaining({
          id: phone.id,
          chat: PEER,
          sender: a.me,
          fromMe: true,
          content: { type: "text", text: "from my phone" },
        }),
      },
    ]);
    expect(list(await a.control({ action: "inbox", peer: PEER }))).toHaveLength(1);
  });

  it("refuses bad actions (400) and network actions while not connected (503); state still answers", async () => {
    const network = simulatorNetwork();
    const a = await linkedAccount(network, "a", "491511111111");
    expect(await refusal(a.control({ action: "fly" }))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/invalid sim action/),
    });
    expect(
      await refusal(
        a.control({ action: "receive", from: "not-a-jid", content: { type: "text", text: "x" } }),
      ),
    ).toMatchObject({ status: 400 });
    expect(
      await refusal(
        a.control({
          action: "receive",
          from: PEER,
          chat: "120363000000000001@g.us",
          content: { type: "text", text: "x" },
        }),
      ),
    ).toEqual({
      status: 404,
      message: "group not found",
    });

    const events: NetworkEvent[] = [];
    const opened = { value: false };
    const waiting = network.open({
      sessionId: "fresh",
      auth: { creds: null, keys: {} },
      handlers: handlersFor(events, opened),
    });
    await waitFor(() => network.openSockets === 2, "second socket");
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await refusal(waiting.perform(send(PEER, "MSG00000009"), null))).toEqual({
      status: 503,
      message: "WhatsApp is not connected",
    });
    expect(
      await refusal(
        waiting.simulate?.control({ action: "receive", from: PEER, content: { type: "text", text: "x" } }) ??
          Promise.resolve(),
      ),
    ).toMatchObject({ status: 503 });
    expect(await waiting.simulate?.control({ action: "state" })).toMatchObject({
      inbox: [],
      numberChecks: 0,
    });
  });

  it("holds events for an account that is offline and delivers them when it reconnects", async () => {
    const network = simulatorNetwork();
    const a = await linkedAccount(network, "a", "491511111111");
    const b = await linkedAccount(network, "b", "491522222222");
    b.socket.close();
    await a.perform(send(b.me, "WHILE-AWAY1"));
    const again = await linkedAccount(network, "b", "491522222222");
    expect(again.seen("message").map((event) => event.message.id)).toEqual(["WHILE-AWAY1"]);
  });
});
