/**
 * Incoming calls through the bridge's session code on real Baileys, against the fake WhatsApp: a call
 * offer (from a contact's number, or from its LID with `caller_pn`) is acked by Baileys and reaches the
 * edge as a `call` event (number preferred in `from`, the JID it came from in `caller`, video, time);
 * the rejection the edge asks for with `caller` reaches WhatsApp well formed (`<call to><reject call-id
 * call-creator>` matching the offer), and Baileys' rejectCall completes on WhatsApp's ack.
 */
import { afterEach, describe, expect, it } from "vitest";
import { FakeContact } from "../../fake-whatsapp/contact.ts";
import { waitFor } from "../support/wait.ts";
import { linkedBridge, storedEvents } from "./linked-bridge.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const SESSION = "c1";
const PHONE = "4915550006666";

describe("calls on real Baileys against the fake WhatsApp", () => {
  for (const via of ["pn", "lid"] as const) {
    it(`a call from a contact's ${via === "pn" ? "number" : "LID"}: acked, reported, rejected to that JID`, async () => {
      const { whatsapp, edge, device } = await linkedBridge(cleanup, {
        session: SESSION,
        phoneNumber: PHONE,
      });
      const caller = new FakeContact(whatsapp, "4915550002222", "Caller");
      const before = Date.now() - 1_000;
      const offer = whatsapp.calls.offer(device.jid, caller.account, {
        via,
        video: via === "lid",
        name: "Caller",
      });

      const call = await waitFor(
        () => storedEvents(edge, SESSION, "call").find((event) => event.id === offer.callId),
        "the call event",
        10_000,
      );
      expect(call).toEqual({
        kind: "call",
        id: offer.callId,
        from: caller.jid,
        status: "offer",
        isVideo: via === "lid",
        caller: via === "pn" ? caller.jid : caller.lid,
        isGroup: false,
        timestamp: expect.any(Number),
      });
      expect(call.timestamp).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      await waitFor(
        () =>
          whatsapp.received.some(
            ({ jid, node }) => jid === device.jid && node.tag === "ack" && node.attrs.id === offer.stanzaId,
          ),
        "Baileys' ack of the call",
        10_000,
      );

      // What the edge does with rejectCalls on (durable-objects/session/network-events.ts).
      const rejected = await edge.command(SESSION, "wa", {
        op: "call.reject",
        id: call.id,
        from: call.caller ?? call.from,
      });
      expect(rejected).toMatchObject({ ok: true });
      expect(whatsapp.calls.rejections).toEqual([
        { by: device.jid, to: offer.from, callId: offer.callId, callCreator: offer.from, problems: [] },
      ]);
      expect(whatsapp.calls.rejectionsFor(caller.account)).toHaveLength(1);
      expect(edge.protocolErrors).toEqual([]);
    }, 60_000);
  }

  it("a group call is reported as one (isGroup)", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    const caller = new FakeContact(whatsapp, "4915550002424", "Group caller");
    const offer = whatsapp.calls.offer(device.jid, caller.account, { group: "120363000000000077@g.us" });
    const call = await waitFor(
      () => storedEvents(edge, SESSION, "call").find((event) => event.id === offer.callId),
      "the call event",
      10_000,
    );
    expect(call).toMatchObject({ from: caller.jid, isGroup: true, isVideo: false, status: "offer" });
  }, 60_000);

  it("a rejection to the number of a caller who called by LID is not the call's: WhatsApp's view", async () => {
    const { whatsapp, edge, device } = await linkedBridge(cleanup, { session: SESSION, phoneNumber: PHONE });
    const caller = new FakeContact(whatsapp, "4915550002323", "Caller");
    const offer = whatsapp.calls.offer(device.jid, caller.account, { via: "lid" });
    await waitFor(
      () => storedEvents(edge, SESSION, "call").some((event) => event.id === offer.callId),
      "the call event",
      10_000,
    );
    expect(
      await edge.command(SESSION, "wa", { op: "call.reject", id: offer.callId, from: caller.jid }),
    ).toMatchObject({ ok: true });
    expect(whatsapp.calls.rejections[0]?.problems).toEqual([
      `sent to ${caller.jid}, but the call came from ${caller.lid}`,
      `call-creator ${caller.jid}, but it is ${caller.lid}`,
    ]);
    expect(whatsapp.calls.rejectionsFor(caller.account)).toEqual([]);
  }, 60_000);
});
