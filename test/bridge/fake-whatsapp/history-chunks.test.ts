/**
 * History sync in several chunks, as real phones send it, through the bridge's own session code on
 * real Baileys: a first chunk inline, the others encrypted on the fake media host (history-media.ts)
 * and fetched by Baileys by direct path from WhatsApp's default media host, which the bridge sends to
 * the fake's (`baileysNetwork({ mediaHost })`, WA_MEDIA_HOST).
 */
import { Agent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { type HistoryChunk, PhoneDevice } from "../../fake-whatsapp/history.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";
import { storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const PHONE = "4915550006161";
const SESSION = "s-history";
const FRIEND = "4915550001111@s.whatsapp.net";
const COLLEAGUE = "4915550002222@s.whatsapp.net";
const STRANGER = "4915550003333@s.whatsapp.net";
const day = 86_400;
const now = () => Math.floor(Date.now() / 1000);

/** A linked session whose phone sends `chunks` on pairing; answers what the edge stored and the media host. */
async function pairedWithHistory(chunks: HistoryChunk[], { mediaHost = true } = {}) {
  const log = process.env.FAKE_WA_LOG ? (line: string) => console.log(`[fake-wa] ${line}`) : undefined;
  const whatsapp = await FakeWhatsApp.start(log ? { log } : {});
  const edge = await startFakeEdge();
  cleanup.push(
    () => whatsapp.close(),
    () => edge.close(),
  );
  const media = await whatsapp.messaging.enableMedia();
  // Baileys downloads with the global fetch: this dispatcher trusts the fake host's per-run certificate.
  const trusting = new Agent({ connect: { ca: media.certificate } });
  cleanup.push(() => trusting.close());
  const bridge = await startBridge(
    edge,
    baileysNetwork({
      waWebSocketUrl: whatsapp.url,
      connectTimeoutMs: 5_000,
      rootKey: whatsapp.rootKey,
      mediaDispatcher: trusting,
      ...(mediaHost ? { mediaHost: media.hostname } : {}),
    }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  const phone = new FakePhone(whatsapp, PHONE);
  const sent: string[] = [];
  new PhoneDevice(whatsapp, PHONE, "Acme", phone.device).sendHistoryChunksOnPairing(chunks, (id) =>
    sent.push(id),
  );
  await bridge.assign(SESSION);
  const qr = await waitFor(() => storedEvents(edge, SESSION, "qr")[0]?.qr, "qr", 10_000);
  await phone.scan(qr);
  await waitFor(() => sent.length === chunks.length, "history sent", 15_000);
  return { edge, media };
}

const chunks = (tamperRecent: boolean): HistoryChunk[] => [
  {
    syncType: "INITIAL_BOOTSTRAP",
    progress: 10,
    chats: [
      {
        jid: FRIEND,
        name: "Friend",
        messages: [{ id: "BOOT1", text: "latest from friend", fromMe: false, timestamp: now() - 1 * day }],
      },
    ],
  },
  {
    syncType: "RECENT",
    progress: 40,
    chats: [
      {
        jid: FRIEND,
        messages: [
          { id: "REC2", text: "see you", fromMe: true, timestamp: now() - 2 * day },
          { id: "REC1", text: "dinner?", fromMe: false, timestamp: now() - 3 * day },
        ],
      },
    ],
  },
  {
    syncType: "RECENT",
    progress: 70,
    tamper: tamperRecent,
    chats: [
      {
        jid: STRANGER,
        name: "Stranger",
        messages: [
          { id: "TAMPERED1", text: "from a broken chunk", fromMe: false, timestamp: now() - 2 * day },
        ],
      },
    ],
  },
  {
    syncType: "RECENT",
    progress: 100,
    chats: [
      {
        jid: COLLEAGUE,
        name: "Colleague",
        messages: [{ id: "REC3", text: "report attached", fromMe: false, timestamp: now() - 4 * day }],
      },
    ],
  },
  { syncType: "PUSH_NAME", pushNames: [{ jid: COLLEAGUE, name: "Grace" }] },
];

describe("history sync through the media host", () => {
  it("stores the messages of every chunk, inline and from the media host, once each, not live; a tampered chunk is skipped", async () => {
    const { edge, media } = await pairedWithHistory(chunks(true));
    const stored = () => storedEvents(edge, SESSION, "message");
    await waitFor(() => stored().length >= 4, "history from every good chunk", 30_000);
    // The PUSH_NAME chunk comes last: once its name is stored, every chunk has been handled.
    await waitFor(
      () => storedEvents(edge, SESSION, "contacts").some((e) => e.contacts.some((c) => c.notify === "Grace")),
      "the push names chunk",
      15_000,
    );
    const messages = stored();
    expect(messages.map((event) => [event.message.id, event.message.chat, event.live]).sort()).toEqual([
      ["BOOT1", FRIEND, false],
      ["REC1", FRIEND, false],
      ["REC2", FRIEND, false],
      ["REC3", COLLEAGUE, false],
    ]);
    expect(messages.find((event) => event.message.id === "REC2")?.message).toMatchObject({
      fromMe: true,
      content: { text: "see you" },
    });
    const contacts = storedEvents(edge, SESSION, "contacts").flatMap((event) => event.contacts);
    expect(contacts).toContainEqual(expect.objectContaining({ jid: COLLEAGUE, notify: "Grace" }));
    expect(contacts).toContainEqual(expect.objectContaining({ jid: COLLEAGUE, name: "Colleague" }));
    expect(contacts.some((contact) => contact.jid === STRANGER)).toBe(false);
    // Each of the four media-host chunks was fetched from the fake's host (the bootstrap was inline).
    expect(media.downloads.filter((line) => line.endsWith(" 200"))).toHaveLength(4);
  }, 60_000);

  it("without the media host the bridge gets only the inline bootstrap", async () => {
    const { edge, media } = await pairedWithHistory(chunks(false), { mediaHost: false });
    await waitFor(() => storedEvents(edge, SESSION, "message").length >= 1, "the bootstrap", 30_000);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(storedEvents(edge, SESSION, "message").map((event) => event.message.id)).toEqual(["BOOT1"]);
    expect(media.downloads).toEqual([]);
  }, 60_000);
});
