// A consumer reading a session's events from a cursor across a bridge failover (issue 33): the bridge
// holding the session dies mid-conversation, another takes the session under a new lease and reports
// the messages that came meanwhile, one of them again (a real bridge re-reports what WhatsApp
// redelivers). Read from cursor 0, and resumed from the cursor it stopped at, the log gives each event
// exactly once, in order.
import { afterEach, describe, expect, it } from "vitest";
import { ownedSession } from "../../connected-session";
import { emit, FakeBridge, inboundMessage, type Link } from "../../fake-bridge";
import { asKey, call } from "../../helpers";

const ME = "628100900900@s.whatsapp.net";
const PEER = "628200900900@s.whatsapp.net";

interface LoggedEvent {
  id: string;
  cursor: string;
  event: string;
  data: { id?: string; content?: string };
}

const bridges: FakeBridge[] = [];
afterEach(() => {
  for (const bridge of bridges.splice(0)) bridge.fleet.socket.close(1001, "test done");
});

async function liveBridge(): Promise<FakeBridge> {
  const bridge = await new FakeBridge().connect();
  bridges.push(bridge);
  return bridge;
}

function inbound(link: Link, epoch: number, seq: number, id: string, text: string) {
  return emit(link, epoch, seq, inboundMessage(PEER, id, { type: "text", text }));
}

async function readFrom(
  slug: string,
  key: string,
  after: string,
): Promise<{ events: LoggedEvent[]; next: string }> {
  const events: LoggedEvent[] = [];
  let cursor = after;
  for (let pages = 0; pages < 20; pages++) {
    const page = await call<{ data: { events: LoggedEvent[]; next: string } }>(
      "GET",
      `/api/sessions/${slug}/events?after=${cursor}&limit=2`,
      { headers: asKey(key) },
    );
    expect(page.status).toBe(200);
    if (page.body.data.events.length === 0) return { events, next: cursor };
    events.push(...page.body.data.events);
    cursor = page.body.data.next;
  }
  throw new Error("the log did not end");
}

const messagesIn = (events: LoggedEvent[]) =>
  events.filter((e) => e.event === "message.received").map((e) => e.data.content);

describe("session events across a bridge failover", () => {
  it("a consumer resuming from its cursor gets every event once, in order, whichever bridge reported it", async () => {
    const first = await liveBridge();
    const session = await ownedSession("Failover log");
    expect(
      (await call("POST", `/api/sessions/${session.slug}/start`, { headers: asKey(session.key) })).status,
    ).toBe(200);
    await first.waitForAssign(session.id);
    const held = await first.hold(session.id);
    if (!("link" in held)) throw new Error(`hold: ${held.status}`);
    await emit(held.link, 1, 1, { kind: "auth", creds: { registered: true }, keys: {} });
    await emit(held.link, 1, 2, { kind: "connected", me: { id: ME } });
    await inbound(held.link, 1, 3, "MSG-A-1", "one");
    await inbound(held.link, 1, 4, "MSG-A-2", "two");

    // The consumer reads what there is, then goes away.
    const before = await readFrom(session.slug, session.key, "0");
    expect(messagesIn(before.events)).toEqual(["one", "two"]);

    // The bridge dies; after the grace period the session moves to another bridge, under epoch 2.
    const heir = await liveBridge();
    first.fleet.socket.close(4000, "killed");
    held.link.socket.close(4000, "killed");
    bridges.splice(bridges.indexOf(first), 1);
    await heir.waitForAssign(session.id);
    const taken = await heir.hold(session.id);
    if (!("link" in taken)) throw new Error(`heir hold: ${taken.status}`);
    expect(taken.welcome).toMatchObject({ epoch: 2 });
    await emit(taken.link, 2, 1, { kind: "connected", me: { id: ME } });
    // WhatsApp redelivers the last message to the new connection, then the ones sent meanwhile.
    await inbound(taken.link, 2, 2, "MSG-A-2", "two");
    await inbound(taken.link, 2, 3, "MSG-B-1", "three");
    await inbound(taken.link, 2, 4, "MSG-B-2", "four");

    // Resumed from its cursor: only what came after, each once.
    const after = await readFrom(session.slug, session.key, before.next);
    expect(messagesIn(after.events)).toEqual(["three", "four"]);
    // From the start: the whole conversation once, in order; ids and cursors never repeat.
    const all = await readFrom(session.slug, session.key, "0");
    expect(messagesIn(all.events)).toEqual(["one", "two", "three", "four"]);
    expect(new Set(all.events.map((e) => e.id)).size).toBe(all.events.length);
    expect(all.events.map((e) => e.cursor)).toEqual(
      [...all.events.map((e) => e.cursor)].sort((a, b) => Number(a) - Number(b)),
    );
    expect(all.events).toEqual([...before.events, ...after.events]);
  });
});
