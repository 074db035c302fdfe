/**
 * The bridge's side of bridge identity (issue 18): the edge refuses a second live connection for a
 * bridge id (423) and closes a revoked bridge's link (4003); a bridge that restarts or blips must not
 * undo its own releases (the fleet gives back every session its hello does not list).
 */
import { afterEach, describe, expect, it } from "vitest";
import { edgeWithSimulatedBridge, startSimulatedBridge } from "../support/bridge.ts";
import { CLOSE, startFakeEdge } from "../support/fake-edge.ts";
import { sleep, waitFor } from "../support/wait.ts";

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

const setup = (options: Parameters<typeof startSimulatedBridge>[1] = {}) =>
  edgeWithSimulatedBridge(cleanup, options);

describe("bridge identity on the fleet link", () => {
  it("on 423 (its id is live elsewhere) says so loudly and keeps trying, then joins once free", async () => {
    const edge = await startFakeEdge();
    edge.fleet.refuseWith = 423;
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(
      () => edge.close(),
      () => bridge.fleet.shutdown(),
    );
    await waitFor(() => edge.fleet.refused >= 3, "retries after 423");
    const loud = bridge.logs.find(
      (line) => line.level === "error" && /ANOTHER PROCESS IS CONNECTED AS test-bridge/.test(line.msg),
    );
    expect(loud?.fields).toMatchObject({ http: 423 });
    expect(edge.fleet.connections).toBe(0);

    edge.fleet.refuseWith = null;
    await waitFor(() => edge.fleet.connections === 1, "joined once the id is free");
    await waitFor(() => edge.fleet.frames.some((frame) => frame.type === "hello"), "hello");
  });

  it("dials with an instance id of its own, the same on every redial, so the edge tells its own old link from a twin", async () => {
    const edge = await startFakeEdge();
    const bridge = await startSimulatedBridge(edge);
    cleanup.push(
      () => edge.close(),
      () => bridge.fleet.shutdown(),
    );
    await waitFor(() => edge.fleet.connections === 1, "first link");
    const first = edge.fleet.query?.get("instance");
    expect(first).toMatch(/^[A-Za-z0-9-]{8,64}$/);
    edge.fleet.socket?.terminate();
    await waitFor(() => edge.fleet.connections === 2, "redial");
    expect(edge.fleet.query?.get("instance")).toBe(first);

    const twin = await startSimulatedBridge(edge);
    cleanup.push(() => twin.fleet.shutdown());
    await waitFor(() => edge.fleet.connections === 3, "the twin's link");
    expect(edge.fleet.query?.get("instance")).not.toBe(first);
  });

  it("when its credential is revoked (4003) says so loudly and retries only slowly", async () => {
    const { edge, bridge } = await setup({ slowRetryMs: 60_000 });
    await waitFor(() => edge.fleet.socket, "fleet link");
    edge.fleet.socket?.close(CLOSE.REVOKED, "credential revoked");
    await waitFor(() => bridge.logs.some((line) => /CREDENTIAL WAS REVOKED/.test(line.msg)), "loud log");
    await sleep(300);
    expect(edge.fleet.connections).toBe(1);
  });

  it("tells the edge what it let go of while the fleet link was down before its next hello", async () => {
    const { edge, bridge } = await setup();
    await bridge.assign("s1");
    edge.fleet.refuseWith = 503;
    edge.fleet.socket?.terminate();
    // While the fleet link is down the edge gives the session to another bridge: this one lets go.
    edge.session("s1").refuseWith = 409;
    edge.terminateSession("s1");
    await waitFor(
      () => bridge.logs.some((line) => /another bridge holds the lease/.test(line.msg)),
      "let go",
    );

    const seen = edge.fleet.frames.length;
    edge.fleet.refuseWith = null;
    await waitFor(() => edge.fleet.frames.slice(seen).some((frame) => frame.type === "hello"), "hello");
    expect(edge.fleet.frames.slice(seen)).toEqual([
      { type: "released", session: "s1" },
      { type: "hello", version: 1, sessions: [] },
    ]);
  });
});
