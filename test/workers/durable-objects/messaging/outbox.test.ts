// Network events from the bridge are stored once and handed to the webhook outbox in the same
// transaction, before the event is acknowledged: the webhooks issue delivers what is here.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connectedSession } from "../../connected-session";
import { emit, inboundMessage } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

type Envelope<T> = { status: boolean; data: T };
type Entry = { event: string; data: Record<string, unknown> };

const ME = "628111000111@s.whatsapp.net";
const PEER = "628122200022@s.whatsapp.net";
const GROUP = "120363000000000777@g.us";

const connected = () => connectedSession("Outbox", ME);

async function outbox(id: string): Promise<Entry[]> {
  return runInDurableObject(env.SESSION.getByName(id), (_instance, state) =>
    state.storage.sql
      .exec<{ event: string; data: string }>("SELECT event, data FROM outbox ORDER BY seq")
      .toArray()
      .map((row) => ({ event: row.event, data: JSON.parse(row.data) as Record<string, unknown> })),
  );
}

const message = (id: string, overrides: Record<string, unknown> = {}) =>
  inboundMessage(PEER, id, { type: "text", text: `text of ${id}` }, { pushName: "Peer", ...overrides });

describe("the webhook outbox", () => {
  it("gets one entry per change, even when the bridge delivers an event twice", async () => {
    const s = await connected();
    let seq = 2;
    const next = (event: Record<string, unknown>) => emit(s.link, 1, seq++, event);
    await next(message("IN-1"));
    await next(message("IN-1")); // the same message again (a re-delivery)
    await next(message("OLD-1", { timestamp: 1 })); // arrives late, but is older than everything
    await next({ ...message("HIST-1"), live: false }); // history sync: stored, not announced
    await next(message("OUT-1", { fromMe: true, sender: ME }));
    await next({ kind: "message.status", id: "OUT-1", chat: PEER, status: "DELIVERED" });
    await next({ kind: "message.status", id: "OUT-1", chat: PEER, status: "SENT" }); // never backwards
    await next({ kind: "message.edited", id: "IN-1", chat: PEER, fromMe: false, text: "edited" });
    await next({ kind: "message.deleted", id: "IN-1", chat: PEER, fromMe: false });
    await next({ kind: "message.deleted", id: "IN-1", chat: PEER, fromMe: false });
    await next(message("ST-1", { chat: "status@broadcast" }));
    await next({ kind: "contacts", contacts: [{ jid: PEER, name: "Peer Name" }] });
    await next({ kind: "contacts", contacts: [{ jid: PEER, name: "Peer Name" }] });
    await next({ kind: "groups", action: "upsert", groups: [{ jid: GROUP, subject: "Team" }] });
    await next({ kind: "groups", action: "update", groups: [{ jid: GROUP, subject: "Team 2" }] });
    await next({ kind: "group.participants", jid: GROUP, action: "add", participants: [PEER] });

    const entries = await outbox(s.id);
    const connection = entries.filter((entry) => entry.event === "connection.update");
    expect(connection.map((entry) => entry.data.state)).toEqual(["starting", "connected"]);
    expect(connection[1]?.data).toMatchObject({ status: "Connected", previousState: "starting" });
    const changes = entries.filter((entry) => entry.event !== "connection.update");
    expect(changes.map((entry) => entry.event)).toEqual([
      "message.received",
      "contact.update", // the peer's push name, learnt from their first message
      "message.received",
      "message.sent",
      "message.status",
      "message.edited",
      "message.deleted",
      "status.update",
      "contact.update",
      "group.upsert",
      "group.update",
      "group.participant",
    ]);
    expect(changes[0]?.data).toMatchObject({
      id: "IN-1",
      remoteJid: PEER,
      fromMe: false,
      content: "text of IN-1",
    });
    expect(changes[1]?.data).toMatchObject({ jid: PEER, notify: "Peer" });
    expect(changes[4]?.data).toMatchObject({ keyId: "OUT-1", status: "DELIVERED" });

    const history = await call<Envelope<{ id: string }[]>>(
      "GET",
      `/api/chat/${s.slug}/${encodeURIComponent(PEER)}`,
      {
        headers: asKey(s.key),
      },
    );
    expect(history.body.data.map((m) => m.id)).toEqual(["OLD-1", "IN-1", "HIST-1", "OUT-1"]);
  });

  it("a receipt folded into our own message's re-delivery (Baileys' event buffer) is still a message.status", async () => {
    const s = await connected();
    let seq = 2;
    const next = (event: Record<string, unknown>) => emit(s.link, 1, seq++, event);
    await next(message("OUT-2", { fromMe: true, sender: ME, status: "SENT" }));
    await next(message("OUT-2", { fromMe: true, sender: ME, status: "DELIVERED" }));
    await next(message("OUT-2", { fromMe: true, sender: ME, status: "DELIVERED" })); // nothing new
    await next(message("OUT-2", { fromMe: true, sender: ME, status: "SENT" })); // never backwards

    const changes = (await outbox(s.id)).filter((entry) => entry.event !== "connection.update");
    expect(
      changes.map((entry) => [entry.event, entry.data.keyId ?? entry.data.id, entry.data.status]),
    ).toEqual([
      ["message.sent", "OUT-2", "SENT"],
      ["message.status", "OUT-2", "DELIVERED"],
    ]);
  });
});
