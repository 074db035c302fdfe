// Calls and contacts' presence in the SessionDO: a `call` offer from the bridge is a `call.received`
// webhook and, with rejectCalls on, a `call.reject` to the JID the call came from (a LID caller's LID,
// not the number shown); later states of the call announce nothing. A `presence` event is a
// `presence.update` webhook. POST /api/chat/{sid}/{jid}/presence/subscribe asks the bridge for the
// subscription (again on every reconnect, as WhatsApp forgets it), and refuses a group with 400.
import { describe, expect, it } from "vitest";
import { emit } from "../../../fake-bridge";
import { asKey, call } from "../../../helpers";
import { answers, bodyOf, connected, endpoint, ME, ok, PEER, to, until } from "./fake-receivers";

const LID = "83623044344058@lid";
type Frame = Record<string, unknown> & { type: string; args?: Record<string, unknown> };
const waCommand = (op: string) => (f: Frame) => f.type === "command" && f.name === "wa" && f.args?.op === op;

describe("calls and presence in the SessionDO", () => {
  it("a call offer is call.received; with rejectCalls the rejection goes to the caller's LID; presence is presence.update", async () => {
    const hook = endpoint("calls", ["call.received", "presence.update"]);
    answers.set(hook.url, ok);
    const s = await connected([hook]);
    const settings = await call("PATCH", `/api/sessions/${s.slug}/settings`, {
      body: { config: { rejectCalls: true } },
      headers: asKey(s.key),
    });
    expect(settings.status).toBe(200);

    const at = 1_772_442_904_000;
    const offer = { kind: "call", id: "CALL-1", from: PEER, caller: LID, status: "offer", isVideo: true };
    await emit(s.link, 1, s.seq++, { ...offer, isGroup: false, timestamp: at });
    const reject = await s.link.next(waCommand("call.reject"));
    expect(reject.args).toEqual({ op: "call.reject", id: "CALL-1", from: LID });
    s.link.send({ type: "result", epoch: 1, id: reject.id, ok: true });
    // The call ends: nothing more to announce or reject.
    await emit(s.link, 1, s.seq++, { ...offer, status: "terminate" });

    const presence = { chat: PEER, participant: PEER, presence: "unavailable", lastSeen: at - 60_000 };
    await emit(s.link, 1, s.seq++, { kind: "presence", ...presence });
    await until(s, () => to("calls").length === 2);
    const bodies = to("calls").map(bodyOf);
    expect(bodies.map((body) => body.event).sort()).toEqual(["call.received", "presence.update"]);
    expect(bodies.find((body) => body.event === "call.received")?.data).toEqual({
      callId: "CALL-1",
      from: PEER,
      callerPhone: PEER.split("@")[0],
      isVideo: true,
      isGroup: false,
      timestamp: at,
      rejected: true,
    });
    expect(bodies.find((body) => body.event === "presence.update")?.data).toEqual(presence);
    expect(s.link.frames.filter(waCommand("call.reject"))).toHaveLength(1);
  });

  it("presence/subscribe asks the bridge for a person's presence, again after each reconnect; a group is a 400", async () => {
    const s = await connected([]);
    const path = (jid: string) => `/api/chat/${s.slug}/${encodeURIComponent(jid)}/presence/subscribe`;
    const group = await call("POST", path("120363000000000001@g.us"), { headers: asKey(s.key) });
    expect(group.status).toBe(400);
    const pending = call("POST", path(LID), { headers: asKey(s.key) });
    const command = await s.link.next(waCommand("presence.subscribe"));
    expect(command.args).toEqual({ op: "presence.subscribe", jid: LID });
    s.link.send({ type: "result", epoch: 1, id: command.id, ok: true });
    expect((await pending).status).toBe(200);

    // WhatsApp forgets subscriptions with the connection: the session subscribes again on reconnect.
    const disconnected = {
      kind: "disconnected",
      code: 428,
      reason: "connection closed",
      next: "reconnecting",
    };
    await emit(s.link, 1, s.seq++, disconnected);
    await emit(s.link, 1, s.seq++, { kind: "connected", me: { id: ME } });
    await s.link.next(() => s.link.frames.filter(waCommand("presence.subscribe")).length === 2);
    const again = s.link.frames.filter(waCommand("presence.subscribe"))[1];
    expect(again?.args).toEqual({ op: "presence.subscribe", jid: LID });
  });
});
