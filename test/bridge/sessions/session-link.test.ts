/**
 * The bridge against a fake edge over real WebSockets, with the simulated WhatsApp: linking, event
 * replay, link blips, and the ways the edge takes a session away.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { edgeWithSimulatedBridge, startSimulatedBridge } from "../support/bridge.ts";
import { CLOSE, type FakeEdge } from "../support/fake-edge.ts";
import { sleep, waitFor } from "../support/wait.ts";

const kinds = (events: SessionEvent[]) => events.map((event) => event.kind);
const linkedCreds = {
  registered: true,
  me: { id: "491511234567@s.whatsapp.net", name: "Simulated 1" },
  simSecret: "x",
};

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const setup = (options: Parameters<typeof startSimulatedBridge>[1] = {}) =>
  edgeWithSimulatedBridge(cleanup, options);

function storedOf(edge: FakeEdge, sessionId: string, kind: SessionEvent["kind"]) {
  return edge.session(sessionId).stored.filter((event) => event.kind === kind);
}

describe("bridge ↔ edge session link", () => {
  it("says hello with its capacity, then links a phone: QR → scan → 515 → connected, no second QR", async () => {
    const { edge, bridge } = await setup();
    await bridge.assign("q1");
    expect(edge.fleet.query?.get("bridge")).toBe("test-bridge");
    expect(edge.fleet.query?.get("capacity")).toBe("1000");
    expect(edge.fleet.frames[0]).toEqual({ type: "hello", version: 1, sessions: [] });

    const [qr] = await waitFor(
      () => storedOf(edge, "q1", "qr").length > 0 && storedOf(edge, "q1", "qr"),
      "qr",
    );
    expect(qr).toMatchObject({
      qr: expect.stringMatching(/^sim-qr:q1:1:/),
      image: expect.stringMatching(/^data:image\/png;base64,/),
    });

    expect(await edge.command("q1", "sim.scan")).toMatchObject({ ok: true });
    const [connected] = await waitFor(
      () => storedOf(edge, "q1", "connected").length > 0 && storedOf(edge, "q1", "connected"),
      "connected",
    );
    expect(connected).toEqual({
      kind: "connected",
      me: { id: expect.stringMatching(/^\d{12}@s\.whatsapp\.net$/), name: expect.any(String) },
    });
    expect(kinds(edge.session("q1").stored)).toEqual([
      "connecting",
      "qr",
      "auth",
      "disconnected",
      "connecting",
      "connected",
    ]);
    expect(storedOf(edge, "q1", "disconnected")[0]).toEqual({
      kind: "disconnected",
      code: 515,
      reason: "restart required",
      next: "reconnecting",
    });
    expect(edge.session("q1").auth.creds).toMatchObject({ registered: true });
    expect(bridge.network.opens("q1")).toBe(2);
    // Seqs are 1..n of epoch 1, each sent once.
    expect(edge.session("q1").eventFrames.map((frame) => frame.seq)).toEqual([1, 2, 3, 4, 5, 6]);

    // A new bridge (restart) gets the stored creds in welcome and connects without a QR.
    await bridge.fleet.shutdown();
    const second = await startSimulatedBridge(edge);
    cleanup.push(() => second.fleet.shutdown());
    edge.session("q1").epoch = 2;
    edge.session("q1").lastSeq = 0;
    await second.assign("q1");
    await waitFor(
      () => second.network.openSockets === 1 && storedOf(edge, "q1", "connected").length === 2,
      "reconnected",
    );
    expect(kinds(edge.session("q1").stored).slice(6)).toEqual(["connecting", "connected"]);
    expect(edge.protocolErrors).toEqual([]);
  });

  it("replays unacked events in order after the edge drops the link, skipping seq <= lastSeq, never twice once acked", async () => {
    const { edge, bridge } = await setup();
    const state = edge.session("r1");
    state.ackMode = "store-only"; // the DO stores, but its acks are lost
    await bridge.assign("r1");
    await waitFor(() => state.eventFrames.length === 2, "connecting + qr");
    state.ackMode = "none"; // the DO never sees the next ones
    expect(await edge.command("r1", "sim.disconnect", { code: 428 })).toMatchObject({ ok: true });
    await waitFor(() => state.eventFrames.length === 5, "disconnected, connecting, qr");
    expect(state.lastSeq).toBe(2);

    state.ackMode = "auto";
    const before = state.eventFrames.length;
    edge.terminateSession("r1");
    await waitFor(() => state.connections === 2 && state.lastSeq === 5, "replay");
    // Only 3..5 again (1 and 2 were stored: welcome.lastSeq = 2), in order.
    expect(state.eventFrames.slice(before).map((frame) => frame.seq)).toEqual([3, 4, 5]);
    expect(kinds(state.stored)).toEqual(["connecting", "qr", "disconnected", "connecting", "qr"]);

    // Everything is acked now: another drop replays nothing.
    await sleep(20);
    const settled = state.eventFrames.length;
    edge.closeSession("r1", 1011, "edge restart");
    await waitFor(() => state.connections === 3, "third link");
    await sleep(100);
    expect(state.eventFrames.length).toBe(settled);
    expect(bridge.network.opens("r1")).toBe(2);
  });

  it("keeps WhatsApp open through a blip on the session link", async () => {
    const { edge, bridge } = await setup();
    edge.session("b1").auth = { creds: linkedCreds, keys: {} };
    await bridge.assign("b1");
    await waitFor(() => storedOf(edge, "b1", "connected").length === 1, "connected");
    expect(bridge.network.openSockets).toBe(1);

    edge.terminateSession("b1");
    await waitFor(() => edge.session("b1").connections === 2, "relink after terminate");
    edge.closeSession("b1", 1011, "blip");
    await waitFor(() => edge.session("b1").connections === 3, "relink after 1011");
    edge.closeSession("b1", CLOSE.BAD_FRAME, "bad frame");
    await waitFor(() => edge.session("b1").connections === 4, "relink after 4400");
    await sleep(50);

    expect(bridge.network.openSockets).toBe(1);
    expect(bridge.network.opens("b1")).toBe(1);
    expect(kinds(edge.session("b1").stored)).toEqual(["connecting", "connected"]);
    expect(bridge.fleet.sessions).toEqual(["b1"]);
  });

  it("a fleet link drop keeps the sessions; the new hello lists them", async () => {
    const { edge, bridge } = await setup();
    edge.session("f1").auth = { creds: linkedCreds, keys: {} };
    await bridge.assign("f1");
    await waitFor(() => storedOf(edge, "f1", "connected").length === 1, "connected");
    edge.fleet.socket?.terminate();
    await waitFor(() => edge.fleet.connections === 2 && edge.fleet.frames.length === 2, "second hello");
    expect(edge.fleet.frames[1]).toEqual({ type: "hello", version: 1, sessions: ["f1"] });
    expect(bridge.network.openSockets).toBe(1);
    expect(edge.session("f1").connections).toBe(1);
  });

  it.each([CLOSE.LEASE_LOST, CLOSE.RELEASED])(
    "%i drops the session for good, WhatsApp closed, no release",
    async (code) => {
      const { edge, bridge } = await setup();
      edge.session("l1").auth = { creds: linkedCreds, keys: {} };
      await bridge.assign("l1");
      await waitFor(
        () => bridge.network.openSockets === 1 && storedOf(edge, "l1", "connected").length === 1,
        "connected",
      );

      edge.closeSession("l1", code, "gone");
      await waitFor(() => bridge.network.openSockets === 0, "WhatsApp closed");
      expect(bridge.fleet.sessions).toEqual([]);
      await sleep(300);
      expect(edge.session("l1").connections).toBe(1);
      expect(edge.fleet.frames.filter((frame) => frame.type === "released")).toEqual([]);
    },
  );

  it("409 on the upgrade: another bridge holds the lease → released, nothing opened", async () => {
    const { edge, bridge } = await setup();
    edge.session("c1").refuseWith = 409;
    await waitFor(() => edge.fleet.frames.length > 0, "hello");
    edge.sendFleet({ type: "assign", session: "c1" });
    await waitFor(() => edge.fleet.frames.find((frame) => frame.type === "released"), "released");
    expect(edge.fleet.frames.at(-1)).toEqual({ type: "released", session: "c1" });
    expect(bridge.fleet.sessions).toEqual([]);
    expect(bridge.network.opens("c1")).toBe(0);
  });

  it("unassign closes WhatsApp without logging out and closes the link; over capacity is released", async () => {
    const { edge, bridge } = await setup({ capacity: 1 });
    edge.session("u1").auth = { creds: linkedCreds, keys: {} };
    await bridge.assign("u1");
    await waitFor(() => storedOf(edge, "u1", "connected").length === 1, "connected");

    edge.sendFleet({ type: "assign", session: "u2" });
    await waitFor(
      () => edge.fleet.frames.find((frame) => frame.type === "released"),
      "released over capacity",
    );
    expect(edge.session("u2").connections).toBe(0);

    edge.sendFleet({ type: "unassign", session: "u1" });
    await waitFor(() => edge.session("u1").closes.length === 1, "link closed");
    expect(edge.session("u1").closes).toEqual([1000]);
    expect(bridge.network.openSockets).toBe(0);
    expect(edge.session("u1").auth.creds).toEqual(linkedCreds); // no logout, creds untouched
    expect(kinds(edge.session("u1").stored)).toEqual(["connecting", "connected"]);
  });

  it("a new lease epoch drops the old queue and numbers from 1 again", async () => {
    const { edge, bridge } = await setup();
    const state = edge.session("e1");
    state.auth = { creds: linkedCreds, keys: {} };
    await bridge.assign("e1");
    await waitFor(() => storedOf(edge, "e1", "connected").length === 1, "connected");

    state.ackMode = "none";
    await edge.command("e1", "stop");
    await waitFor(() => state.eventFrames.length === 3, "stopped event sent, not acked");

    state.epoch = 2;
    state.lastSeq = 0;
    state.ackMode = "auto";
    state.desired = "running";
    const before = state.eventFrames.length;
    edge.terminateSession("e1");
    await waitFor(() => state.connections === 2, "relink");
    // The stop command halted WhatsApp, so only a start brings it back; its events start at 1.
    expect(await edge.command("e1", "start")).toMatchObject({ ok: true, epoch: 2 });
    await waitFor(() => state.stored.length === 4, "events of the new lease");
    const fresh = state.eventFrames.slice(before);
    expect(fresh.map((frame) => [frame.epoch, frame.seq, frame.event.kind])).toEqual([
      [2, 1, "connecting"],
      [2, 2, "connected"],
    ]);
    expect(state.staleFrames).toBe(0);
    expect(bridge.network.openSockets).toBe(1);
  });

  it("refuses a bad token: 401, logged loudly, retried slowly, never linked", async () => {
    const { edge, bridge } = await setup({ token: "wrong-token", slowRetryMs: 60_000 });
    await waitFor(() => edge.unauthorized.count === 1, "401");
    await sleep(300);
    expect(edge.unauthorized.count).toBe(1);
    expect(edge.fleet.connections).toBe(0);
    const loud = bridge.logs.find((line) => line.level === "error" && /BRIDGE_TOKEN/.test(line.msg));
    expect(loud?.fields).toMatchObject({ http: 401 });
    expect(JSON.stringify(bridge.logs)).not.toContain("wrong-token");
  });
});
