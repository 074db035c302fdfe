/**
 * The Baileys seam against the fake WhatsApp, through the bridge's own session code (FleetLink, the
 * session link, the write-through auth store) and a fake edge: history sync on pairing, the groups the
 * account is already in, LID ↔ phone number pairs, and logout from the phone.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import type { HistoryLimit } from "../../../bridge/src/whatsapp/history.ts";
import { baileysNetwork } from "../../../bridge/src/whatsapp/whatsapp.ts";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { FakeGroups } from "../../fake-whatsapp/groups.ts";
import { type HistoryChat, PhoneDevice } from "../../fake-whatsapp/history.ts";
import { FakePhone } from "../../fake-whatsapp/phone.ts";
import { FakeWhatsApp, type LinkedDevice } from "../../fake-whatsapp/server.ts";
import { startBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

type Stored<K extends SessionEvent["kind"]> = Extract<SessionEvent, { kind: K }>;
function stored<K extends SessionEvent["kind"]>(edge: FakeEdge, sessionId: string, kind: K): Stored<K>[] {
  return edge.session(sessionId).stored.filter((event): event is Stored<K> => event.kind === kind);
}

const PHONE = "4915550007777";
const FRIEND = "4915550001111@s.whatsapp.net";
const day = 86_400;
const now = () => Math.floor(Date.now() / 1000);

async function world(history?: HistoryLimit) {
  const log = process.env.FAKE_WA_LOG ? (line: string) => console.log(`[fake-wa] ${line}`) : undefined;
  const whatsapp = await FakeWhatsApp.start(log ? { log } : {});
  const edge = await startFakeEdge();
  cleanup.push(
    () => whatsapp.close(),
    () => edge.close(),
  );
  const bridge = await startBridge(
    edge,
    baileysNetwork({ waWebSocketUrl: whatsapp.url, connectTimeoutMs: 5_000, ...(history ? { history } : {}) }),
  );
  cleanup.push(() => bridge.fleet.shutdown());
  return { whatsapp, edge, bridge, phone: new FakePhone(whatsapp, PHONE) };
}

/** Starts the session, scans its QR with the phone and waits for `connected`. */
async function link(edge: FakeEdge, phone: FakePhone, sessionId: string): Promise<LinkedDevice> {
  const qr = await waitFor(() => stored(edge, sessionId, "qr")[0]?.qr, "qr", 10_000);
  const device = await phone.scan(qr);
  await waitFor(() => stored(edge, sessionId, "connected").length > 0, "connected", 15_000);
  return device;
}

describe("the Baileys seam against the fake WhatsApp", () => {
  it("stores the history the phone sends on pairing (not live, oldest first, within the limit) and the groups the account is already in", async () => {
    const { whatsapp, edge, bridge, phone } = await world({ days: 30, messagesPerChat: 2 });
    const groups = new FakeGroups(whatsapp);
    groups.add({
      jid: "120363000000000001@g.us",
      subject: "Family",
      description: "all of us",
      creator: FRIEND,
      creation: now() - 400 * day,
      members: [{ jid: FRIEND, admin: "superadmin" }, { jid: `${PHONE}@s.whatsapp.net` }],
    });
    groups.add({
      jid: "120363000000000002@g.us",
      subject: "Not ours",
      creator: FRIEND,
      creation: now() - 10 * day,
      members: [{ jid: FRIEND, admin: "superadmin" }],
    });
    const chats: HistoryChat[] = [
      {
        jid: FRIEND,
        name: "Friend",
        // Newest first, as WhatsApp sends them; the limit keeps the newest two.
        messages: [
          { id: "H3", text: "see you", fromMe: true, timestamp: now() - 1 * day },
          { id: "H2", text: "dinner?", fromMe: false, timestamp: now() - 2 * day, pushName: "Friend" },
          { id: "H1", text: "hello", fromMe: false, timestamp: now() - 3 * day },
        ],
      },
      {
        jid: "77000000000001@lid",
        pnJid: "4915550002222@s.whatsapp.net",
        name: "Via LID",
        messages: [
          { id: "L1", text: "lid hello", fromMe: false, timestamp: now() - 2.5 * day },
          { id: "OLD", text: "too old", fromMe: false, timestamp: now() - 90 * day },
        ],
      },
    ];
    const phoneDevice = new PhoneDevice(whatsapp, PHONE);
    const sent: string[] = [];
    phoneDevice.sendHistoryOnPairing(chats, (id) => sent.push(id));
    await bridge.assign("s1");
    const device = await link(edge, phone, "s1");
    await waitFor(() => sent.length === 1, "history sent", 10_000);

    const history = await waitFor(
      () => stored(edge, "s1", "message").length >= 3 && stored(edge, "s1", "message"),
      "history stored",
      30_000,
    );
    // In time order, none of it live (no webhooks, no bot), only what the limit keeps, and the LID
    // chat under its phone number.
    expect(history.map((event) => [event.message.id, event.message.chat, event.live])).toEqual([
      ["L1", "4915550002222@s.whatsapp.net", false],
      ["H2", FRIEND, false],
      ["H3", FRIEND, false],
    ]);
    expect(history[1]?.message).toMatchObject({ fromMe: false, sender: FRIEND, content: { text: "dinner?" } });
    expect(history[2]?.message).toMatchObject({ fromMe: true, content: { text: "see you" } });
    const contacts = stored(edge, "s1", "contacts").flatMap((event) => event.contacts);
    expect(contacts).toContainEqual({ jid: "4915550002222@s.whatsapp.net", lid: "77000000000001@lid" });
    expect(contacts).toContainEqual(expect.objectContaining({ jid: FRIEND, name: "Friend" }));

    // Groups: fetched once connected, reported whole (stored by the edge as new groups).
    const upserts = await waitFor(
      () =>
        stored(edge, "s1", "groups").filter((event) => event.action === "upsert").length > 0 &&
        stored(edge, "s1", "groups").filter((event) => event.action === "upsert"),
      "groups",
      10_000,
    );
    expect(groups.requests).toContainEqual({ device: device.jid, kind: "participating", to: "@g.us" });
    expect(upserts.flatMap((event) => event.groups)).toEqual([
      expect.objectContaining({
        jid: "120363000000000001@g.us",
        subject: "Family",
        description: "all of us",
        participants: [
          { id: FRIEND, admin: "superadmin" },
          { id: `${PHONE}@s.whatsapp.net`, admin: null },
        ],
      }),
    ]);
    expect(edge.protocolErrors).toEqual([]);
  }, 60_000);
});
