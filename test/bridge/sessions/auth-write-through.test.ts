/**
 * Auth writes (Baileys' creds.update / keys.set through the seam's persistAuth) resolve only once the
 * edge has acknowledged the `auth` event: that is what makes them durable.
 */
import { afterEach, describe, expect, it } from "vitest";
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

/** Tracks whether a promise settled, without awaiting it. */
function watch(promise: Promise<void>) {
  const state = { settled: false, failed: false };
  promise.then(
    () => {
      state.settled = true;
    },
    () => {
      state.settled = true;
      state.failed = true;
    },
  );
  return state;
}

describe("auth write-through", () => {
  it("a write stays pending while acks are withheld, survives a link drop, and resolves on the ack", async () => {
    const edge = await edgeForTest();
    const { network, sockets } = captureNetwork();
    const bridge = await startBridge(edge, network);
    cleanup.push(() => bridge.fleet.shutdown());
    const state = edge.session("w1");
    state.ackMode = "none";
    await bridge.assign("w1");
    const socket = await waitFor(() => sockets[0], "socket opened");

    const write = watch(
      socket.handlers.persistAuth({
        creds: { registered: false, noiseKey: { type: "Buffer", data: "AAEC" } },
        keys: { "pre-key:1": { public: { type: "Buffer", data: "AQ==" } }, "session:old": null },
      }),
    );
    await waitFor(() => state.eventFrames.some((frame) => frame.event.kind === "auth"), "auth event sent");
    await sleep(100);
    expect(write.settled).toBe(false);

    // The edge restarts without having stored it: replayed on the new link, still pending until acked.
    state.ackMode = "store-only";
    edge.terminateSession("w1");
    await waitFor(() => state.connections === 2 && state.lastSeq === 1, "replayed and stored");
    await sleep(50);
    expect(write.settled).toBe(false);

    edge.ackAll("w1");
    await waitFor(() => write.settled, "write durable");
    expect(write.failed).toBe(false);
    expect(state.auth).toEqual({
      creds: { registered: false, noiseKey: { type: "Buffer", data: "AAEC" } },
      keys: { "pre-key:1": { public: { type: "Buffer", data: "AQ==" } } },
    });
    expect(sockets).toHaveLength(1); // the WhatsApp socket was never touched
  });

  it("a write of a live socket survives a lease change: sent again as seq 1 of the new epoch", async () => {
    const edge = await edgeForTest();
    const { network, sockets } = captureNetwork();
    const bridge = await startBridge(edge, network);
    cleanup.push(() => bridge.fleet.shutdown());
    const state = edge.session("w2");
    state.ackMode = "none";
    await bridge.assign("w2");
    const socket = await waitFor(() => sockets[0], "socket opened");
    const write = watch(socket.handlers.persistAuth({ keys: { "session:a": "x" } }));
    await waitFor(() => state.eventFrames.length === 1, "auth sent");

    state.epoch = 5;
    state.lastSeq = 0;
    state.ackMode = "auto";
    edge.terminateSession("w2");
    await waitFor(() => write.settled, "write durable under the new lease");
    expect(write.failed).toBe(false);
    expect(state.eventFrames.at(-1)).toMatchObject({
      epoch: 5,
      seq: 1,
      event: { kind: "auth", keys: { "session:a": "x" } },
    });
    expect(state.staleFrames).toBe(0);
  });

  it("a pending write is rejected (not left hanging) when the session leaves the bridge", async () => {
    const edge = await edgeForTest();
    const { network, sockets } = captureNetwork();
    const bridge = await startBridge(edge, network);
    cleanup.push(() => bridge.fleet.shutdown());
    edge.session("w3").ackMode = "none";
    await bridge.assign("w3");
    const socket = await waitFor(() => sockets[0], "socket opened");
    const write = watch(socket.handlers.persistAuth({ keys: { "session:b": "y" } }));
    edge.sendFleet({ type: "unassign", session: "w3" });
    await waitFor(() => write.settled, "write settled");
    expect(write.failed).toBe(true);
    expect(sockets[0]?.closed).toBe(true);
  });

  it("simulated linking waits for the creds to be durable before the 515 restart", async () => {
    const edge = await edgeForTest();
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(() => bridge.fleet.shutdown());
    const state = edge.session("w4");
    await bridge.assign("w4");
    await waitFor(() => state.stored.some((event) => event.kind === "qr"), "qr");

    state.ackMode = "none";
    expect(await edge.command("w4", "sim.scan")).toMatchObject({ ok: true });
    await waitFor(() => state.eventFrames.some((frame) => frame.event.kind === "auth"), "creds sent");
    await sleep(100);
    expect(state.eventFrames.some((frame) => frame.event.kind === "disconnected")).toBe(false);

    state.ackMode = "auto";
    edge.ackAll("w4");
    await waitFor(() => state.stored.some((event) => event.kind === "connected"), "connected");
    expect(state.stored.map((event) => event.kind)).toEqual([
      "connecting",
      "qr",
      "auth",
      "disconnected",
      "connecting",
      "connected",
    ]);
  });
});
