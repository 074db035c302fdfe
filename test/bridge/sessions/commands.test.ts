/** Commands from the edge: each answered by exactly one result, with the events they cause. */
import { afterEach, describe, expect, it } from "vitest";
import type { SessionEvent } from "../../../bridge/src/protocol/link.ts";
import { captureNetwork, startBridge, startSimulatedBridge } from "../support/bridge.ts";
import { type FakeEdge, startFakeEdge } from "../support/fake-edge.ts";
import { sleep, waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function edgeForTest(): Promise<FakeEdge> {
  const edge = await startFakeEdge();
  cleanup.push(() => edge.close());
  return edge;
}

const count = (edge: FakeEdge, id: string, kind: SessionEvent["kind"]) =>
  edge.session(id).stored.filter((event) => event.kind === kind).length;
type Disconnected = Extract<SessionEvent, { kind: "disconnected" }>;
const lastDisconnect = (edge: FakeEdge, id: string) =>
  edge
    .session(id)
    .stored.filter((event): event is Disconnected => event.kind === "disconnected")
    .at(-1);

describe("commands", () => {
  it("start, pair, sim.scan, sim.disconnect, stop and logout each answer exactly one result", async () => {
    const edge = await edgeForTest();
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(() => bridge.fleet.shutdown());
    const sid = "cmd1";
    edge.session(sid).desired = "stopped";
    await bridge.assign(sid);

    // Assigned as stopped: the link is held, WhatsApp stays closed until `start`.
    await sleep(50);
    expect(bridge.network.opens(sid)).toBe(0);
    expect(await edge.command(sid, "sim.scan")).toMatchObject({
      ok: false,
      error: expect.stringMatching(/start the session/),
    });

    expect(await edge.command(sid, "start")).toMatchObject({ ok: true, epoch: 1 });
    // pair waits for the QR (the socket must be up) and returns an 8-character code.
    const paired = await edge.command(sid, "pair", { phoneNumber: "4915112345678" });
    expect(paired).toMatchObject({ ok: true, data: { code: expect.stringMatching(/^[A-Z0-9]{8}$/) } });
    expect(await edge.command(sid, "pair", { phoneNumber: "+49 151" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/8-15 digits/),
    });

    expect(await edge.command(sid, "sim.scan")).toMatchObject({ ok: true });
    await waitFor(() => count(edge, sid, "connected") === 1, "connected after scan");
    expect(await edge.command(sid, "pair", { phoneNumber: "4915112345678" })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/already paired/),
    });

    expect(await edge.command(sid, "sim.disconnect", { code: 428 })).toMatchObject({ ok: true });
    await waitFor(() => count(edge, sid, "connected") === 2, "reconnected after 428");
    expect(lastDisconnect(edge, sid)).toEqual({
      kind: "disconnected",
      code: 428,
      reason: "connection closed",
      next: "reconnecting",
    });

    expect(await edge.command(sid, "stop")).toMatchObject({ ok: true });
    await waitFor(() => lastDisconnect(edge, sid)?.next === "stopped", "stopped");
    expect(bridge.network.openSockets).toBe(0);
    expect(edge.session(sid).auth.creds).toMatchObject({ registered: true }); // stop keeps the creds

    expect(await edge.command(sid, "start")).toMatchObject({ ok: true });
    await waitFor(() => count(edge, sid, "connected") === 3, "connected again on the kept creds");

    expect(await edge.command(sid, "logout")).toMatchObject({ ok: true });
    await waitFor(() => lastDisconnect(edge, sid)?.next === "logged_out", "logged out");
    expect(lastDisconnect(edge, sid)).toEqual({
      kind: "disconnected",
      code: 401,
      reason: "logged out",
      next: "logged_out",
    });
    expect(edge.session(sid).auth).toEqual({ creds: null, keys: {} });
    expect(bridge.network.openSockets).toBe(0);
    const clear = edge
      .session(sid)
      .stored.filter((event) => event.kind === "auth")
      .at(-1);
    expect(clear).toEqual({ kind: "auth", creds: null, keys: {} });

    // Every command got exactly one result, all of epoch 1.
    await sleep(50);
    const ids = edge.session(sid).results.map((result) => result.id);
    expect(ids.length).toBe(10);
    expect(new Set(ids).size).toBe(ids.length);
    expect(edge.protocolErrors).toEqual([]);
  });

  it("follows the policy on WhatsApp closes: 440 fails without reconnecting, 401 from the phone clears creds", async () => {
    const edge = await edgeForTest();
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(() => bridge.fleet.shutdown());
    const sid = "policy";
    edge.session(sid).auth = {
      creds: { registered: true, me: { id: "491511234567@s.whatsapp.net" } },
      keys: { "session:peer": "k" },
    };
    await bridge.assign(sid);
    await waitFor(() => count(edge, sid, "connected") === 1, "connected");

    expect(await edge.command(sid, "sim.disconnect", { code: 440 })).toMatchObject({ ok: true });
    await waitFor(() => lastDisconnect(edge, sid)?.next === "failed", "failed");
    await sleep(300);
    expect(bridge.network.opens(sid)).toBe(1); // never reconnected on its own

    expect(await edge.command(sid, "start")).toMatchObject({ ok: true });
    await waitFor(() => count(edge, sid, "connected") === 2, "started again");
    expect(await edge.command(sid, "sim.disconnect", { code: 401 })).toMatchObject({ ok: true });
    await waitFor(() => lastDisconnect(edge, sid)?.next === "logged_out", "logged out by the phone");
    expect(edge.session(sid).auth).toEqual({ creds: null, keys: {} });
    await sleep(100);
    expect(bridge.network.opens(sid)).toBe(2);
  });

  it("ignores a command whose deadline has passed", async () => {
    const edge = await edgeForTest();
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(() => bridge.fleet.shutdown());
    edge.session("late").desired = "stopped";
    await bridge.assign("late");
    await sleep(20);
    edge.sendCommand("late", "start", {}, Date.now() - 1);
    await sleep(100);
    expect(edge.session("late").results).toEqual([]);
    expect(bridge.network.opens("late")).toBe(0);
  });

  it("on real WhatsApp, sim.* commands answer 'simulator only'", async () => {
    const edge = await edgeForTest();
    const { network, sockets } = captureNetwork(false);
    const bridge = await startBridge(edge, network);
    cleanup.push(() => bridge.fleet.shutdown());
    await bridge.assign("real");
    await waitFor(() => sockets.length === 1, "socket opened");
    expect(await edge.command("real", "sim.scan")).toMatchObject({ ok: false, error: "simulator only" });
    expect(await edge.command("real", "sim.disconnect", { code: 428 })).toMatchObject({
      ok: false,
      error: "simulator only",
    });
    expect(sockets[0]?.closed).toBe(false);
  });
});
